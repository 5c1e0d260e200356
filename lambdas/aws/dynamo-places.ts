import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { conditionalWrite, itemId, type DynamoItems } from './dynamo-items';

/**
 * Places: a map attribute on one item from the id of each thing that took a place to when it
 * took it, changed only by single-item conditional writes, apart from the item it stands for.
 * The per-organization limits (dynamo-count-limit.ts) hold them. A place is taken before its item is written, so a
 * crash can leave a place whose item never came; such places are reclaimed here.
 */

/**
 * How long a place whose item does not exist is left alone: it may belong to a create still
 * in progress. Longer than any function's timeout (the management function has 15 s), so a
 * place older than this whose item is missing belongs to a writer that is gone.
 */
export const ABANDONED_PLACE_MS = 60_000;

/**
 * When a claim's writer is provably gone: older than {@link ABANDONED_PLACE_MS}, or taken before
 * `writersSince`, the instant before which no writer can still be running. The local runtime
 * knows one (its start: the data folder is one process's, so whatever wrote before it died with
 * the previous process); in AWS there is none, and only the age tells.
 */
export function isAbandoned(takenAt: number, now: number, writersSince: Date | undefined): boolean {
  return now - takenAt > ABANDONED_PLACE_MS || (writersSince !== undefined && takenAt < writersSince.getTime());
}

/** The first instant at which a claim taken at `takenAt` is abandoned by its age ({@link isAbandoned}). */
export function abandonedAt(takenAt: number): Date {
  return new Date(takenAt + ABANDONED_PLACE_MS + 1);
}

/** Names per UpdateItem when places are removed (the update expression is at most 4 KB). */
const REMOVALS_PER_WRITE = 50;

/** How to find the item a place stands for, to tell whether it was written. */
export interface PlacedItems {
  /** The key of the item a place stands for. */
  keyOf(id: string): { pk: string; sk: string };
  /** Whether the item read under that key is the one the place stands for. */
  isPlaced(item: Record<string, unknown>): boolean;
}

/**
 * Removes from the map `attribute` of the item `key` the abandoned places ({@link isAbandoned})
 * whose items do not exist, and returns how many. Never writes an
 * item that is gone back into existence.
 */
export async function reclaimAbandonedPlaces(
  client: DynamoDBDocumentClient,
  items: DynamoItems,
  tableName: string,
  place: { key: { pk: string; sk: string }; attribute: string; holders: Readonly<Record<string, string>>; now: number; writersSince?: Date },
  placed: PlacedItems,
): Promise<number> {
  const old = Object.entries(place.holders)
    .filter(([, takenAt]) => isAbandoned(Date.parse(takenAt), place.now, place.writersSince))
    .map(([id]) => id);
  const gone = await withoutItems(items, old, placed);
  for (let start = 0; start < gone.length; start += REMOVALS_PER_WRITE) {
    const batch = gone.slice(start, start + REMOVALS_PER_WRITE);
    await conditionalWrite(client, {
      Update: {
        TableName: tableName,
        Key: place.key,
        UpdateExpression: `REMOVE ${batch.map((_, i) => `${place.attribute}.#r${i}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.fromEntries(batch.map((id, i) => [`#r${i}`, id])),
      },
    });
  }
  return gone.length;
}

/**
 * The places of `holders` held by writes that have not finished: not abandoned yet, and their
 * items not (yet) written. Each with the instant it is abandoned, unless its write completes first.
 */
export async function unfinishedPlaces(
  items: DynamoItems,
  place: { holders: Readonly<Record<string, string>>; now: number; writersSince?: Date },
  placed: PlacedItems,
): Promise<{ id: string; abandonedAt: Date }[]> {
  const young = Object.keys(place.holders).filter((id) => !isAbandoned(Date.parse(place.holders[id]!), place.now, place.writersSince));
  const unwritten = await withoutItems(items, young, placed);
  return unwritten.map((id) => ({ id, abandonedAt: abandonedAt(Date.parse(place.holders[id]!)) }));
}

/** Those of `ids` whose placed items do not exist, in one consistent batch read. */
async function withoutItems(items: DynamoItems, ids: readonly string[], placed: PlacedItems): Promise<string[]> {
  const found = await items.batchGet(ids.map((id) => placed.keyOf(id)));
  return ids.filter((id) => {
    const { pk, sk } = placed.keyOf(id);
    const item = found.get(itemId(pk, sk));
    return item === undefined || !placed.isPlaced(item);
  });
}
