import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError } from '../accounts/account-store';
import { conditionalDelete, isConditionalCheckFailed } from './dynamo-client';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/**
 * Item access to one table of the single-table layout (`pk`, `sk`, the `gsi1pk`/`gsi1sk`
 * listing index): create without overwriting, consistent reads, prefix and index listings,
 * conditional updates and deletes. Records come back without their key attributes.
 */
export class DynamoItems {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Writes a new item; one that exists already is an {@link AlreadyExistsError} naming `what`. */
  async create(item: Record<string, unknown>, what: string): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new AlreadyExistsError(what);
      throw error;
    }
  }

  async get<T>(pk: string, sk: string): Promise<T | undefined> {
    // Strongly consistent: a key disabled a moment ago must be refused on the next request.
    const result = await this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return result.Item ? strip<T>(result.Item) : undefined;
  }

  async queryPrefix<T>(pk: string, prefix: string): Promise<T[]> {
    return this.queryAll<T>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      ConsistentRead: true,
    });
  }

  /**
   * A listing through the index: the index says which items belong to it, the items
   * themselves what they hold (strongly consistent). An index entry is a second copy
   * written apart from its item, and either write can be lost on its own (a crash between
   * them in the embedded store, replication lag in DynamoDB): a listing built from the
   * copies could show a key that no longer exists, and so could not be deleted, or a
   * state the key does not have. Entries whose item is gone are left out.
   */
  async queryIndex<T>(gsi1pk: string): Promise<T[]> {
    const entries = await this.queryAllRaw({
      IndexName: BY_ORGANIZATION_INDEX,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': gsi1pk },
      ProjectionExpression: 'pk, sk',
    });
    const keys = entries.map((entry) => ({ pk: entry.pk as string, sk: entry.sk as string }));
    const items = await this.batchGet(keys);
    return keys.flatMap((key) => {
      const item = items.get(itemId(key.pk, key.sk));
      return item && item.gsi1pk === gsi1pk ? [strip<T>(item)] : [];
    });
  }

  /** Items by key, read consistently, 100 per call (BatchGetItem's limit), retrying unprocessed keys. */
  async batchGet(keys: readonly { pk: string; sk: string }[]): Promise<Map<string, Record<string, unknown>>> {
    const found = new Map<string, Record<string, unknown>>();
    const unique = [...new Map(keys.map((key) => [itemId(key.pk, key.sk), key])).values()];
    for (let start = 0; start < unique.length; start += 100) {
      let pending: Record<string, unknown>[] = unique.slice(start, start + 100);
      while (pending.length > 0) {
        const result = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) found.set(itemId(item.pk as string, item.sk as string), item);
        pending = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return found;
  }

  async queryAll<T>(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<T[]> {
    return (await this.queryAllRaw(input)).map((item) => strip<T>(item));
  }

  async queryAllRaw(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(new QueryCommand({ ...input, TableName: this.tableName, ExclusiveStartKey: startKey }));
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  async update<T>(pk: string, sk: string, patch: Record<string, unknown>): Promise<T | undefined> {
    const item = await this.updateItem(pk, sk, patch, false);
    return item ? strip<T>(item) : undefined;
  }

  /**
   * The same, counting the item's `revision` up in the same write; returns the whole item as
   * it now is, revision included, for its read copies (dynamo-read-replicas.ts).
   */
  async updateRevised(pk: string, sk: string, patch: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    return this.updateItem(pk, sk, patch, true);
  }

  private async updateItem(pk: string, sk: string, patch: Record<string, unknown>, revised: boolean): Promise<Record<string, unknown> | undefined> {
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = revised ? { ':one': 1 } : {};
    const sets = entries.map(([field, value], i) => {
      names[`#f${i}`] = field;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    });
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk },
          UpdateExpression: `SET ${sets.join(', ')}${revised ? ' ADD revision :one' : ''}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  /**
   * Replaces an existing item only while its `version` is `expectedVersion` (undefined: an
   * item written before it had one): false when the item is gone or another write changed it.
   */
  async replaceAtVersion(item: Record<string, unknown>, expectedVersion: number | undefined): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: `attribute_exists(pk) AND ${expectedVersion === undefined ? 'attribute_not_exists(#version)' : '#version = :expected'}`,
          ExpressionAttributeNames: { '#version': 'version' },
          ...(expectedVersion === undefined ? {} : { ExpressionAttributeValues: { ':expected': expectedVersion } }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async delete(pk: string, sk: string): Promise<boolean> {
    return conditionalDelete(this.client, { TableName: this.tableName, Key: { pk, sk }, ConditionExpression: 'attribute_exists(pk)' });
  }
}

/** One key of a batch, as text. */
export const itemId = (pk: string, sk: string) => `${pk}\n${sk}`;

/** A record without the item's key and index attributes, nor the revision its read copies are written at (dynamo-read-replicas.ts). */
export function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, revision: _revision, ...rest } = item;
  return rest as T;
}
