import type { HoldRef } from './ledgers';
import type { Hold, SpendChange } from './holds';
import type { SpendScope } from './limits';
import { ZERO, compare, minus, negate, plus } from '../usd';

/**
 * A request's reservation on every limit (docs/limits.md, "Glossary"). `writeAhead` adds its
 * estimate to its scopes' spend items before a provider is asked, so a request whose function
 * dies before it ends is charged its estimate when its holds are folded, and counts as in flight
 * (lambdas/spending/in-flight.ts). `charge`, once its usage is recorded, replaces the reservation
 * by what the request cost (on the spend items, the difference from what was written ahead) and
 * takes it out of flight; `keep` leaves its estimate charged and in flight (a completion whose usage
 * was not recorded: the rollup records it at that); `release` gives it back uncharged, spend
 * written ahead included. Each does nothing once the request is charged, kept or released.
 */
export interface Reservation {
  /** The estimate reserved, USD. */
  readonly estimate: string;
  writeAhead(): Promise<void>;
  charge(cost: string): Promise<void>;
  keep(): void;
  release(): Promise<void>;
}

/** The reservation of a request that costs nothing, or meets no limit. */
export const NOTHING_RESERVED: Reservation = Object.freeze({ estimate: ZERO, writeAhead: async () => undefined, charge: async () => undefined, keep: () => undefined, release: async () => undefined });

/**
 * Sets `estimate` aside in each hold; the reservation charges or releases it once, writing to
 * the spend items with `spend`. What was written ahead is `none` until `writeAhead` runs, then
 * `written`, or `unknown` while its write is on its way and once it failed (it may have landed):
 * a charge or release waits for the write, and an unknown write-ahead is never taken back, only
 * added to.
 */
export function setAside(parts: ReadonlyArray<{ scope: SpendScope; hold: Hold; ref: HoldRef }>, estimate: string, spend: (change: SpendChange) => Promise<void>): Reservation {
  for (const { hold } of parts) hold.reserved = plus(hold.reserved, estimate);
  let done = false;
  let ahead: 'none' | 'written' | 'unknown' = 'none';
  // The write ahead on its way: a release or charge meanwhile waits for it, so it takes back what landed.
  let writing: Promise<void> | undefined;
  const finish = (cost: string | undefined) => {
    if (done) return false;
    done = true;
    for (const { hold } of parts) {
      hold.reserved = minus(hold.reserved, estimate);
      if (cost !== undefined) hold.charged = plus(hold.charged, cost);
    }
    return true;
  };
  const write = async (amount: string, flight: string) => {
    if (compare(amount, ZERO) !== 0 || compare(flight, ZERO) !== 0) await spend({ amount, flight });
  };
  return {
    estimate,
    writeAhead: async () => {
      if (done || ahead !== 'none') return;
      ahead = 'unknown';
      writing = write(estimate, estimate).then(() => void (ahead = 'written'));
      await writing;
    },
    release: async () => {
      if (!finish(undefined)) return;
      await writing?.catch(() => undefined);
      if (ahead === 'written') await write(negate(estimate), negate(estimate));
    },
    keep: () => {
      finish(estimate);
    },
    charge: async (cost) => {
      // Counted here first: were the write to fail, this container still knows what was charged.
      if (!finish(cost)) return;
      await writing?.catch(() => undefined);
      await (ahead === 'written' ? write(minus(cost, estimate), negate(estimate)) : write(cost, ZERO));
    },
  };
}
