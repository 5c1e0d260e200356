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
  /** Whether the counter is known to be at its limit without asking the table (a container's memory). */
  knownFull?(counterKey: string, now: Date): boolean;
}

/** Counters a container remembers as full at once, at most; older ones are forgotten first. */
const REMEMBERED_COUNTERS = 10_000;

/**
 * A container's memory of the counters it found at their limit: until such a counter's window
 * ends, a hit is refused here, without a write. One address sending 10,000 exchanges a second
 * (a NAT, until the firewall's rate rule blocks it) then costs each container one refused write
 * a window, not one per request, and the counter item stays within its partition's writes.
 * Below the limit every hit is counted by the store, so the limit stays exact.
 */
export class RememberingRateCounters implements RateCounterStore {
  private readonly full = new Map<string, number>();

  constructor(private readonly store: RateCounterStore) {}

  knownFull(counterKey: string, now: Date): boolean {
    const until = this.full.get(counterKey);
    return until !== undefined && until > now.getTime() / 1000;
  }

  async incrementBelow(counterKey: string, limit: number, expiresAt: number, now: Date): Promise<boolean> {
    const nowSeconds = now.getTime() / 1000;
    if (this.knownFull(counterKey, now)) return false;
    const counted = await this.store.incrementBelow(counterKey, limit, expiresAt, now);
    if (!counted) this.remember(counterKey, expiresAt, nowSeconds);
    return counted;
  }

  private remember(counterKey: string, until: number, nowSeconds: number): void {
    this.full.delete(counterKey);
    if (this.full.size >= REMEMBERED_COUNTERS) {
      for (const [key, ends] of this.full) if (ends <= nowSeconds) this.full.delete(key);
      // Still full of live windows: the oldest entry goes (a Map iterates in insertion order).
      if (this.full.size >= REMEMBERED_COUNTERS) this.full.delete(this.full.keys().next().value!);
    }
    this.full.set(counterKey, until);
  }
}

/** The token endpoint's per-address limit: how many exchanges an address may ask for in each window. */
export interface ExchangeRateLimit {
  /** Exchanges one address may request per window. */
  readonly limit: number;
  readonly windowSeconds: number;
}

/** Whether a request fits its address's limit; when not, how long until its window ends. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * docs/reference.md#oauth-errors, docs/reference.md#limits: the per-address cap of the token endpoint, a fixed window per address.
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
  const { counterKey, windowEnd, nowSeconds } = windowOf(sourceIp, now, windowSeconds);
  const allowed = await store.incrementBelow(counterKey, limit, windowEnd, now);
  if (allowed) return { allowed: true };
  return refusedUntil(windowEnd, nowSeconds);
}

/**
 * The refusal the store already knows of, with no call: an address this container found past
 * its limit in the current window. The caller refuses before it reads anything else (the
 * policy read beside the counter would otherwise take every request of a flood).
 */
export function knownRefusal(store: RateCounterStore, sourceIp: string, now: Date, { windowSeconds }: ExchangeRateLimit): RateDecision | undefined {
  const { counterKey, windowEnd, nowSeconds } = windowOf(sourceIp, now, windowSeconds);
  return store.knownFull?.(counterKey, now) ? refusedUntil(windowEnd, nowSeconds) : undefined;
}

function windowOf(sourceIp: string, now: Date, windowSeconds: number) {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const windowStart = nowSeconds - (nowSeconds % windowSeconds);
  return { counterKey: `exchange#${rateAddress(sourceIp)}#${windowStart}`, windowEnd: windowStart + windowSeconds, nowSeconds };
}

/** RFC 9110 §10.2.3: delay-seconds, a non-negative integer; at least 1 so clients wait. */
function refusedUntil(windowEnd: number, nowSeconds: number): RateDecision {
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
