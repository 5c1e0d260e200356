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
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  type PutCommandInput,
  type QueryCommandInput,
  type ScanCommandInput,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { AlreadyExistsError } from '../accounts/account-store';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/*
 * The one item access of the DynamoDB adapters, and the one module that sends DynamoDB a request:
 * every listing follows DynamoDB's pages through the SDK's paginators ({@link queryAll},
 * {@link scanAll}), or, for a listing handed out page by page with a token, through
 * {@link queryPage}; single items are read and written by {@link getItem}, {@link putItem} and
 * {@link updateItem}, batches by {@link batchGetAll} and {@link batchWriteAll}; every write under a
 * condition goes through {@link conditionalWrite}; every record leaves the table through
 * {@link strip}. No other module sends a DynamoDB command, follows a page's last key or reads
 * DynamoDB's condition failure (test/lambdas/architecture.test.ts).
 */

/** A query or scan without its start key: the paginators set it. */
export type QueryInput = Omit<QueryCommandInput, 'ExclusiveStartKey'>;
/** A scan without its start key: the paginators set it. */
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

/** One page of a listing, and where the next one starts. */
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

/** An item's key: its `pk`, and its `sk` in a table that has one. */
export type ItemKey = Record<string, unknown>;

/** One item by key, as stored; strongly consistent unless `consistent` is false. */
export async function getItem(client: DynamoDBDocumentClient, tableName: string, key: ItemKey, { consistent = true }: { consistent?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
  return (await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: consistent }))).Item;
}

/** Writes `item` whole, over whatever its key held: a write no condition guards (else {@link conditionalWrite}). */
export async function putItem(client: DynamoDBDocumentClient, tableName: string, item: Record<string, unknown>): Promise<void> {
  await client.send(new PutCommand({ TableName: tableName, Item: item }));
}

/**
 * An update no condition guards (else {@link conditionalWrite}), such as a counter's `ADD`:
 * `updateItem(client, { TableName, Key, UpdateExpression: 'ADD hits :one', ExpressionAttributeValues: { ':one': 1 } })`.
 */
export async function updateItem(client: DynamoDBDocumentClient, input: Omit<UpdateCommandInput, 'ConditionExpression'>): Promise<void> {
  await client.send(new UpdateCommand(input));
}

/**
 * Every item of `keys` that exists, read 100 a BatchGetItem (its limit), strongly consistent
 * unless `consistent` is false, asking for unprocessed keys again as {@link batchWriteAll} does.
 * The keys must be distinct: BatchGetItem refuses a repeated one.
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  keys: readonly ItemKey[],
  { consistent = true, pause = defaultSleep }: { consistent?: boolean; pause?: (ms: number) => Promise<void> } = {},
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    await untilProcessed(keys.slice(start, start + 100), pause, async (pending) => {
      const result = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: consistent } } }));
      found.push(...(result.Responses?.[tableName] ?? []));
      return result.UnprocessedKeys?.[tableName]?.Keys ?? [];
    });
  }
  return found;
}

/** One request of a BatchWriteItem: a put of an item, or a delete by key. */
export type BatchWrite = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

/**
 * Writes every request, 25 a BatchWriteItem (its limit), sending what DynamoDB left
 * unprocessed again after a growing pause; fails once some stay unprocessed 8 times.
 */
export async function batchWriteAll(client: DynamoDBDocumentClient, tableName: string, requests: readonly BatchWrite[], pause = defaultSleep): Promise<void> {
  for (let start = 0; start < requests.length; start += 25) {
    await untilProcessed(requests.slice(start, start + 25), pause, async (pending) => {
      const result = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
      return (result.UnprocessedItems?.[tableName] as BatchWrite[] | undefined) ?? [];
    });
  }
}

/** Sends `pending` until DynamoDB leaves nothing unprocessed, pausing longer before each retry; fails after 8 retries. */
async function untilProcessed<T>(pending: T[], pause: (ms: number) => Promise<void>, send: (pending: T[]) => Promise<T[]>): Promise<void> {
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt > 8) throw new Error('DynamoDB kept items unprocessed after 8 retries');
    if (attempt > 0) await pause(Math.min(1000, 25 * 2 ** attempt));
    pending = await send(pending);
  }
}

/** A write under a condition, shaped as a transaction's action: `{ Put: {...} }`, `{ Update: {...} }` or `{ Delete: {...} }`. */
export type ConditionalAction = { Put: PutCommandInput } | { Update: UpdateCommandInput } | { Delete: DeleteCommandInput };

/** How a write under a condition ended. */
export interface WriteOutcome {
  written: boolean;
  /**
   * Written: what the write answered where it asked for it (`ReturnValues`). Not written: the
   * item as the failed condition found it, undefined when there was none.
   */
  item?: Record<string, unknown>;
}

/**
 * A write under a condition, e.g. `conditionalWrite(client, { Put: { TableName, Item, ConditionExpression: 'attribute_not_exists(pk)' } })`:
 * `{ written: true }`, or `{ written: false, item }` with the item the condition failed on, so the
 * caller need not read it again. Other errors propagate. The caller says what a failed condition
 * means, in its own terms (a domain error, a retry, `false`), as Powertools' DynamoDB persistence
 * layer does.
 */
export async function conditionalWrite(client: DynamoDBDocumentClient, action: ConditionalAction): Promise<WriteOutcome> {
  try {
    return { written: true, item: await send(client, action) };
  } catch (error) {
    if (!isConditionalCheckFailed(error)) throw error;
    // The document client leaves the exception's item as DynamoDB's attribute values.
    const found = (error as { Item?: Record<string, AttributeValue> }).Item;
    return { written: false, item: found ? unmarshall(found) : undefined };
  }
}

