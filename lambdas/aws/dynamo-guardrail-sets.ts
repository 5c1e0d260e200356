import type { SetChange } from '../accounts/account-store';
import { GUARDRAIL_LIMITS } from '../accounts/types';

/**
 * `guardrailIds` of keys and workspaces: a DynamoDB string set. DynamoDB has no empty sets, so an
 * item without guardrails has no such attribute; items written before sets were used hold a list,
 * which their first change turns into a set. Each assignment records its time in an attribute of
 * its own, `assignedAt:<guardrail id>`, set and removed with the id.
 *
 * The item changes in one transaction with its copies, under the revision it was read at
 * (dynamo-read-replicas.ts), so concurrent assignments cannot undo each other.
 */
export function withGuardrailChange(
  item: Record<string, unknown>,
  guardrailId: string,
  updatedAt: string,
  change: 'add' | 'remove',
): { outcome: Exclude<SetChange, 'missing'>; next?: Record<string, unknown> } {
  const ids = new Set<string>((item.guardrailIds as Iterable<string> | undefined) ?? []);
  const legacy = Array.isArray(item.guardrailIds);
  if (ids.has(guardrailId) === (change === 'add') && !legacy) return { outcome: 'unchanged' };
  const wasPresent = ids.has(guardrailId);
  if (change === 'add' && !wasPresent && ids.size >= GUARDRAIL_LIMITS.perHolder) return { outcome: 'full' };
  const { guardrailIds: _ids, [`${ASSIGNED_AT}${guardrailId}`]: _assignedAt, ...rest } = item;
  if (change === 'add') ids.add(guardrailId);
  else ids.delete(guardrailId);
  const assignedAt = change === 'add' ? { [`${ASSIGNED_AT}${guardrailId}`]: wasPresent ? (_assignedAt ?? updatedAt) : updatedAt } : {};
  const next = { ...rest, ...(ids.size > 0 ? { guardrailIds: ids } : {}), ...assignedAt, updatedAt };
  return { outcome: wasPresent === (change === 'add') ? 'unchanged' : 'changed', next };
}

/** The item form: a string set, or no attribute at all (DynamoDB has no empty sets). */
export function withGuardrailSet<T extends { guardrailIds: string[] }>(record: T): Omit<T, 'guardrailIds'> & { guardrailIds?: Set<string> } {
  const { guardrailIds, ...rest } = record;
  return guardrailIds.length > 0 ? { ...rest, guardrailIds: new Set(guardrailIds) } : rest;
}

/** The attribute prefix of an assignment's time on a key or workspace item. */
const ASSIGNED_AT = 'assignedAt:';

/**
 * The record form: a sorted list, whichever form (set, legacy list, absent) the item has, and
 * the assignment times gathered into `guardrailAssignedAt`.
 */
export function withGuardrailList<T extends { guardrailIds: string[] }>(record: T | undefined): T | undefined {
  if (!record) return undefined;
  const assignedAt: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    if (name.startsWith(ASSIGNED_AT)) assignedAt[name.slice(ASSIGNED_AT.length)] = String(value);
    else rest[name] = value;
  }
  const stored = (record as { guardrailIds?: Iterable<string> }).guardrailIds;
  return { ...(rest as T), guardrailIds: [...new Set(stored ?? [])].sort(), ...(Object.keys(assignedAt).length > 0 ? { guardrailAssignedAt: assignedAt } : {}) };
}

/** When the item was assigned the guardrail, as its attribute records it. */
export function assignedAtOf(item: Record<string, unknown>, guardrailId: string): string | undefined {
  const at = item[`${ASSIGNED_AT}${guardrailId}`];
  return typeof at === 'string' ? at : undefined;
}
