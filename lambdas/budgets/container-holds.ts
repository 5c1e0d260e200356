import { spendAttribute, type HoldRef, type LedgerRef, type SpendEntry } from './budget-ledgers';
import type { SpendScope } from './layers';
import { periodAt, type BudgetWindow } from './periods';
import { atMost, minus } from '../usd';

/**
 * What one container keeps of its spending holds (budget-gate.ts): the leases of each ledger,
 * grouped by scope into generations, and refusals remembered.
 */

/** What this container holds of one ledger: granted to it, reserved by its requests in flight, spent by those that ended. */
export interface Lease {
  readonly scope: SpendScope;
  readonly ref: LedgerRef;
  /** The cap it was last granted under: a raised cap keeps the lease, and is this from its next grant. */
  limit: string;
  granted: string;
  reserved: string;
  spent: string;
}

/** One scope's holds in this container: granted together, in one bucket, each ledger's lease in it. */
export interface Generation {
  readonly hold: HoldRef;
  readonly usableUntil: number;
  readonly leases: Map<string, Lease>;
}

/** One scope's holds in this container over time: the current generation, its renewal, and what sizes the next. */
export interface ScopeHolds {
  current?: Generation;
  renewing?: Promise<void>;
  /** What the last generation's leases used (spent and reserved), by ledger: the next hold's size. */
  used: Map<string, string>;
  /** The estimates of this container's requests waiting for room in the scope: no hold is smaller. */
  demand: string;
}

/** A ledger's refusal, remembered: until when, at which cap, and the room it had. */
export interface Refusal {
  until: number;
  limit: string;
  room: string;
}

/** What a lease has left for new requests. */
export function roomIn(lease: Lease): string {
  return minus(minus(lease.granted, lease.reserved), lease.spent);
}

/** One request's spend as writes: one per scope and hold, each naming every ledger of the scope it counts in. */
export function spendEntries(parts: ReadonlyArray<{ scope: SpendScope; lease: Lease; hold: HoldRef }>, cost: string, shards: Readonly<Record<SpendScope['kind'], number>>): SpendEntry[] {
  const entries = new Map<string, SpendEntry & { amounts: Map<string, string> }>();
  for (const { scope, lease, hold } of parts) {
    const key = `${scopeKey(scope)}|${hold.bucket}|${hold.epoch}`;
    let entry = entries.get(key);
    if (!entry) entries.set(key, (entry = { scope, hold, shard: shards[scope.kind], amounts: new Map() }));
    entry.amounts.set(spendAttribute(lease.ref), cost);
  }
  return [...entries.values()];
}

/** A ledger and period as one map key. */
export const refKey = (ref: LedgerRef) => `${ref.ledger}|${ref.period}`;
/** A scope as one map key. */
export const scopeKey = (scope: SpendScope) => (scope.kind === 'key' ? `K#${scope.keyHash}` : `W#${scope.organizationId}#${scope.workspaceId}`);
/** The period id a lease's window has at `at`: a lease of an earlier period is not carried over. */
export function periodOfRef(ref: LedgerRef, at: Date): string {
  const window: BudgetWindow = ref.period === 'all' ? 'all' : ref.period.startsWith('d') ? 'day' : ref.period.startsWith('w') ? 'week' : 'month';
  return periodAt(window, at).id;
}

/** A lease granted under `limit` or a lower cap: everything it holds fits `limit`. */
export function withinCap(lease: Lease, limit: string): boolean {
  return atMost(lease.limit, limit);
}
