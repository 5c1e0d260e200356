/**
 * Retries an assertion until it passes or `timeoutMs` runs out, for effects that follow a
 * response (usage counters are written after the answer has been sent).
 */
export async function eventually<T>(assertion: () => Promise<T>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
