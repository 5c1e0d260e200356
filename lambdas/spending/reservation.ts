import type { HoldRef } from './ledgers';
import type { Hold } from './holds';
import type { SpendScope } from './limits';
import { ZERO, compare, minus, negate, plus } from '../usd';

/**
 * A request's reservation on every limit (docs/limits.md, "Glossary"). `writeAhead` adds its
 * estimate to its scopes' spend items before a provider is asked, so a request whose function
 * dies before it ends is charged its estimate when its holds are folded. `charge` replaces the
 * reservation by what the request cost (on the spend items, the difference from what was written
 * ahead); `release` gives it back uncharged, spend written ahead included. Each does nothing once
 * the request is charged or released.
 */
export interface Reservation {
  /** The estimate reserved, USD. */
  readonly estimate: string;
  writeAhead(): Promise<void>;
  charge(cost: string): Promise<void>;
  release(): Promise<void>;
}

/** The reservation of a request that costs nothing, or meets no limit. */
export const NOTHING_RESERVED: Reservation = Object.freeze({ estimate: ZERO, writeAhead: async () => undefined, charge: async () => undefined, release: async () => undefined });

/**
 * Sets `estimate` aside in each hold; the reservation charges or releases it once, writing to
 * the spend items with `spend`. What was written ahead is `none` until `writeAhead` runs, then
 * `written`, or `unknown` when its write failed (it may have landed): an unknown write-ahead is
 * never taken back, only added to.
 */
export function setAside(parts: ReadonlyArray<{ scope: SpendScope; hold: Hold; ref: HoldRef }>, estimate: string, spend: (amount: string) => Promise<void>): Reservation {
  for (const { hold } of parts) hold.reserved = plus(hold.reserved, estimate);
  let done = false;
  let ahead: 'none' | 'written' | 'unknown' = 'none';
  const finish = (cost: string | undefined) => {
    if (done) return false;
    done = true;
    for (const { hold } of parts) {
      hold.reserved = minus(hold.reserved, estimate);
      if (cost !== undefined) hold.charged = plus(hold.charged, cost);
    }
    return true;
  };
  const write = async (amount: string) => {
    if (compare(amount, ZERO) !== 0) await spend(amount);
  };
  return {
    estimate,
    writeAhead: async () => {
      if (done || ahead !== 'none') return;
      ahead = 'unknown';
      await write(estimate);
      // eslint-disable-next-line require-atomic-updates -- set to `unknown` before the write: a release meanwhile takes nothing back, which errs toward charging.
      ahead = 'written';
    },
    release: async () => {
      if (finish(undefined) && ahead === 'written') await write(negate(estimate));
    },
    charge: async (cost) => {
      // Counted here first: were the write to fail, this container still knows what was charged.
      if (!finish(cost)) return;
      await write(ahead === 'written' ? minus(cost, estimate) : cost);
    },
  };
}