/** Sends the action, asking for the item as it was should its condition fail; answers the write's `Attributes`. */
async function send(client: DynamoDBDocumentClient, action: ConditionalAction): Promise<Record<string, unknown> | undefined> {
  const onFailure = { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } as const;
  if ('Put' in action) return (await client.send(new PutCommand({ ...action.Put, ...onFailure }))).Attributes;
  if ('Update' in action) return (await client.send(new UpdateCommand({ ...action.Update, ...onFailure }))).Attributes;
  return (await client.send(new DeleteCommand({ ...action.Delete, ...onFailure }))).Attributes;
}

/** Errors of a table or partition past its throughput, once the SDK's own retries are spent. */
const THROTTLING_ERRORS = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/** An error's name: DynamoDB's error code, as the SDK names its exceptions. */
const errorName = (error: unknown): string => (error as { name?: string } | null)?.name ?? '';

/** True when DynamoDB refused the request for throughput, not for anything in it. */
export const isThrottling = (error: unknown): boolean => THROTTLING_ERRORS.has(errorName(error));

/** True when a write met a transaction holding its item (the SDK does not retry that). */
export const isTransactionConflict = (error: unknown): boolean => errorName(error) === 'TransactionConflictException';

/** True when the error is DynamoDB's answer to a failed condition expression. */
const isConditionalCheckFailed = (error: unknown): boolean => errorName(error) === 'ConditionalCheckFailedException';

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
    const { written } = await conditionalWrite(this.client, { Put: { TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } });
    if (!written) throw new AlreadyExistsError(what);
  }

  async get<T>(pk: string, sk: string): Promise<T | undefined> {
    // Strongly consistent: a key disabled a moment ago must be refused on the next request.
    const item = await getItem(this.client, this.tableName, { pk, sk });
    return item ? strip<T>(item) : undefined;
  }

  /** The item as stored, key and revision included, read strongly consistently unless `consistent` is false. */
  getItem(key: { pk: string; sk: string }, options: { consistent?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
    return getItem(this.client, this.tableName, key, options);
  }

  async queryPrefix<T>(pk: string, prefix: string): Promise<T[]> {
    return this.queryRecords<T>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      ConsistentRead: true,
    });
  }

  /**
   * A listing through the index: the index says which items belong to it, the items what they
   * hold (strongly consistent). An index entry is written apart from its item and either write
   * can be lost alone (a crash, replication lag), so entries whose item is gone are left out.
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

  /** Items by key, read consistently ({@link batchGetAll}), by their {@link itemId}; a key given twice is read once. */
  async batchGet(keys: readonly { pk: string; sk: string }[]): Promise<Map<string, Record<string, unknown>>> {
    const unique = [...new Map(keys.map((key) => [itemId(key.pk, key.sk), key])).values()];
    const items = await batchGetAll(this.client, this.tableName, unique);
    return new Map(items.map((item) => [itemId(item.pk as string, item.sk as string), item]));
  }

  /** Every record a query of this table matches, without key attributes. */
  async queryRecords<T>(input: Omit<QueryInput, 'TableName'>): Promise<T[]> {
    return (await this.queryAll(input)).map((item) => strip<T>(item));
  }

  /** Every item a query of this table matches, as stored. */
  queryAll(input: Omit<QueryInput, 'TableName'>): Promise<Record<string, unknown>[]> {
    return queryAll(this.client, { ...input, TableName: this.tableName });
  }

  /** Writes an item whatever was there ({@link putItem}). */
  put = (item: Record<string, unknown>): Promise<void> => putItem(this.client, this.tableName, item);
  /** An update without a condition ({@link updateItem}). */
  update = (input: Omit<UpdateCommandInput, 'TableName' | 'ConditionExpression'>): Promise<void> => updateItem(this.client, { ...input, TableName: this.tableName });

  /** A write under a condition on this table ({@link conditionalWrite}): whether it was written, and the item as it was. */
  write(action: TableAction): Promise<WriteOutcome> {
    if ('Put' in action) return conditionalWrite(this.client, { Put: { ...action.Put, TableName: this.tableName } });
    if ('Update' in action) return conditionalWrite(this.client, { Update: { ...action.Update, TableName: this.tableName } });
    return conditionalWrite(this.client, { Delete: { ...action.Delete, TableName: this.tableName } });
  }

  /** Puts and deletes in batches ({@link batchWriteAll}). */
  batchWrite = (requests: readonly BatchWrite[]): Promise<void> => batchWriteAll(this.client, this.tableName, requests);
  /** A scan of this table a page at a time ({@link scanPages}). */
  scanPages = (input: Omit<ScanInput, 'TableName'>): AsyncGenerator<Record<string, unknown>[]> => scanPages(this.client, { ...input, TableName: this.tableName });

  /** One transaction ({@link transactWrite}); its actions name their tables. */
  transact(actions: readonly TransactionAction[], options?: Parameters<typeof transactWrite>[2]): Promise<TransactionOutcome> {
    return transactWrite(this.client, actions, options);
  }
}

/** A conditional write of the table a {@link DynamoItems} is bound to: its input without `TableName`. */
export type TableAction = { Put: Omit<PutCommandInput, 'TableName'> } | { Update: Omit<UpdateCommandInput, 'TableName'> } | { Delete: Omit<DeleteCommandInput, 'TableName'> };

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
