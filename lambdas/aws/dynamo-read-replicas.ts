import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Random } from '../clock';
import { ConflictError } from '../errors';
import { DynamoItems, MAX_TRANSACTION_ACTIONS, backoffMs, itemId, strip, type TransactionAction } from './dynamo-items';

/** The key of an item of the single-table layout. */
export interface ItemKey {
  pk: string;
  sk: string;
}

/** How an item is copied: how many copies, and which attributes they leave out (what only management reads). */
export interface CopyKind {
  readonly count: number;
  readonly withheld: readonly string[];
}

/**
 * Copies of an item that every request reads, so that no partition takes every read of one
 * key, organization or workspace (docs/architecture.md, "Data layout"). Copy `n` of an item is
 * `COPY#<item pk>#<item sk>#<n>` / `COPY`, each its own partition-key value; a request reads one,
 * chosen at random, strongly consistently. Management reads and writes the item itself, each
 * write one transaction with every copy ({@link create}, {@link change}, {@link delete}), under
 * the `revision` read, counted up in the same write (docs/architecture.md, "One change, one
 * transaction"): a change cut short leaves nothing behind, and what management shows is what
 * every request meets. A deleted item's copies say so. A copy that does not exist (an item
 * written by a release before copies) is read from the item itself, one round trip more;
 * `ops copies repair` writes them (lambdas/aws/dynamo-copies-audit.ts).
 */
export class ReadReplicas {
  private readonly items: DynamoItems;

