import { DeleteItemCommand, PutItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { scanAllAttributes } from '../lambdas/aws/dynamo-items';
import { ALL_TABLES, type TableSchema } from '../lambdas/aws/table-schemas';

type Item = Record<string, AttributeValue>;

/** What {@link reconcileIndexes} repaired, counted in index entries. */
export interface ReconcileReport {
  /** Items whose index entry was missing or stale, written again so the index matches. */
  restored: number;
  /** Index entries whose item no longer exists, removed. */
  removed: number;
}

/**
 * Makes the embedded DynamoDB's indexes agree with its items after an unclean stop.
 *
 * dynalite writes an item's index entries and the item itself as separate writes (index
 * first), so a process killed between them (`kill -9`) leaves an entry for an item that
 * was never written, an entry that says a key is disabled while the key is not, or (on
 * delete) a key with no entry at all, which no listing would show. The item is the truth:
 * every item whose entry is missing or differs is written again as it is, and entries
 * without an item are removed (by writing and deleting that item, the only way the API
 * offers). Runs at start, before the server listens, so nothing sees the in-between state.
 */
export async function reconcileIndexes(client: DynamoDBClient, tables: readonly TableSchema[] = ALL_TABLES): Promise<ReconcileReport> {
  const report: ReconcileReport = { restored: 0, removed: 0 };
  for (const table of tables) {
    if (table.globalIndexes.length === 0) continue;
    const keyOf = (item: Item) =>
      stableJson([table.partitionKey, ...(table.sortKey ? [table.sortKey] : [])].map((name) => item[name] ?? null));
    const items = new Map((await scanAll(client, table.localName)).map((item) => [keyOf(item), item]));
    for (const index of table.globalIndexes) {
      const entries = new Map((await scanAll(client, table.localName, index.indexName)).map((entry) => [keyOf(entry), entry]));
      for (const [key, item] of items) {
        if (item[index.partitionKey] === undefined || item[index.sortKey] === undefined) continue;
        const entry = entries.get(key);
        if (entry && stableJson(entry) === stableJson(item)) continue;
        await client.send(new PutItemCommand({ TableName: table.localName, Item: item }));
        report.restored++;
      }
      for (const [key, entry] of entries) {
        if (items.has(key)) continue;
        await client.send(new PutItemCommand({ TableName: table.localName, Item: entry }));
        await client.send(new DeleteItemCommand({ TableName: table.localName, Key: primaryKey(table, entry) }));
        report.removed++;
      }
    }
  }
  return report;
}

/** Items as DynamoDB holds them (attribute values): they are written back exactly so. */
function scanAll(client: DynamoDBClient, tableName: string, indexName?: string): Promise<Item[]> {
  return scanAllAttributes(client, { TableName: tableName, IndexName: indexName, ConsistentRead: !indexName });
}

function primaryKey(table: TableSchema, item: Item): Item {
  const key: Item = { [table.partitionKey]: item[table.partitionKey]! };
  if (table.sortKey) key[table.sortKey] = item[table.sortKey]!;
  return key;
}

/** JSON with object keys sorted, so two copies of one item compare equal. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
