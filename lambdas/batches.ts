/** Runs one call per item, a few at a time: many in flight, none unbounded. */
export async function inBatches<T>(items: readonly T[], run: (item: T) => Promise<unknown>, size = 16): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(run));
  }
}
