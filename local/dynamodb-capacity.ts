import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { ALL_TABLES, type GlobalIndexSchema, type TableSchema } from '../lambdas/aws/table-schemas';

/**
 * What one DynamoDB call consumed, item by item, as DynamoDB bills and throttles it: the items
 * and partition-key values it read or wrote (global secondary index entries included, derived
 * from the table schemas), their sizes, and the read and write units each took. The local
 * runtime's call observer (local/aws-calls.ts) records it for every call; the scale model
 * (local/scale-model.ts) scales it to a request rate against DynamoDB's per-partition limits.
 * An index entry is its item (every index here projects all attributes) plus 100 bytes.
 */

/** DynamoDB's throughput per partition-key value, per second; one item is never split across partitions. */
export const PARTITION_LIMITS = Object.freeze({ read: 3000, write: 1000 });

/** One item, index entry or queried partition a call read or wrote, with its size and units. */
export interface ItemAccess {
  /** The table, as the call named it. */
  table: string;
  /** The global secondary index the access went to (a query of it, or an entry a write changed). */
  index?: string;
  /** The partition-key value. */
  partition: string;
  /** The sort-key value; absent for a query, which reads a range of its partition. */
  item?: string;
  operation: 'read' | 'write';
  /** A strongly consistent read. */
  consistent: boolean;
  /** The item's size, an index entry's, or a query's items together. */
  bytes: number;
  /** Read or write units consumed. */
  units: number;
}

/** 4 KB per read unit (half a unit eventually consistent), at least one unit (or half) per item. */
export const readUnits = (bytes: number, consistent: boolean): number => Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
/** 1 KB per write unit, at least one. */
export const writeUnits = (bytes: number): number => Math.max(1, Math.ceil(bytes / 1024));
/** What an index entry adds to its item's size (DynamoDB's index overhead). */
const INDEX_ENTRY_OVERHEAD = 100;

type Item = Record<string, unknown>;

/**
 * The size DynamoDB gives an item ("Item sizes and formats"): each attribute its name's UTF-8
 * length plus its value's size; a string its UTF-8 length; a number about one byte per two
 * significant digits plus one; a list or map 3 bytes plus one per element; a set the sum of
 * its elements.
 */
export function itemSize(item: Item | undefined): number {
  if (!item) return 0;
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) if (value !== undefined) bytes += Buffer.byteLength(name) + valueSize(value);
  return bytes;
}

function valueSize(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(String(value));
  if (value instanceof NumberValue) return numberSize(value.value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce<number>((sum, element) => sum + valueSize(element), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, element) => sum + valueSize(element) + 1, 0);
  if (typeof value === 'object') {
    return 3 + Object.entries(value as Item).reduce((sum, [name, element]) => sum + Buffer.byteLength(name) + valueSize(element) + 1, 0);
  }
  return 0;
}

