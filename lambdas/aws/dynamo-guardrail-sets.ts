import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SetChange } from '../accounts/account-store';
import { DynamoItems, conditionalWrite } from './dynamo-items';
import type { ItemKey } from './dynamo-read-replicas';

/**
 * `guardrailIds` of keys and workspaces: a DynamoDB string set changed only with `ADD` and
 * `DELETE` of one element, never rewritten whole. DynamoDB has no empty sets, so an item
 * without guardrails has no such attribute. Items written before sets were used hold a list;
 * the first change converts it. Each assignment also records its time in an attribute of its
 * own, `assignedAt:<guardrail id>`, set and removed in the same write as the id.
 */
export class GuardrailSets {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /**
   * One conditional `ADD` or `DELETE` of a single element. The condition makes the write
   * happen only when it changes the set, so `changed` is exact under concurrency; when it
   * fails, one consistent read says why (item gone, no change needed, or a legacy list).
   * A change counts the item's `revision` up and returns the item as it now is, for its copies.
   */
  async change(key: ItemKey, guardrailId: string, updatedAt: string, change: 'add' | 'remove'): Promise<{ outcome: SetChange; item?: Record<string, unknown> }> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const changed = await conditionalWrite(
        this.client,
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression:
            change === 'add'
              ? 'ADD guardrailIds :ids, revision :one SET updatedAt = :now, #assignedAt = :now'
              : 'DELETE guardrailIds :ids ADD revision :one SET updatedAt = :now REMOVE #assignedAt',
          ConditionExpression:
            change === 'add'
              ? 'attribute_exists(pk) AND (attribute_not_exists(guardrailIds) OR (attribute_type(guardrailIds, :set) AND NOT contains(guardrailIds, :id)))'
              : 'attribute_exists(pk) AND attribute_type(guardrailIds, :set) AND contains(guardrailIds, :id)',
          ExpressionAttributeNames: { '#assignedAt': `${ASSIGNED_AT}${guardrailId}` },
          ExpressionAttributeValues: { ':ids': new Set([guardrailId]), ':id': guardrailId, ':set': 'SS', ':now': updatedAt, ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (changed) return { outcome: 'changed', item: changed.Attributes! };
      const item = await this.items.get<{ guardrailIds?: unknown }>(key.pk, key.sk);
      if (!item) return { outcome: 'missing' };
      if (Array.isArray(item.guardrailIds)) {
        await this.convertLegacyList(key, item.guardrailIds as string[]);
        continue;
      }
      const present = item.guardrailIds instanceof Set && item.guardrailIds.has(guardrailId);
      if (present === (change === 'add')) return { outcome: 'unchanged' };
      // Changed by someone else between the write and the read: try again.
    }
    throw new Error(`guardrail set of ${key.pk} ${key.sk} kept changing under ${change}`);
  }

  /**
   * Items written before guardrail ids were a set hold a list. Converted once, on the
   * first change; the condition on the type makes exactly one converter win.
   */
  private async convertLegacyList(key: ItemKey, list: readonly string[]): Promise<void> {
    const unique = [...new Set(list)];
    await conditionalWrite(
      this.client,
      new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: unique.length > 0 ? 'SET guardrailIds = :ids' : 'REMOVE guardrailIds',
        ConditionExpression: 'attribute_type(guardrailIds, :list)',
        ExpressionAttributeValues: { ':list': 'L', ...(unique.length > 0 ? { ':ids': new Set(unique) } : {}) },
      }),
    );
  }
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