  constructor(
    client: DynamoDBDocumentClient,
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
  async read<T = Record<string, unknown>>(wanted: readonly { item: ItemKey; count: number }[]): Promise<(T | undefined)[]> {
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
    return records.map((record) => (record ? (record as T) : undefined));
  }

  /**
   * Writes a new item (`revision` 1) and its copies, with `along` (the claim of a slug the item
   * takes, say) in the same transaction; false, and nothing written, when the item exists already.
   * A condition of `along` that fails is an {@link AlongRefused}, nothing written.
   */
  async create(item: Record<string, unknown>, kind: CopyKind, along: readonly TransactionAction[] = []): Promise<boolean> {
    const created = { ...item, revision: 1 };
    const outcome = await this.transact([
      { Put: { TableName: this.tableName, Item: created, ConditionExpression: 'attribute_not_exists(pk)' } },
      ...along,
      ...this.copyPuts(created, kind),
    ]);
    if (outcome.written) return true;
    throwIfAlongRefused(outcome.failed, along.length);
    return false;
  }

  /**
   * Changes an existing item and all of its copies in one transaction, under the revision the
   * item was read at: `next(current)` says what the item becomes, whole (its key and revision
   * aside; withheld attributes are left as they are, so single-item writers of those do not conflict),
   * or undefined to keep it as it is, its copies brought to it all the same (a call sent again
   * after a failure thus still writes what requests read). A concurrent change makes the
   * transaction fail, and the change is computed again from what that one left. `along(current)`
   * adds actions to the transaction (the claims of a rename); one whose condition fails is an
   * {@link AlongRefused}. Undefined when the item does not exist; else the item before and after.
   */
  change(
    key: ItemKey,
    kind: CopyKind,
    next: (current: Record<string, unknown>) => Record<string, unknown> | undefined,
    along: (current: Record<string, unknown>) => TransactionAction[] = () => [],
  ): Promise<{ before: Record<string, unknown>; after: Record<string, unknown> } | undefined> {
    return this.inTurn(key, () => this.changeNow(key, kind, next, along));
  }

  private async changeNow(
    key: ItemKey,
    kind: CopyKind,
    next: (current: Record<string, unknown>) => Record<string, unknown> | undefined,
    along: (current: Record<string, unknown>) => TransactionAction[],
  ): Promise<{ before: Record<string, unknown>; after: Record<string, unknown> } | undefined> {
    let current = await this.items.getItem(key);
    for (let attempt = 1; current && attempt <= CHANGE_ATTEMPTS; attempt++) {
      const wanted = next(current);
      const others = along(current);
      const after = wanted === undefined ? current : { ...wanted, ...pick(current, kind.withheld), ...key, revision: revisionOf(current) + 1 };
      const write: TransactionAction =
        wanted === undefined
          ? { ConditionCheck: { TableName: this.tableName, Key: key, ...atRevision(current), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } }
          : { Update: { TableName: this.tableName, Key: key, ...updateTo(current, after, kind.withheld), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } };
      const outcome = await this.transact([write, ...others, ...this.copyPuts(after, kind)]);
      if (outcome.written) return { before: current, after };
      throwIfAlongRefused(outcome.failed, others.length);
      current = outcome.failed[0]?.item;
      // Another change landed first: let the others through before computing this one again.
      if (current) await pause(backoffMs(attempt));
    }
    if (!current) return undefined;
    throw new ConflictError('The item was changed by other requests at the same time; retry');
  }

  /**
   * Deletes the item and marks every copy deleted, in one transaction, while `condition` (an
   * expression with its values) holds; the marks are written also when the item is already gone,
   * so a deletion sent again always reaches what requests read. The item as it was when deleted;
   * `missing` when there was none; `refused` with the item when the condition did not hold.
   * `along` gives, from the item as read, writes that land in the same transaction; one whose
   * condition fails is an {@link AlongRefused}.
   */
  delete(
    key: ItemKey,
    kind: CopyKind,
    condition?: { expression: string; values: Record<string, unknown> },
    along: (item: Record<string, unknown>) => readonly TransactionAction[] = () => [],
  ): Promise<{ outcome: 'deleted' | 'refused'; item: Record<string, unknown> } | { outcome: 'missing' }> {
    return this.inTurn(key, () => this.deleteNow(key, kind, condition, along));
  }

  private async deleteNow(
    key: ItemKey,
    kind: CopyKind,
    condition: { expression: string; values: Record<string, unknown> } | undefined,
    along: (item: Record<string, unknown>) => readonly TransactionAction[],
  ): Promise<{ outcome: 'deleted' | 'refused'; item: Record<string, unknown> } | { outcome: 'missing' }> {
    let current = await this.items.getItem(key);
    for (let attempt = 1; current && attempt <= CHANGE_ATTEMPTS; attempt++) {
      const revision = atRevision(current);
      const others = along(current);
      const outcome = await this.transact([
        {
          Delete: {
            TableName: this.tableName,
            Key: key,
            ConditionExpression: condition ? `(${revision.ConditionExpression}) AND (${condition.expression})` : revision.ConditionExpression,
            ...(revision.ExpressionAttributeValues || condition ? { ExpressionAttributeValues: { ...revision.ExpressionAttributeValues, ...condition?.values } } : {}),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        ...others,
        ...this.deletionPuts(key, kind),
      ]);
      if (outcome.written) return { outcome: 'deleted', item: current };
      throwIfAlongRefused(outcome.failed, others.length);
      const found = outcome.failed[0]?.item;
      if (found && revisionOf(found) === revisionOf(current)) return { outcome: 'refused', item: found };
      current = found;
      if (current) await pause(backoffMs(attempt));
    }
    if (current) throw new ConflictError('The item was changed by other requests at the same time; retry');
    await this.transact(this.deletionPuts(key, kind));
    return { outcome: 'missing' };
  }

  /** A put of every copy of `item` as it is (its revision included). */
  copyPuts(item: Record<string, unknown>, kind: CopyKind): TransactionAction[] {
    const copy = copyOf(item, kind.withheld);
    const key = { pk: item.pk as string, sk: item.sk as string };
    return Array.from({ length: kind.count }, (_, n) => ({ Put: { TableName: this.tableName, Item: { ...copy, ...copyKey(key, n) } } }));
  }

  /** A put of the deletion mark on every copy of the item `key`. */
  deletionPuts(key: ItemKey, kind: CopyKind): TransactionAction[] {
    return Array.from({ length: kind.count }, (_, n) => ({ Put: { TableName: this.tableName, Item: { ...DELETED, ...copyKey(key, n) } } }));
  }

  /** The changes of one item under way in this process, last first: each waits for the one before. */
  private readonly turns = new Map<string, Promise<unknown>>();

  /**
   * Runs `write` once the writes of the same item that this store started before it are done.
   * Writers in other processes (Lambda containers) still race, and the revision condition
   * settles it; within one process (the local runtime serves every request in one) they wait
   * their turn instead of computing changes that are bound to fail.
   */
  private async inTurn<T>(key: ItemKey, write: () => Promise<T>): Promise<T> {
    const id = itemId(key.pk, key.sk);
    const before = this.turns.get(id) ?? Promise.resolve();
    const mine = before.then(write, write);
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(id, settled);
    try {
      return await mine;
    } finally {
      if (this.turns.get(id) === settled) this.turns.delete(id);
    }
  }

  private transact(actions: TransactionAction[]) {
    if (actions.length > MAX_TRANSACTION_ACTIONS) throw new Error(`a change of ${actions.length} items: more than one transaction holds`);
    return this.items.transact(actions);
  }
}

/** A transaction refused by a condition of the actions that went along with an item's write; `failed` indexes them. */
export class AlongRefused extends Error {
  constructor(readonly failed: readonly { index: number; item?: Record<string, unknown> }[]) {
    super('a condition of the actions along with the write did not hold');
    this.name = 'AlongRefused';
  }
}

/** Throws {@link AlongRefused} when a condition failed among the `count` actions after the item's own (index 0), and not the item's. */
function throwIfAlongRefused(failed: readonly { index: number; item?: Record<string, unknown> }[], count: number): void {
  if (failed.some(({ index }) => index === 0)) return;
  const refused = failed.filter(({ index }) => index >= 1 && index <= count).map((entry) => ({ ...entry, index: entry.index - 1 }));
  if (refused.length > 0) throw new AlongRefused(refused);
}

/**
 * Attempts of a change whose item other changes keep moving: each failed attempt means another
 * change landed, so 30 changes of one item at once all land.
 */
const CHANGE_ATTEMPTS = 30;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What a deleted item's copies hold. */
const DELETED = Object.freeze({ deleted: true });

/** The partition-key prefix of copies in the keys table. */
export const COPY_PREFIX = 'COPY#';

/** The key of copy `n` of an item. */
export function copyKey(item: ItemKey, n: number): ItemKey {
  return { pk: `${COPY_PREFIX}${item.pk}#${item.sk}#${n}`, sk: 'COPY' };
}

/** What a copy of `item` holds: its record (no key or index attributes, nothing withheld) and its revision. */
export function copyOf(item: Record<string, unknown>, withheld: readonly string[]): Record<string, unknown> {
  const record: Record<string, unknown> = strip(item);
  for (const name of withheld) delete record[name];
  return { ...record, revision: revisionOf(item) };
}

/** The revision an item is at: 0 for one written before revisions were counted. */
export function revisionOf(item: Record<string, unknown>): number {
  return typeof item.revision === 'number' ? item.revision : 0;
}

/** The condition that the item exists and is still at the revision it was read at. */
function atRevision(current: Record<string, unknown>): { ConditionExpression: string; ExpressionAttributeValues?: Record<string, unknown> } {
  return typeof current.revision === 'number'
    ? { ConditionExpression: 'revision = :readAt', ExpressionAttributeValues: { ':readAt': current.revision } }
    : { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revision)' };
}

/**
 * The update that turns `current` into `after`, on condition that the item is still at the revision
 * `current` was read at: SET of each attribute that differs, REMOVE of each that `after` leaves
 * out, never a key attribute nor a withheld one. `after` counts the revision up, so the SET is
 * never empty.
 */
function updateTo(current: Record<string, unknown>, after: Record<string, unknown>, withheld: readonly string[]) {
  const untouched = new Set(['pk', 'sk', ...withheld]);
  const { ConditionExpression, ExpressionAttributeValues: readAt } = atRevision(current);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...readAt };
  const sets: string[] = [];
  const removes: string[] = [];
  for (const [name, value] of Object.entries(after)) {
    if (untouched.has(name) || value === undefined || sameValue(current[name], value)) continue;
    names[`#a${sets.length}`] = name;
    values[`:a${sets.length}`] = value;
    sets.push(`#a${sets.length} = :a${sets.length}`);
  }
  for (const name of Object.keys(current)) {
    if (untouched.has(name) || after[name] !== undefined) continue;
    names[`#r${removes.length}`] = name;
    removes.push(`#r${removes.length}`);
  }
  return {
    UpdateExpression: [sets.length > 0 ? `SET ${sets.join(', ')}` : '', removes.length > 0 ? `REMOVE ${removes.join(', ')}` : ''].join(' ').trim(),
    ConditionExpression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

function pick(item: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.filter((name) => item[name] !== undefined).map((name) => [name, item[name]]));
}

/** Equal as DynamoDB stores them: sets by their elements, maps by their entries. */
export function sameValue(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (value instanceof Set) return `set:${JSON.stringify([...value].map(String).sort())}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    return `{${Object.keys(value)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonical((value as Record<string, unknown>)[name])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** The record a copy holds, `null` for a deleted item, undefined when there is no copy (the item itself must be read). */
function fromCopy(item: Record<string, unknown> | undefined): Record<string, unknown> | null | undefined {
  if (!item) return undefined;
  return item.deleted === true ? null : strip(item);
}
