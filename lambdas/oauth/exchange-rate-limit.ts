import { isIPv6 } from 'node:net';

/**
 * One counter per source address and window, incremented atomically only while it is
 * below the limit. A store answers `false` when the counter is already at the limit.
 */
export interface RateCounterStore {
  /**
   * Adds one to `counterKey` when it holds fewer than `limit` hits, creating it when absent
   * or expired. `expiresAt` (epoch seconds) is when the counter may be forgotten.
   */
  incrementBelow(counterKey: string, limit: number, expiresAt: number, now: Date): Promise<boolean>;
}

export interface ExchangeRateLimit {
  /** Exchanges one address may request per window. */
  readonly limit: number;
  readonly windowSeconds: number;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * SPEC 7.2 and 8: the per-address cap of the token endpoint, a fixed window per address.
 * The counter key carries the window start, so a counter of a past window is never read
 * again (it expires by TTL), and concurrent requests past the limit all fail the store's
 * conditional increment: no lost update lets one through.
 */
export async function checkExchangeRate(
  store: RateCounterStore,
  sourceIp: string,
  now: Date,
  { limit, windowSeconds }: ExchangeRateLimit,
): Promise<RateDecision> {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const windowStart = nowSeconds - (nowSeconds % windowSeconds);
  const windowEnd = windowStart + windowSeconds;
  const allowed = await store.incrementBelow(`exchange#${rateAddress(sourceIp)}#${windowStart}`, limit, windowEnd, now);
  if (allowed) return { allowed: true };
  // RFC 9110 §10.2.3: delay-seconds, a non-negative integer; at least 1 so clients wait.
  return { allowed: false, retryAfterSeconds: Math.max(1, windowEnd - nowSeconds) };
}

/**
 * The address a counter is kept for. An IPv6 client usually holds a whole /64, so its
 * counter is kept per /64 prefix; an IPv4 address is its own counter.
 */
export function rateAddress(sourceIp: string): string {
  if (!isIPv6(sourceIp)) return sourceIp;
  const [head, tail] = sourceIp.toLowerCase().split('::') as [string, string | undefined];
  const headGroups = head === '' ? [] : head.split(':');
  let groups = headGroups;
  if (tail !== undefined) {
    const tailGroups = tail === '' ? [] : tail.split(':');
    // An embedded IPv4 tail (::ffff:1.2.3.4) takes two groups.
    const tailLength = tailGroups.reduce((n, group) => n + (group.includes('.') ? 2 : 1), 0);
    groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailLength).fill('0'), ...tailGroups];
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
