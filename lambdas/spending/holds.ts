import { FLIGHT_ATTRIBUTE, TOTAL_ATTRIBUTE, spendAttribute, type HoldRef, type LedgerRef, type SpendEntry } from './ledgers';
import type { SpendingLimit, SpendScope } from './limits';
import type { SpendWindow } from './periods';
import { ZERO, atMost, compare, minus } from '../usd';

/**
 * What one container keeps of its holds (spending-gate.ts; the words are docs/limits.md's
 * "Glossary"): the hold it has of each ledger, grouped by scope into hold sets, and refusals
 * remembered.
 */

/** What this container holds of one ledger: granted to it, reserved by its requests in flight, charged to those that ended. */
export interface Hold {
  readonly scope: SpendScope;
  readonly ref: LedgerRef;
  /** The window the ledger's period is of: a hold of an earlier period is not carried into a new hold set. */
  readonly window: SpendWindow;
  /** The limit's amount (USD) it was last granted under: a raised limit keeps the hold, and is this from its next grant. */
  limitUsd: string;
  granted: string;
  reserved: string;
  charged: string;
}

/** One scope's holds in this container granted in one bucket: each ledger's hold in it. */
export interface HoldSet {
  readonly hold: HoldRef;
  readonly usableUntil: number;
  readonly holds: Map<string, Hold>;
}

/** One scope's holds in this container over time: the current hold set, its renewal, and what sizes the next. */
export interface ScopeHolds {
  current?: HoldSet;
  renewing?: Promise<void>;
  /** What the last hold set's holds used (charged and reserved), by ledger: the next hold's size. */
  used: Map<string, string>;
  /** The estimates of this container's requests waiting for room in the scope: no hold is smaller. */
  demand: string;
}

/**
 * One ledger's grant into a hold set, as a renewal asks it: the ledger's limit, what the request
 * asking needs (nothing for a ledger that only follows its scope into the new set), the scope's
 * sets before and after, and what to do when the ledger has no room.
 */
export interface GrantAsk {
  readonly ref: LedgerRef;
  readonly window: SpendWindow;
  readonly scope: SpendScope;
  /** The limit's amount, USD, the hold is granted under. */
  readonly limitUsd: string;
  readonly estimate: string;
  readonly previous: HoldSet | undefined;
  /** The set the hold joins: `previous` itself when the grant grows the current set. */
  readonly into: HoldSet;
  readonly holds: ScopeHolds;
  readonly at: Date;
  /**
   * `refuse`: the limit's 402 when even the estimate does not fit, a 429 when the ledger is busy,
   * and a ledger not started yet is started at what the scope spent; `skip`: false for all three.
   */
  readonly whenShort: { refuse: SpendingLimit } | 'skip';
  /** Asked through the holder's branch: the fleet may be meeting the ledger together (lambdas/spending/herds.ts). */
  readonly branched?: boolean;
}

/** A ledger's refusal, remembered: until when, under which amount of the limit, and the room it had. */
export interface Refusal {
  until: number;
  limitUsd: string;
  room: string;
}

/** What a hold has left for new reservations. */
export function roomIn(hold: Hold): string {
  return minus(minus(hold.granted, hold.reserved), hold.charged);
}

/** What one write of a request adds: to its ledgers' sums and `total`, and to `flight`. */
export interface SpendChange {
  amount: string;
  flight: string;
}

/**
 * One request's write as spend entries: one per scope and hold, each naming every ledger of the
 * scope it counts in, with the scope's `total` and `flight` (lambdas/spending/in-flight.ts); a
 * scope of the request that none of its limits counts (`alone`) takes those two alone, in the
 * bucket the request began in.
 */
export function spendEntries(
  parts: ReadonlyArray<{ scope: SpendScope; hold: Hold; ref: HoldRef }>,
  change: SpendChange,
  shards: Readonly<Record<SpendScope['kind'], number>>,
  alone: { scopes: readonly SpendScope[]; hold: HoldRef },
): SpendEntry[] {
  const entries = new Map<string, SpendEntry & { amounts: Map<string, string> }>();
  const entryOf = (scope: SpendScope, ref: HoldRef) => {
    const key = `${scopeKey(scope)}|${ref.bucket}|${ref.epoch}`;
    let entry = entries.get(key);
    if (!entry) entries.set(key, (entry = { scope, hold: ref, shard: shards[scope.kind], amounts: scopeSums(change) }));
    return entry;
  };
  for (const { scope, hold, ref } of parts) entryOf(scope, ref).amounts.set(spendAttribute(hold.ref), change.amount);
  const counted = new Set(parts.map(({ scope }) => scopeKey(scope)));
  for (const scope of alone.scopes) if (!counted.has(scopeKey(scope))) entryOf(scope, alone.hold);
  return [...entries.values()];
}

/** A scope's own sums in a write: `total` and `flight`, each when it changes. */
function scopeSums({ amount, flight }: SpendChange): Map<string, string> {
  const sums = new Map<string, string>();
  if (compare(amount, ZERO) !== 0) sums.set(TOTAL_ATTRIBUTE, amount);
  if (compare(flight, ZERO) !== 0) sums.set(FLIGHT_ATTRIBUTE, flight);
  return sums;
}

/** A ledger and period as one map key. */
export const refKey = (ref: LedgerRef) => `${ref.ledger}|${ref.period}`;
/** A scope as one map key. */
export const scopeKey = (scope: SpendScope) => (scope.kind === 'key' ? `K#${scope.keyHash}` : `W#${scope.organizationId}#${scope.workspaceId}`);

/** A hold granted under `limitUsd` or a lower amount: everything it holds fits `limitUsd`. */
export function grantedWithin(hold: Hold, limitUsd: string): boolean {
  return atMost(hold.limitUsd, limitUsd);
}
