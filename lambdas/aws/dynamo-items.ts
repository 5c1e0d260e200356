import { randomUUID } from 'node:crypto';
import { paginateScan as paginateAttributeScan, type AttributeValue, type DynamoDBClient, type ScanCommandInput as AttributeScanInput } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  paginateQuery,
  paginateScan,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  type ScanCommandInput,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { AlreadyExistsError } from '../accounts/account-store';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/*
 * The one item access of the DynamoDB adapters: every listing follows DynamoDB's pages through
 * the SDK's paginators ({@link queryAll}, {@link scanAll}), or, for a listing handed out page by
 * page with a token, through {@link queryPage}; every write under a condition goes through
 * {@link conditionalWrite}; every record leaves the table through {@link strip}. No other module
 * follows a page's last key or reads DynamoDB's condition failure (test/lambdas/architecture.test.ts).
 */

/** A query or scan without its start key: the paginators set it. */
export type QueryInput = Omit<QueryCommandInput, 'ExclusiveStartKey'>;
export type ScanInput = Omit<ScanCommandInput, 'ExclusiveStartKey'>;

/** Every item a query matches, page after page (`paginateQuery`). */
export function queryAll(client: DynamoDBDocumentClient, input: QueryInput): Promise<Record<string, unknown>[]> {
  // A copy: the paginator writes each page's start key into the input it is given.
  return collect(paginateQuery({ client }, { ...input }));
}

/** Every item a scan finds, page after page (`paginateScan`). */
export function scanAll(client: DynamoDBDocumentClient, input: ScanInput): Promise<Record<string, unknown>[]> {
  return collect(paginateScan({ client }, { ...input }));
}

/** A scan's items a page at a time (`paginateScan`), for a table too large to hold at once. */
export async function* scanPages(client: DynamoDBDocumentClient, input: ScanInput): AsyncGenerator<Record<string, unknown>[]> {
  for await (const page of paginateScan({ client }, { ...input })) yield page.Items ?? [];
}

/**
 * Every item a scan finds as DynamoDB's attribute values, for a tool that writes items back
 * exactly as they are (local/reconcile-indexes.ts): no number or set goes through JavaScript.
 */
export function scanAllAttributes(client: DynamoDBClient, input: Omit<AttributeScanInput, 'ExclusiveStartKey'>): Promise<Record<string, AttributeValue>[]> {
  return collect(paginateAttributeScan({ client }, { ...input }));
}

/** Where a page of a listing starts and how many items it holds at most. */
export interface PageRequest {
  limit: number;
  /** The key a previous page ended at (its {@link Page.nextKey}); none for the first page. */
  startKey?: Record<string, unknown>;
}

export interface Page {
  items: Record<string, unknown>[];
  /** The key to go on from; undefined when the listing has no more items. */
  nextKey?: Record<string, unknown>;
}

/**
 * One page of a listing handed out with a page token: up to `limit` items from `startKey` on.
 * A filter applies after DynamoDB's `Limit`, so a page it leaves short is topped up from the
 * next one, each read asking only for the items still missing.
 */
export async function queryPage(client: DynamoDBDocumentClient, input: Omit<QueryInput, 'Limit'>, { limit, startKey }: PageRequest): Promise<Page> {
  const items: Record<string, unknown>[] = [];
  let nextKey = startKey;
  do {
    const page = await client.send(new QueryCommand({ ...input, Limit: limit - items.length, ExclusiveStartKey: nextKey }));
    items.push(...(page.Items ?? []));
    nextKey = page.LastEvaluatedKey;
  } while (nextKey && items.length < limit);
  return { items, nextKey };
}

async function collect<T>(pages: AsyncIterable<{ Items?: T[] }>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages) for (const item of page.Items ?? []) items.push(item);
  return items;
}

/** One request of a BatchWriteItem: a put of an item, or a delete by key. */
export type BatchWrite = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

/**
 * Writes every request, 25 a BatchWriteItem (its limit), sending what DynamoDB left
 * unprocessed again after a growing pause; fails once some stay unprocessed 8 times.
 */
export async function batchWriteAll(client: DynamoDBDocumentClient, tableName: string, requests: readonly BatchWrite[], pause = defaultSleep): Promise<void> {
  for (let start = 0; start < requests.length; start += 25) {
    let pending: readonly BatchWrite[] = requests.slice(start, start + 25);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error('DynamoDB kept items unprocessed after 8 retries');
      if (attempt > 0) await pause(Math.min(1000, 25 * 2 ** attempt));
      const result = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: [...pending] } }));
      pending = (result.UnprocessedItems?.[tableName] as BatchWrite[] | undefined) ?? [];
    }
  }
}

/** What a write under a condition that held answered: the item's attributes where it asked for them (`ReturnValues`). */
export interface Written {
  Attributes?: Record<string, unknown>;
}

/**
 * A write under a condition: its answer when it was made, undefined when the condition did not
 * hold. Other errors propagate. The caller says what a failed condition means, in its own terms
 * (a domain error, a retry, `false`), as Powertools' DynamoDB persistence layer does.
 */
