import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { assignmentsOf, type GuardrailIndexRepair, type GuardrailKeyEntry } from '../accounts/account-store';
import type { ApiKeyRecord } from '../accounts/types';
import { DynamoItems, type TransactionAction } from './dynamo-items';
import { apiKeyKey } from './dynamo-key-pages';
import { inBatches } from '../batches';

/** The sort key of the mark that every assignment of the organization is in its index. */
const INDEXED = 'INDEXED';

/** Backfill transactions sent at once. */
const AT_ONCE = 16;

const partitionOf = (organizationId: string) => `ORG#${organizationId}#GUARDRAILKEYS`;
const entryKey = (organizationId: string, guardrailId: string, keyHash: string) => ({ pk: partitionOf(organizationId), sk: `${guardrailId}#${keyHash}` });

/**
 * Which keys each guardrail of an organization is assigned to: `ORG#<org>#GUARDRAILKEYS` /
 * `<guardrail id>#<key hash>`, one small item per assignment, written and deleted in the
 * transaction that changes the key's guardrails (and deleted with the key), so the index and the
 * keys never disagree. Listing a guardrail's keys, or deleting a guardrail, reads its entries and
 * the keys they name, never every key of the organization.
 *
 * An organization created by an earlier release has assignments the index does not hold until
 * `ops guardrail index-keys` enters them ({@link index}); its mark (`INDEXED`) says the index is
 * whole, and until it is there readers fall back to the keys themselves.
 */
export class GuardrailKeyIndex {
  private readonly items: DynamoItems;

  constructor(
    client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /** The entry's put, in the transaction that assigns the guardrail to the key. */
  entered(organizationId: string, guardrailId: string, keyHash: string, assignedAt: string): TransactionAction {
    return { Put: { TableName: this.tableName, Item: { ...entryKey(organizationId, guardrailId, keyHash), guardrailId, keyHash, assignedAt } } };
  }

  /** The entry's put only where there is none, beside a check that the key holds the guardrail. */
  private backfilled(organizationId: string, { guardrailId, keyHash, assignedAt }: GuardrailKeyEntry): TransactionAction[] {
    const held = { TableName: this.tableName, Key: apiKeyKey(keyHash), ConditionExpression: 'contains(guardrailIds, :id)', ExpressionAttributeValues: { ':id': guardrailId } };
    const item = { ...entryKey(organizationId, guardrailId, keyHash), guardrailId, keyHash, assignedAt };
    return [{ ConditionCheck: held }, { Put: { TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } }];
  }

  /** The entry's delete, in the transaction that takes the guardrail off the key or deletes the key. */
  removed(organizationId: string, guardrailId: string, keyHash: string): TransactionAction {
    return { Delete: { TableName: this.tableName, Key: entryKey(organizationId, guardrailId, keyHash) } };
  }

  /** The mark that the index holds every assignment of the organization: put with its creation. */
  marked(organizationId: string, at: string): TransactionAction {
    return { Put: { TableName: this.tableName, Item: { pk: partitionOf(organizationId), sk: INDEXED, indexedAt: at } } };
  }

  /**
   * The assignments of one guardrail, or of every guardrail, read strongly consistently; undefined
   * while the organization is not marked (an earlier release's, not yet indexed).
   */
  async list(organizationId: string, guardrailId?: string): Promise<GuardrailKeyEntry[] | undefined> {
    const pk = partitionOf(organizationId);
    const [mark, entries] = await Promise.all([
      this.items.getItem({ pk, sk: INDEXED }),
      guardrailId === undefined
        ? this.items.queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true })
        : this.items.queryAll({ KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)', ExpressionAttributeValues: { ':pk': pk, ':prefix': `${guardrailId}#` }, ConsistentRead: true }),
    ]);
    if (!mark) return undefined;
    return entries.filter((entry) => entry.sk !== INDEXED).map(({ guardrailId: id, keyHash, assignedAt }) => ({ guardrailId: String(id), keyHash: String(keyHash), assignedAt: String(assignedAt) }));
  }

  /**
   * Brings the index to `keys` (the organization's, as read), then marks it whole: enters each
   * assignment it lacks on condition that the key still holds the guardrail, and deletes each
   * entry no key holds on condition that its key still does not (an earlier release's change, or
   * a delete it cut short). An assignment changed meanwhile is left as its own write left it.
   */
  async index(organizationId: string, keys: readonly ApiKeyRecord[], at: string): Promise<GuardrailIndexRepair> {
    const pk = partitionOf(organizationId);
    const stored = (await this.items.queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true })).filter((entry) => entry.sk !== INDEXED);
    const entered = new Set(stored.map((entry) => String(entry.sk)));
    const held = new Set<string>();
    const missing = assignmentsOf(keys).flatMap((assignment) => {
      const { sk } = entryKey(organizationId, assignment.guardrailId, assignment.keyHash);
      held.add(sk);
      return entered.has(sk) ? [] : [this.backfilled(organizationId, assignment)];
    });
    const stale = stored.filter((entry) => !held.has(String(entry.sk))).map((entry) => this.unheld(organizationId, String(entry.guardrailId), String(entry.keyHash)));
    const repair = { entered: await this.written(missing), removed: await this.written(stale) };
    await this.items.transact([this.marked(organizationId, at)]);
    return repair;
  }

  /** The entry's delete beside a check that its key (if any) does not hold the guardrail. */
  private unheld(organizationId: string, guardrailId: string, keyHash: string): TransactionAction[] {
    const free = { TableName: this.tableName, Key: apiKeyKey(keyHash), ConditionExpression: 'NOT contains(guardrailIds, :id)', ExpressionAttributeValues: { ':id': guardrailId } };
    return [{ ConditionCheck: free }, this.removed(organizationId, guardrailId, keyHash)];
  }

  /** How many of `transactions` were written, sent {@link AT_ONCE} at a time; one refused by its conditions is left. */
  private async written(transactions: readonly TransactionAction[][]): Promise<number> {
    const outcomes: boolean[] = [];
    await inBatches(transactions, async (actions) => outcomes.push((await this.items.transact(actions)).written), AT_ONCE);
    return outcomes.filter(Boolean).length;
  }
}