/** About one byte per two significant digits, plus one. */
function numberSize(text: string): number {
  const digits = text.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

/** A call as the observer sees it: the command, what was sent, and what came back (or the error). */
export interface ObservedCommand {
  command: string;
  input: Item;
  output: Item | undefined;
  error: unknown;
}

/**
 * Every item and partition-key value one call read or wrote. Values are in the document
 * client's form (lib-dynamodb); calls made with raw attribute values are read the same way.
 */
export function itemAccesses({ command, input, output, error }: ObservedCommand): ItemAccess[] {
  const failed = error !== undefined;
  switch (command) {
    case 'GetItem':
      return [read(input.TableName as string, plain(input.Key), plain(output?.Item), input.ConsistentRead === true)];
    case 'BatchGetItem':
      return batchGetAccesses(input, output);
    case 'Query':
      return [queryAccess(input, output)];
    case 'Scan':
      return scanAccesses(input, output);
    case 'PutItem':
      return writeAccesses(input.TableName as string, plain(input.Item), failed ? undefined : plain(output?.Attributes), failed);
    case 'UpdateItem': {
      // The observer asks for the new image; the old one is taken to be its size.
      const image = failed ? plain(input.Key) : { ...plain(output?.Attributes), ...plain(input.Key) };
      return writeAccesses(input.TableName as string, image, undefined, failed);
    }
    case 'DeleteItem':
      return deleteAccesses(input.TableName as string, plain(input.Key)!, failed ? undefined : plain(output?.Attributes));
    case 'BatchWriteItem':
      return batchWriteAccesses(input);
    case 'TransactWriteItems':
      return transactWriteAccesses(input, failed);
    case 'TransactGetItems':
      return transactGetAccesses(input, output);
    default:
      return [];
  }
}

function read(table: string, key: Item | undefined, found: Item | undefined, consistent: boolean): ItemAccess {
  const schema = schemaOf(table);
  const bytes = itemSize(found);
  return { table, partition: String(key?.[schema.partitionKey]), item: sortKeyOf(schema, key), operation: 'read', consistent, bytes, units: readUnits(bytes, consistent) };
}

function batchGetAccesses(input: Item, output: Item | undefined): ItemAccess[] {
  const accesses: ItemAccess[] = [];
  const requested = (input.RequestItems ?? {}) as Record<string, { Keys: Item[]; ConsistentRead?: boolean }>;
  for (const [table, { Keys, ConsistentRead }] of Object.entries(requested)) {
    const schema = schemaOf(table);
    const id = (item: Item | undefined) => `${String(item?.[schema.partitionKey])}\n${sortKeyOf(schema, item) ?? ''}`;
    const found = new Map(((output?.Responses as Record<string, Item[]> | undefined)?.[table] ?? []).map((item) => [id(plain(item)), plain(item)]));
    const unprocessed = new Set(((output?.UnprocessedKeys as Record<string, { Keys: Item[] }> | undefined)?.[table]?.Keys ?? []).map((key) => id(plain(key))));
    for (const key of Keys.map((k) => plain(k)!)) {
      // A key DynamoDB left unprocessed was not read, and is asked for again.
      if (!unprocessed.has(id(key))) accesses.push(read(table, key, found.get(id(key)), ConsistentRead === true));
    }
  }
  return accesses;
}

/** One read of a partition (or an index partition): its items' sizes together, as a query is billed. */
function queryAccess(input: Item, output: Item | undefined): ItemAccess {
  const table = input.TableName as string;
  const schema = schemaOf(table);
  const index = typeof input.IndexName === 'string' ? input.IndexName : undefined;
  const partitionKey = index ? indexOf(schema, index).partitionKey : schema.partitionKey;
  const consistent = input.ConsistentRead === true;
  const bytes = ((output?.Items ?? []) as Item[]).reduce((sum, item) => sum + itemSize(plain(item)), 0);
  const partition = String(plain(input.ExpressionAttributeValues)?.[conditionPlaceholder(input, partitionKey)] ?? '');
  return { table, index, partition, operation: 'read', consistent, bytes, units: readUnits(bytes, consistent) };
}

/**
 * A scan page, item by item: a scan is billed on its page's size together, so each item it
 * returned is counted at its own share of the units (not rounded up), on its own item. Items
 * the filter left out are read too but not returned: a lower bound.
 */
function scanAccesses(input: Item, output: Item | undefined): ItemAccess[] {
  const table = input.TableName as string;
  const schema = schemaOf(table);
  const consistent = input.ConsistentRead === true;
  return ((output?.Items ?? []) as Item[]).map((raw) => {
    const item = plain(raw)!;
    const bytes = itemSize(item);
    return { table, partition: String(item[schema.partitionKey]), item: sortKeyOf(schema, item), operation: 'read', consistent, bytes, units: (bytes / 4096) * (consistent ? 1 : 0.5) };
  });
}

/**
 * The placeholder compared with the partition key in a key condition (`pk = :pk`, `#pk = :v`).
 * Queries that project some attributes or filter items are billed for whole items: their
 * figure here (the items returned) is a lower bound.
 */
function conditionPlaceholder(input: Item, partitionKey: string): string {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  for (const match of String(input.KeyConditionExpression).matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    if ((names[match[1]!] ?? match[1]) === partitionKey) return match[2]!;
  }
  return '';
}

/** A put or an update: the item's write, and one write to each index entry it has (a second where an old entry moves). */
function writeAccesses(table: string, image: Item | undefined, old: Item | undefined, failed: boolean): ItemAccess[] {
  const schema = schemaOf(table);
  const bytes = Math.max(itemSize(image), itemSize(old));
  const own: ItemAccess = { table, partition: String(image?.[schema.partitionKey]), item: sortKeyOf(schema, image), operation: 'write', consistent: true, bytes, units: writeUnits(bytes) };
  // A write refused by its condition changes no index.
  if (failed) return [own];
  const entries: ItemAccess[] = [];
  for (const index of schema.globalIndexes) {
    const next = entryOf(index, image);
    const previous = entryOf(index, old);
    if (next) entries.push(indexWrite(table, index, next, itemSize(image)));
    if (previous && (!next || previous.partition !== next.partition || previous.item !== next.item)) entries.push(indexWrite(table, index, previous, itemSize(old)));
  }
  return [own, ...entries];
}

function deleteAccesses(table: string, key: Item, old: Item | undefined): ItemAccess[] {
  const schema = schemaOf(table);
  const bytes = itemSize(old);
  const own: ItemAccess = { table, partition: String(key[schema.partitionKey]), item: sortKeyOf(schema, key), operation: 'write', consistent: true, bytes, units: writeUnits(bytes) };
  return [own, ...schema.globalIndexes.flatMap((index) => {
    const previous = entryOf(index, old);
    return previous ? [indexWrite(table, index, previous, bytes)] : [];
  })];
}

function batchWriteAccesses(input: Item): ItemAccess[] {
  const requested = (input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>;
  return Object.entries(requested).flatMap(([table, requests]) =>
    requests.flatMap((request) =>
      request.PutRequest ? writeAccesses(table, plain(request.PutRequest.Item), undefined, false) : deleteAccesses(table, plain(request.DeleteRequest!.Key)!, undefined),
    ),
  );
}

/**
 * Each action of a transaction as the single-item call it is, at twice its units (DynamoDB
 * bills a transactional read or write double). An update is counted at its key's size, a lower
 * bound: the transaction does not answer with the item.
 */
function transactWriteAccesses(input: Item, failed: boolean): ItemAccess[] {
  const members = (input.TransactItems ?? []) as Record<string, { TableName: string; Item?: Item; Key?: Item }>[];
  return members.flatMap((member) => {
    const [kind, action] = Object.entries(member)[0]!;
    const table = action.TableName;
    const accesses =
      kind === 'Put'
        ? writeAccesses(table, plain(action.Item), undefined, failed)
        : kind === 'Update'
          ? writeAccesses(table, plain(action.Key), undefined, failed)
          : kind === 'Delete'
            ? deleteAccesses(table, plain(action.Key)!, undefined)
            : [read(table, plain(action.Key), undefined, true)];
    return accesses.map((access) => ({ ...access, units: access.units * 2 }));
  });
}

function transactGetAccesses(input: Item, output: Item | undefined): ItemAccess[] {
  const members = (input.TransactItems ?? []) as { Get: { TableName: string; Key: Item } }[];
  const found = (output?.Responses ?? []) as { Item?: Item }[];
  return members.map(({ Get }, i) => {
    const access = read(Get.TableName, plain(Get.Key), plain(found[i]?.Item), true);
    return { ...access, units: access.units * 2 };
  });
}

function indexWrite(table: string, index: GlobalIndexSchema, entry: { partition: string; item: string }, itemBytes: number): ItemAccess {
  const bytes = itemBytes + INDEX_ENTRY_OVERHEAD;
  return { table, index: index.indexName, ...entry, operation: 'write', consistent: true, bytes, units: writeUnits(bytes) };
}

/** An item is in an index when it has both of the index's key attributes. */
function entryOf(index: GlobalIndexSchema, item: Item | undefined): { partition: string; item: string } | undefined {
  const partition = item?.[index.partitionKey];
  const sort = item?.[index.sortKey];
  return typeof partition === 'string' && typeof sort === 'string' ? { partition, item: sort } : undefined;
}

/** Tables by the name the local runtime gives them; anything else is taken to have `pk`/`sk` keys and no index. */
function schemaOf(table: string): Pick<TableSchema, 'partitionKey' | 'sortKey' | 'globalIndexes'> {
  return ALL_TABLES.find((schema) => schema.localName === table) ?? { partitionKey: 'pk', sortKey: 'sk', globalIndexes: [] };
}

function indexOf(schema: Pick<TableSchema, 'globalIndexes'>, name: string): GlobalIndexSchema {
  const index = schema.globalIndexes.find((candidate) => candidate.indexName === name);
  if (!index) throw new Error(`no index ${name} in the table schemas`);
  return index;
}

function sortKeyOf(schema: Pick<TableSchema, 'sortKey'>, item: Item | undefined): string | undefined {
  return schema.sortKey ? String(item?.[schema.sortKey]) : undefined;
}

const ATTRIBUTE_TYPES = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);

/** An item in the document client's form, whichever form the call used. */
function plain(item: unknown): Item | undefined {
  if (item === undefined || item === null) return undefined;
  const entries = Object.entries(item as Item);
  const raw = entries.length > 0 && entries.every(([, value]) => isAttributeValue(value));
  return raw ? Object.fromEntries(entries.map(([name, value]) => [name, fromAttributeValue(value as Item)])) : (item as Item);
}

function isAttributeValue(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || value instanceof Set || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && ATTRIBUTE_TYPES.has(keys[0]!);
}

function fromAttributeValue(value: Item): unknown {
  const [type, inner] = Object.entries(value)[0]!;
  switch (type) {
    case 'M':
      return Object.fromEntries(Object.entries(inner as Item).map(([name, element]) => [name, fromAttributeValue(element as Item)]));
    case 'L':
      return (inner as Item[]).map(fromAttributeValue);
    case 'N':
      return NumberValue.from(inner as string);
    case 'SS':
    case 'BS':
      return new Set(inner as unknown[]);
    case 'NS':
      return new Set((inner as string[]).map((n) => NumberValue.from(n)));
    case 'NULL':
      return null;
    default:
      return inner;
  }
}
