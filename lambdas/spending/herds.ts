import { refKey } from './holds';
import type { LedgerRef } from './ledgers';
import type { SpendingLimit } from './limits';

/**
 * How long a ledger is asked through branches (lambdas/aws/dynamo-ledger-branches.ts) after its
 * limit began to count (first set, its interval changed, a guardrail assigned) or this container
 * saw the fleet meet it together: every container serving the scope asks it for a hold at once
 * then, and again as those holds run out. Two holds' lives: by then the jitter of the holds taken
 * meanwhile ({@link HERD_HOLD_JITTER}) has spread the renewals.
 */
export const BRANCHED_SECONDS = 600;
/** A hold taken through a branch is used for this share less of its life, at random, so a fleet that met a ledger together does not renew together. */
export const HERD_HOLD_JITTER = 0.5;

/**
 * What one container knows of the moments its fleet meets a ledger together: a limit young
 * enough that every container is still taking its first holds, and the moments this container
 * saw that the others will ask the ledger with it.
 */
export class HerdMemory {
  /** Ledgers the fleet meets together, by ledger and period: until when they are asked through branches. */
  private readonly met = new Map<string, number>();

  /** Whether the ledger is asked through branches now. */
  branched(limit: Pick<SpendingLimit, 'since'>, ref: LedgerRef, now: number): boolean {
    const since = Date.parse(limit.since);
    return (Number.isFinite(since) && now - since < BRANCHED_SECONDS * 1000) || (this.met.get(refKey(ref)) ?? 0) > now;
  }

  /**
   * The fleet will ask the ledger together: its amount was lowered under the holds out (every
   * container holding it asks again), it refused (a fleet refused together reads it again within
   * a minute, and asks once room comes back), or it was past its throughput.
   */
  together(ref: LedgerRef, now: number): void {
    if (this.met.size > 1000) this.met.clear();
    this.met.set(refKey(ref), now + BRANCHED_SECONDS * 1000);
  }
}
