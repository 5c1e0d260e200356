import type { RateCounterStore } from '../../lambdas/oauth/exchange-rate-limit';

/** The counters in process memory, for tests and the benchmark. */
export class MemoryRateCounterStore implements RateCounterStore {
  private readonly counters = new Map<string, { count: number; expiresAt: number }>();
  /** When expired counters are next forgotten, as the table's TTL forgets them. */
  private nextSweep = 0;

  async incrementBelow(counterKey: string, limit: number, expiresAt: number, now: Date): Promise<boolean> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    if (nowSeconds >= this.nextSweep) {
      for (const [key, counter] of this.counters) if (counter.expiresAt <= nowSeconds) this.counters.delete(key);
      this.nextSweep = nowSeconds + 60;
    }
    const current = this.counters.get(counterKey);
    const count = current && current.expiresAt > nowSeconds ? current.count : 0;
    if (count >= limit) return false;
    this.counters.set(counterKey, { count: count + 1, expiresAt });
    return true;
  }
}
