const RUNS = 15;
const MIN_RUN_MS = 50;
const WARM_UP_MS = 1_000;

/**
 * Times each row: a warm-up of each, then RUNS rounds in which every row gets one timed run
 * in turn, so the load of the shared machine falls on all rows alike. A row's figure is the
 * median of its runs.
 */
export async function medians<Row extends string>(rows: Record<Row, () => Promise<unknown> | unknown>): Promise<Record<Row, number>> {
  const entries = Object.entries(rows) as [Row, () => Promise<unknown> | unknown][];
  // Warm-up by time as well as count: the first rows measured otherwise pay for the JIT.
  for (const [, fn] of entries) {
    for (let i = 0, start = performance.now(); i < 200 || performance.now() - start < WARM_UP_MS; i++) await fn();
  }
  const perCall = new Map<Row, number[]>(entries.map(([row]) => [row, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const [row, fn] of entries) {
      let calls = 0;
      const start = performance.now();
      do {
        await fn();
        calls++;
      } while (performance.now() - start < MIN_RUN_MS);
      perCall.get(row)!.push((performance.now() - start) / calls);
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return Object.fromEntries(entries.map(([row]) => [row, median(perCall.get(row)!)])) as Record<Row, number>;
}

/** Runs `fn` with stdout writes counted and dropped: the JSON log lines and EMF records are serialized, not shown. */
export async function withDiscardedStdout<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  let written = 0;
  process.stdout.write = ((chunk: string | Uint8Array) => ((written += chunk.length), true)) as typeof process.stdout.write;
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
    if (written === 0) throw new Error('the Lambda telemetry wrote nothing');
  }
}

/** A time in ms as microseconds, padded for the table. */
export const us = (ms: number) => `${(ms * 1000).toFixed(0).padStart(7)} µs`;
/** A time per call in ms as calls per second, padded for the table. */
export const perSecond = (ms: number) => `${Math.round(1000 / ms).toLocaleString('en-US').padStart(8)}/s`;
