import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { GuardrailKeyEntry } from '../accounts/account-store';
import type { ApiKeyRecord } from '../accounts/types';
import { DynamoItems, type TransactionAction } from './dynamo-items';
import { apiKeyKey } from './dynamo-key-pages';

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
 * `ops guardrails index` enters them; its mark (`INDEXED`) says the index is whole, and until it
 * is there readers fall back to the keys themselves.
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
  private backfilled(organizationId: string, key: ApiKeyRecord, guardrailId: string, assignedAt: string): TransactionAction[] {
    const held = { TableName: this.tableName, Key: apiKeyKey(key.hash), ConditionExpression: 'contains(guardrailIds, :id)', ExpressionAttributeValues: { ':id': guardrailId } };
    const item = { ...entryKey(organizationId, guardrailId, key.hash), guardrailId, keyHash: key.hash, assignedAt };
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
   * Enters the assignments of `keys` (the organization's, as read) that the index lacks, each on
   * condition that its key still holds the guardrail, then marks the organization: an assignment
   * removed meanwhile is not entered, one made meanwhile entered itself. Returns how many entered.
   */
  async index(organizationId: string, keys: readonly ApiKeyRecord[], at: string): Promise<number> {
    const assignments = keys.flatMap((key) =>
      key.guardrailIds.map((guardrailId) => ({ key, guardrailId, assignedAt: key.guardrailAssignedAt?.[guardrailId] ?? key.updatedAt ?? key.createdAt })),
    );
    let entered = 0;
    for (let start = 0; start < assignments.length; start += AT_ONCE) {
      const outcomes = await Promise.all(
        assignments.slice(start, start + AT_ONCE).map(({ key, guardrailId, assignedAt }) => this.items.transact(this.backfilled(organizationId, key, guardrailId, assignedAt))),
      );
      entered += outcomes.filter((outcome) => outcome.written).length;
    }
    await this.items.transact([this.marked(organizationId, at)]);
    return entered;
  }
}
