import type { HeldAtChange, StoredLimit, WorkspaceBudgets } from '../accounts/stored-limits';
import type { ApiKeyRecord, Workspace } from '../accounts/types';
import { keyLimitOf, workspaceLimits, type SpendingLimit } from '../spending/limits';
import { periodAt } from '../spending/periods';
import { compare } from '../usd';
import { strip, type TransactionAction } from './dynamo-items';
import { capAction } from './dynamo-ledgers';
import { AlongRefused, type CopyKind, type ItemKey, type ReadReplicas } from './dynamo-read-replicas';

/**
 * A change of a limit's amount within its window caps its ledger in the change's own transaction
 * (docs/architecture.md, "Spending limits"): each period's item that may hold holds (the current
 * period's and, for a window that resets, the next's, which containers take ahead) gets the new
 * amount as its `cap`, and no grant asked under an older amount lands after it. The change is
 * tried first on condition that what those items have committed fits the new amount, then, when
 * one does not, regardless; the limit stored records which (`heldAtChange`), so containers keep
 * holds that fit rather than all asking the ledger again at once.
 */

/** What a change writes on its ledgers, beside the item that stores the limit, and what the limit records of it. */
interface CapChange {
  actions: TransactionAction[];
  heldAtChange?: HeldAtChange;
}

/**
 * What a change from `before` to `after` writes on the limit's ledger: nothing when the window is
 * new (a new ledger: holds of the old one count nowhere) or the amount is the same (its record
 * carried over); else the new amount on each item that may hold holds.
 */
function capChange(tableName: string, before: SpendingLimit | undefined, after: SpendingLimit | undefined, at: Date, fitting: boolean): CapChange {
  if (!before || !after || before.ledger !== after.ledger || before.window !== after.window) return { actions: [] };
  if (compare(before.amountUsd, after.amountUsd) === 0) return { actions: [], ...(before.heldAtChange ? { heldAtChange: before.heldAtChange } : {}) };
  const current = periodAt(after.window, at);
  const periods = current.resetsAt ? [current.id, periodAt(after.window, current.resetsAt).id] : [current.id];
  return {
    actions: periods.map((period) => capAction(tableName, { ledger: after.ledger, period }, after.amountUsd, fitting)),
    heldAtChange: { periods, fit: fitting },
  };
}

/** A limit with what its change recorded, and nothing older. */
function recorded<T extends { heldAtChange?: HeldAtChange }>(limit: T, heldAtChange: HeldAtChange | undefined): T {
  const { heldAtChange: _older, ...rest } = limit;
  return (heldAtChange ? { ...rest, heldAtChange } : rest) as T;
}

/**
 * What an item's change (`before` to `after`, as stored) writes on the ledgers of its limits, in
 * the ledgers' table: the item as it is written (its limits' records), and the actions beside it.
 */
type Caps = (tableName: string, before: Record<string, unknown>, after: Record<string, unknown>, at: Date, fitting: boolean) => { item: Record<string, unknown>; actions: TransactionAction[] };

/** A key item's change with its limit's caps. */
export const keyLimitCaps: Caps = (tableName, before, after, at, fitting) => {
  const limitOf = (item: Record<string, unknown>) => {
    const key = strip<ApiKeyRecord>(item);
    return key.limit ? keyLimitOf(key.hash, key.organizationId, key.limit, key.createdAt) : undefined;
  };
  const change = capChange(tableName, limitOf(before), limitOf(after), at, fitting);
  const limit = after.limit as StoredLimit | null | undefined;
  return { item: limit ? { ...after, limit: recorded(limit, change.heldAtChange) } : after, actions: change.actions };
};

/** A workspace item's change of its budgets with their caps. */
export const budgetCaps: Caps = (tableName, before, after, at, fitting) => {
  const limitsOf = (item: Record<string, unknown>) => new Map(workspaceLimits(strip<Workspace>(item)).map((limit) => [limit.interval, limit]));
  const [was, is] = [limitsOf(before), limitsOf(after)];
  const budgets: WorkspaceBudgets = { ...(after.budgets as WorkspaceBudgets | undefined) };
  const actions: TransactionAction[] = [];
  for (const [interval, limit] of is) {
    const change = capChange(tableName, was.get(interval), limit, at, fitting);
    actions.push(...change.actions);
    budgets[interval] = recorded(budgets[interval]!, change.heldAtChange);
  }
  return { item: is.size > 0 ? { ...after, budgets } : after, actions };
};

/** Runs a change that caps ledgers on condition that their holds fit the new amounts, then, when one's do not, regardless. */
async function fittingFirst<T>(change: (fitting: boolean) => Promise<T>): Promise<T> {
  try {
    return await change(true);
  } catch (error) {
    if (!(error instanceof AlongRefused)) throw error;
    return change(false);
  }
}

/**
 * One change of an item with its copies (`copies.change`), its limits' ledgers capped in the same
 * transaction where `ledgersTable` names their table: `next` computes the item as before.
 */
export function cappedChange(
  copies: ReadReplicas,
  ledgersTable: string | undefined,
  change: { key: ItemKey; kind: CopyKind; next: (current: Record<string, unknown>) => Record<string, unknown> | undefined; caps: Caps; at: Date },
): ReturnType<ReadReplicas['change']> {
  const { key, kind, next, caps, at } = change;
  if (ledgersTable === undefined) return copies.change(key, kind, next);
  return fittingFirst((fitting) => {
    const capped = (current: Record<string, unknown>) => {
      const after = next(current);
      return after && caps(ledgersTable, current, after, at, fitting);
    };
    return copies.change(key, kind, (current) => capped(current)?.item, (current) => capped(current)?.actions ?? []);
  });
}
