import { refKey } from './holds';
import type { LedgerRef } from './ledgers';
import type { SpendingLimit } from './limits';

/**
 * How long after its limit began to count (a limit first set, its interval changed, a guardrail
 * assigned) or its amount was lowered a ledger is asked through branches
 * (lambdas/aws/dynamo-ledger-branches.ts): every container serving the scope asks it for a hold
 * at once then, on its next request, and again as those holds run out. Two holds' lives: by then
 * the jitter of the holds taken meanwhile ({@link HERD_HOLD_JITTER}) has spread the renewals.
 */
export const BRANCHED_SECONDS = 600;
/** A hold taken through a branch is used for this share less of its life, at random, so a fleet that met a ledger together does not renew together. */
export const HERD_HOLD_JITTER = 0.5;

/**
 * What one container knows of the moments its fleet meets a ledger together: a limit young
 * enough that every container is still taking its first holds, and an amount this container saw
 * lowered under the holds it had.
 */
export class HerdMemory {
  /** Ledgers whose amount this container saw lowered, by ledger and period: until when they are asked through branches. */
  private readonly lowered = new Map<string, number>();

  /** Whether the ledger is asked through branches now. */
  branched(limit: Pick<SpendingLimit, 'since'>, ref: LedgerRef, now: number): boolean {
    const since = Date.parse(limit.since);
    return (Number.isFinite(since) && now - since < BRANCHED_SECONDS * 1000) || (this.lowered.get(refKey(ref)) ?? 0) > now;
  }

  /** The container held the ledger under an amount since lowered: so did every container holding it. */
  sawLowered(ref: LedgerRef, now: number): void {
    if (this.lowered.size > 1000) this.lowered.clear();
    this.lowered.set(refKey(ref), now + BRANCHED_SECONDS * 1000);
  }
}