export async function conditionalWrite(client: DynamoDBDocumentClient, command: PutCommand | UpdateCommand | DeleteCommand): Promise<Written | undefined> {
  try {
    return await client.send(command as UpdateCommand);
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
}

/**
 * A write under a condition that asks for the item either way (`ReturnValues`,
 * `ReturnValuesOnConditionCheckFailure`): whether it was made, and the item before it (made) or
 * as the failed condition found it (not made; undefined when there was none).
 */
export async function conditionalWriteSeeing(client: DynamoDBDocumentClient, command: UpdateCommand): Promise<{ written: boolean; item?: Record<string, unknown> }> {
  try {
    return { written: true, item: (await client.send(command)).Attributes };
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    const found = (error as { Item?: Record<string, AttributeValue> }).Item;
    return { written: false, item: found ? unmarshall(found) : undefined };
  }
}

/** True when the error is DynamoDB's answer to a failed condition expression. */
function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';
}

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
    const written = await conditionalWrite(
      this.client,
      new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
    if (!written) throw new AlreadyExistsError(what);
  }

  async get<T>(pk: string, sk: string): Promise<T | undefined> {
    // Strongly consistent: a key disabled a moment ago must be refused on the next request.
    const result = await this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return result.Item ? strip<T>(result.Item) : undefined;
  }

  /** The item as stored, key and revision included, read strongly consistently unless `consistent` is false. */
  async getItem(key: { pk: string; sk: string }, { consistent = true }: { consistent?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
    return (await this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: consistent }))).Item;
  }

  async queryPrefix<T>(pk: string, prefix: string): Promise<T[]> {
    return this.queryRecords<T>({
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
    const entries = await this.queryAll({
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

  /** Every record a query of this table matches, without key attributes. */
  async queryRecords<T>(input: Omit<QueryInput, 'TableName'>): Promise<T[]> {
    return (await this.queryAll(input)).map((item) => strip<T>(item));
  }

  /** Every item a query of this table matches, as stored. */
  queryAll(input: Omit<QueryInput, 'TableName'>): Promise<Record<string, unknown>[]> {
    return queryAll(this.client, { ...input, TableName: this.tableName });
  }
}

/** One key of a batch, as text. */
export const itemId = (pk: string, sk: string) => `${pk}\n${sk}`;

/** A record without the item's key and index attributes, nor the revision its read copies are written at (dynamo-read-replicas.ts). */
export function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, revision: _revision, ...rest } = item;
  return rest as T;
}

/** One action of a transaction, as the document client takes it. */
export type TransactionAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** DynamoDB's limit on the actions of one transaction. */
export const MAX_TRANSACTION_ACTIONS = 100;

/** How a transaction ended: written whole, or refused by the conditions of these actions, none of it written. */
export type TransactionOutcome =
  | { written: true }
  | {
      written: false;
      /** The actions whose condition failed, by index, with the item as it was where the action asked for it (`ReturnValuesOnConditionCheckFailure: ALL_OLD`) and it exists. */
      failed: { index: number; item?: Record<string, unknown> }[];
    };

/** Cancellations that say nothing about the transaction itself: another one held an item, or a partition was busy. */
const TRANSIENT_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
/** Attempts of a transaction cancelled only for transient reasons. */
const TRANSIENT_ATTEMPTS = 8;

/**
 * Writes `actions` in one TransactWriteItems: every action or none (docs/architecture.md, "One
 * change, one transaction"). One `ClientRequestToken` covers every attempt, so a call the SDK
 * sends again after losing its answer is applied once. A transaction cancelled only by another
 * one holding an item (`TransactionConflict`) or by throttling is sent again after a jittered
 * pause; one refused by a condition is answered, with which actions failed; any other refusal
 * propagates.
 */
export async function transactWrite(
  client: DynamoDBDocumentClient,
  actions: readonly TransactionAction[],
  { sleep = defaultSleep }: { sleep?: (ms: number) => Promise<void> } = {},
): Promise<TransactionOutcome> {
  if (actions.length === 0) return { written: true };
  if (actions.length > MAX_TRANSACTION_ACTIONS) throw new Error(`a transaction of ${actions.length} actions: DynamoDB takes at most ${MAX_TRANSACTION_ACTIONS}`);
  const ClientRequestToken = randomUUID();
  for (let attempt = 1; ; attempt++) {
    try {
      await client.send(new TransactWriteCommand({ TransactItems: [...actions], ClientRequestToken }));
      return { written: true };
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (!reasons) throw error;
      const failed = reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [{ index, ...(reason.Item ? { item: unmarshall(reason.Item) } : {}) }] : []));
      if (failed.length > 0) return { written: false, failed };
      const transient = reasons.every((reason) => reason.Code === 'None' || TRANSIENT_REASONS.has(reason.Code ?? ''));
      if (!transient || attempt >= TRANSIENT_ATTEMPTS) throw error;
      await sleep(backoffMs(attempt));
    }
  }
}

interface CancellationReason {
  Code?: string;
  Item?: Record<string, AttributeValue>;
}

/** The reasons of a cancelled transaction, in its actions' order; undefined for any other error. */
function cancellationReasons(error: unknown): CancellationReason[] | undefined {
  const { name, CancellationReasons } = (error ?? {}) as { name?: string; CancellationReasons?: CancellationReason[] };
  return name === 'TransactionCanceledException' && Array.isArray(CancellationReasons) ? CancellationReasons : undefined;
}

/** Full jitter over 20, 40, 80, ... ms, at most 640: room for a few dozen writers of one item. */
export function backoffMs(attempt: number): number {
  return Math.random() * 20 * 2 ** Math.min(attempt - 1, 5);
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
