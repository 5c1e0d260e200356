import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Random } from '../clock';
import { DynamoItems, conditionalWrite, itemId, strip } from './dynamo-items';

/** The key of an item of the single-table layout. */
export interface ItemKey {
  pk: string;
  sk: string;
}

/**
 * Copies of an item that every request reads, so that no partition takes every read of one
 * key, organization or workspace (docs/architecture.md, "Data layout"). A request reads one
 * copy, chosen at random and read strongly consistently; DynamoDB spreads the copies over
 * partitions, each copy's partition-key value being its own:
 *
 * | item                 | pk                                  | sk        |
 * |----------------------|-------------------------------------|-----------|
 * | copy `n` of an item  | `COPY#<item pk>#<item sk>#<n>`      | `COPY`    |
 *
 * The item itself stays where it was; management reads and writes it. Every change of it
 * counts its `revision` up in the same write, then puts each copy under one condition: the copy
 * is absent or holds a lower revision. So a copy only ever moves forward, whatever order
 * concurrent writers' puts land in, and once the writer of the highest revision is done every
 * copy holds it: no re-read, no retry, however many writers contend (a hot workspace that 20
 * requests change at once costs 20 puts per copy, not a loop of rewrites). A change is answered
 * once every copy holds it or a later revision: from then on every request sees it (SPEC 5
 * rule 6: a disabled or deleted key stops at once). A deleted item's copies hold a marker above
 * every revision, so no change that raced the deletion can bring one back. A change cut short
 * by a crash was not answered; its retry, or the next change, writes the copies.
 *
 * A copy that does not exist (an item written by a release before copies, or a create cut
 * short) is read from the item itself, one round trip more: nothing needs migrating.
 */
export class ReadReplicas {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly random: Random,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /**
   * The records of these items in one round trip, each read from one of its `count` copies
   * chosen at random (one draw for them all: each item's copy is still uniform among its own),
   * strongly consistent; an item whose copy does not exist is read itself, in a second.
   * Undefined where an item does not exist or is deleted.
   */
  async read(wanted: readonly { item: ItemKey; count: number }[]): Promise<(Record<string, unknown> | undefined)[]> {
    const draw = this.random();
    const copies = wanted.map(({ item, count }) => copyKey(item, Math.min(count - 1, Math.floor(draw * count))));
    const found = await this.items.batchGet(copies);
    const records = copies.map((copy) => fromCopy(found.get(itemId(copy.pk, copy.sk))));
    const uncopied = wanted.filter((_, i) => records[i] === undefined).map(({ item }) => item);
    if (uncopied.length > 0) {
      const items = await this.items.batchGet(uncopied);
      wanted.forEach(({ item }, i) => {
        if (records[i] !== undefined) return;
        const own = items.get(itemId(item.pk, item.sk));
        records[i] = own ? strip(own) : null;
      });
    }
    return records.map((record) => record ?? undefined);
  }

  /**
   * Brings the `count` copies of an item to what a change left it (`ReturnValues: ALL_NEW`, with
   * its `revision`), unless a later change got there first. `withheld` names attributes the
   * copies leave out: what only management reads.
   */
  async write(item: Record<string, unknown>, count: number, withheld: readonly string[] = []): Promise<void> {
    await this.putCopies({ pk: item.pk as string, sk: item.sk as string }, count, copyOf(item, withheld));
  }

  /** Marks every copy of an item about to be deleted as deleted: from now on no request reads it. */
  async withdraw(item: ItemKey, count: number): Promise<void> {
    await this.putCopies(item, count, DELETED);
  }

  /**
   * Marks every copy of a deleted item as deleted (again, after {@link withdraw}, or for an item
   * deleted without it): the marker outranks every revision, so it stays.
   */
  async remove(item: ItemKey, count: number): Promise<void> {
    await this.putCopies(item, count, DELETED);
  }

  /** Every copy side by side, each moved forward only (a copy at the same or a later revision is left as it is). */
  private async putCopies(item: ItemKey, count: number, content: Copy): Promise<void> {
    await Promise.all(
      Array.from({ length: count }, (_, copy) =>
        conditionalWrite(
          this.client,
          new PutCommand({
            TableName: this.tableName,
            Item: { ...content, ...copyKey(item, copy) },
            ConditionExpression: 'attribute_not_exists(pk) OR revision < :revision',
            ExpressionAttributeValues: { ':revision': content.revision },
          }),
        ),
      ),
    );
  }
}

/** What a copy holds: the item's record at a revision, or that the item is deleted. */
type Copy = Record<string, unknown> & { revision: number };

/** A deleted item's copies: above every revision a change counts to. */
const DELETED: Copy = Object.freeze({ deleted: true, revision: Number.MAX_SAFE_INTEGER });

/** The partition-key prefix of copies in the keys table. */
export const COPY_PREFIX = 'COPY#';

function copyKey(item: ItemKey, copy: number): ItemKey {
  return { pk: `${COPY_PREFIX}${item.pk}#${item.sk}#${copy}`, sk: 'COPY' };
}

function copyOf(item: Record<string, unknown>, withheld: readonly string[]): Copy {
  const revision = item.revision;
  if (typeof revision !== 'number') throw new Error(`item ${String(item.pk)} ${String(item.sk)} has no revision to copy`);
  const record: Record<string, unknown> = strip(item);
  for (const name of withheld) delete record[name];
  return { ...record, revision };
}

/** The record a copy holds, `null` for a deleted item, undefined when there is no copy (the item itself must be read). */
function fromCopy(item: Record<string, unknown> | undefined): Record<string, unknown> | null | undefined {
  if (!item) return undefined;
  return item.deleted === true ? null : strip(item);
}
