import { NumberValue, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  FLIGHT_ATTRIBUTE,
  SPEND_SHARDS,
  TOTAL_ATTRIBUTE,
  foldableAt,
  spendAttribute,
  type LedgerStore,
  type Flight,
  type Grant,
  type GrantOutcome,
  type HoldRef,
  type LedgerRef,
  type LedgerStart,
  type LedgerState,
  type SpendEntry,
  type SpendItemSums,
} from '../spending/ledgers';
import type { SpendScope } from '../spending/limits';
import { ZERO, atMost, minus, negate, plus, smaller } from '../usd';
import { DynamoItems, backoffMs, isThrottling, isTransactionConflict, itemId, type TransactionAction } from './dynamo-items';
import { decimal } from './dynamo-usage-store';
import { inBatches } from '../batches';
import { LedgerBranches } from './dynamo-ledger-branches';
import { HOLD_PREFIX, bucketOfAttribute, holdAttribute, ledgerKey } from './dynamo-ledger-keys';

/**
 * Spending-limit ledgers and spend items in the usage table (docs/architecture.md, "Spending
 * limits"): a ledger, `BUDGET#<ledger>` / `<period>`, holds `committed`, `settled`, one
 * `h:<bucket>:<epoch>` per hold and its `flight`; a spend item, `SPEND#<scope>#<shard>` /
 * `<bucket>:<epoch>`, a `<ledger>|<period>` sum per ledger, `total`, `flight`, `expiresAt`.
 *
 * A ledger is one item, written by single conditional updates: a grant adds its hold and amount
 * to `committed` while `committed` stays within the limit (conditions compare, they do not add, so
 * the limit less the grant is computed here); a fold replaces a lapsed hold by what its spend items
 * add up to, on condition that the hold is as read. Spend items take two `ADD`s per request and
 * scope, spread over the scope's shards, and expire a day after their holds can be folded.
 */
export class DynamoLedgers implements LedgerStore {
  private readonly items: DynamoItems;
  readonly spendShards: Readonly<Record<SpendScope['kind'], number>>;
  /** This container's branch of every ledger, where ledgers have branches. */
  private readonly branches?: LedgerBranches;

  /**
   * `branches`: how many branches each ledger has (lambdas/aws/dynamo-ledger-branches.ts); none
   * by default, where containers grant on the ledger's item. `random` picks this container's branch.
   */
  constructor(
    client: DynamoDBDocumentClient,
    tableName: string,
    options: { spendShards?: Readonly<Record<SpendScope['kind'], number>>; branches?: number; random?: () => number } = {},
  ) {
    this.items = new DynamoItems(client, tableName);
    this.spendShards = options.spendShards ?? SPEND_SHARDS;
    const direct = (grant: Grant, start: LedgerStart | undefined, maxCommitted?: string) => untilNoConflict(() => this.grantNow(grant, start, maxCommitted));
    if (options.branches) this.branches = new LedgerBranches(this.items, direct, options.branches, { ...(options.random ? { random: options.random } : {}) });
  }

  /**
   * A throttled grant (the SDK's retries spent) is an outcome, `busy`, never an error; so is one
   * that kept meeting a limit change's transaction on the ledger's item, after a few tries.
   */
  async grant(grant: Grant, start?: LedgerStart): Promise<GrantOutcome> {
    try {
      if (this.branches && grant.branched) return await this.branches.grant(grant, start);
      return await untilNoConflict(() => this.grantNow(grant, start));
    } catch (error) {
      if (isThrottling(error) || isTransactionConflict(error)) return { granted: false, busy: true };
      throw error;
    }
  }

  /** The grant on the ledger's item; `maxCommitted`, when given, a lower bound than the limit's on what it may have committed before. */
  private async grantNow(grant: Grant, start?: LedgerStart, maxCommitted?: string): Promise<GrantOutcome> {
    const { ref, limitUsd, amount, hold, giveBack } = grant;
    const back = giveBack?.amount ?? ZERO;
    const max = plus(minus(limitUsd, amount), back);
    const names: Record<string, string> = { '#hold': holdAttribute(hold) };
    const values: Record<string, unknown> = {
      ':amount': NumberValue.from(amount),
      ':delta': NumberValue.from(minus(amount, back)),
      ':max': NumberValue.from(maxCommitted === undefined ? max : smaller(max, maxCommitted)),
      ':limit': NumberValue.from(limitUsd),
    };
    names['#cap'] = 'cap';
    let update = 'ADD committed :delta, #hold :amount';
    if (giveBack) {
      names['#back'] = holdAttribute(giveBack.hold);
      values[':back'] = NumberValue.from(negate(back));
      update += ', #back :back';
    }
    const answer = await this.items.write({
      Update: {
        Key: ledgerKey(ref),
        UpdateExpression: update,
        ConditionExpression: `attribute_exists(committed) AND committed <= :max AND ${WITHIN_CAP}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_OLD',
      },
    });
    if (answer.written) {
      const before = ledgerState(answer.item);
      const after = withGrant(before!, hold, amount, giveBack);
      return { granted: true, before, after };
    }
    const cap = capOf(answer.item);
    // An item with a cap alone (a change wrote it before any grant) is a ledger not started yet.
    if (answer.item?.committed !== undefined || start === undefined || (cap.cap !== undefined && !atMost(limitUsd, cap.cap))) {
      return { granted: false, state: ledgerState(answer.item), ...cap };
    }
    return this.create(ref, limitUsd, amount, hold, start);
  }

  /** A ledger's first write: at `start`, with the hold when start and hold fit the limit. */
  private async create(ref: LedgerRef, limitUsd: string, amount: string, hold: HoldRef, start: LedgerStart): Promise<GrantOutcome> {
    const base = startCommitted(start);
    const fits = atMost(plus(base, amount), limitUsd);
    const first = startWrite(start, fits ? plus(base, amount) : base);
    const answer = await this.items.write({
      Update: {
        Key: ledgerKey(ref),
        UpdateExpression: fits ? `${first.update}, #hold = :amount` : first.update,
        ConditionExpression: `attribute_not_exists(committed) AND ${WITHIN_CAP}`,
        ExpressionAttributeNames: { '#cap': 'cap', ...first.names, ...(fits ? { '#hold': holdAttribute(hold) } : {}) },
        ExpressionAttributeValues: { ...first.values, ':limit': NumberValue.from(limitUsd), ...(fits ? { ':amount': NumberValue.from(amount) } : {}) },
      },
    });
    if (!answer.written) return { granted: false, state: ledgerState(answer.item), ...capOf(answer.item) };
    const state: LedgerState = { committed: fits ? plus(base, amount) : base, settled: start.spent, holds: fits ? [{ hold, amount }] : [], ...(start.flight ? { flight: start.flight } : {}) };
    return fits ? { granted: true, before: undefined, after: state } : { granted: false, state };
  }

  async seed(ref: LedgerRef, start: LedgerStart): Promise<boolean> {
    const first = startWrite(start, startCommitted(start));
    const answer = await this.items.write({
      Update: {
        Key: ledgerKey(ref),
        UpdateExpression: first.update,
        ConditionExpression: 'attribute_not_exists(committed)',
        ...(Object.keys(first.names).length > 0 ? { ExpressionAttributeNames: first.names } : {}),
        ExpressionAttributeValues: first.values,
      },
    });
    return answer.written;
  }

  async spendItems(scope: SpendScope, from: number, to: number, ref?: LedgerRef): Promise<SpendItemSums[]> {
    const shards = Array.from({ length: this.spendShards[scope.kind] }, (_, shard) => spendPartition(scope, shard));
    const found: Record<string, unknown>[] = [];
    await inBatches(
      shards,
      async (pk) => {
        const query = { KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to', ExpressionAttributeValues: { ':pk': pk, ':from': `${from}:`, ':to': `${to};` } };
        found.push(...(await this.items.queryAll({ ...query, ConsistentRead: true })));
      },
      PARALLEL_READS,
    );
    const attribute = ref ? spendAttribute(ref) : undefined;
    return found.map((item) => {
      const [bucket, epoch] = String(item.sk).split(':');
      return {
        hold: { bucket: Number(bucket), epoch: epoch ?? '' },
        flight: decimal(item[FLIGHT_ATTRIBUTE] ?? 0),
        total: decimal(item[TOTAL_ATTRIBUTE] ?? 0),
        ledger: attribute === undefined ? ZERO : decimal(item[attribute] ?? 0),
      };
    });
  }

  async settleFlight(ref: LedgerRef, flight: Flight, spent: string): Promise<boolean> {
    const answer = await untilNoConflict(() => this.items.write({
      Update: {
        Key: ledgerKey(ref),
        UpdateExpression: 'ADD committed :change, settled :spent REMOVE #flight',
        ConditionExpression: '#flight.#amount = :amount AND #flight.#to = :to',
        ExpressionAttributeNames: { '#flight': FLIGHT_ATTRIBUTE, '#amount': 'amount', '#to': 'to' },
        ExpressionAttributeValues: {
          ':change': NumberValue.from(minus(spent, flight.amount)),
          ':spent': NumberValue.from(spent),
          ':amount': NumberValue.from(flight.amount),
          ':to': flight.to,
        },
      },
    }));
    return answer.written;
  }

  async read(ref: LedgerRef): Promise<LedgerState | undefined> {
    return ledgerState(await this.items.getItem(ledgerKey(ref), { consistent: false }));
  }

  async spend(entries: readonly SpendEntry[]): Promise<void> {
    await Promise.all(
      entries.map((entry) => {
        const names: Record<string, string> = {};
        const values: Record<string, unknown> = { ':expires': Math.ceil(foldableAt(entry.hold) / 1000) + SPEND_KEPT_SECONDS };
        const adds = [...entry.amounts].map(([attribute, amount], i) => {
          names[`#a${i}`] = attribute;
          values[`:a${i}`] = NumberValue.from(amount);
          return `#a${i} :a${i}`;
        });
        return this.items.update({
          Key: spendKey(entry.scope, entry.shard, entry.hold),
          UpdateExpression: `SET expiresAt = :expires ADD ${adds.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        });
      }),
    );
  }

  async fold(ref: LedgerRef, scope: SpendScope, hold: HoldRef, amount: string): Promise<boolean> {
    const attribute = spendAttribute(ref);
    const shards = Array.from({ length: this.spendShards[scope.kind] }, (_, shard) => spendKey(scope, shard, hold));
    const found = await this.items.batchGet(shards);
    const spent = plus(...shards.map((key) => decimal(found.get(itemId(key.pk, key.sk))?.[attribute] ?? 0)));
    const answer = await untilNoConflict(() => this.items.write({
      Update: {
        Key: ledgerKey(ref),
        UpdateExpression: 'ADD committed :change, settled :spent REMOVE #hold',
        ConditionExpression: '#hold = :amount',
        ExpressionAttributeNames: { '#hold': holdAttribute(hold) },
        ExpressionAttributeValues: { ':change': NumberValue.from(minus(spent, amount)), ':spent': NumberValue.from(spent), ':amount': NumberValue.from(amount) },
      },
    }));
    return answer.written;
  }
}

/**
 * The write a change of a limit's amount makes on one period's item of its ledger, in the
 * change's own transaction: the item's `cap` becomes the new amount, so no grant asked under the
 * amount before lands after the change. `fitting`: only while what the ledger has committed fits
 * the new amount (else the transaction is refused), so every hold already out stays within it.
 */
export function capAction(tableName: string, ref: LedgerRef, amountUsd: string, fitting: boolean): TransactionAction {
  return {
    Update: {
      TableName: tableName,
      Key: ledgerKey(ref),
      UpdateExpression: 'SET #cap = :cap',
      ...(fitting ? { ConditionExpression: 'attribute_not_exists(committed) OR committed <= :cap' } : {}),
      ExpressionAttributeNames: { '#cap': 'cap' },
      ExpressionAttributeValues: { ':cap': NumberValue.from(amountUsd) },
    },
  };
}

/** A grant lands only under the ledger's cap, where a change wrote one: `:limit` is the amount it was asked under. */
const WITHIN_CAP = '(attribute_not_exists(#cap) OR #cap >= :limit)';

/** The cap on a ledger's item, as a refusal reports it. */
function capOf(item: Record<string, unknown> | undefined): { cap?: string } {
  return item?.cap === undefined ? {} : { cap: decimal(item.cap) };
}

/** A write on a ledger's item meets a limit change's transaction now and then (the SDK does not retry that): tried again, a few times. */
async function untilNoConflict<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      if (!isTransactionConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt)));
    }
  }
}

const CONFLICT_ATTEMPTS = 4;

/** How many spend shards the local runtime spreads a scope's writes over: one process's rate needs few, and a new ledger reads them all. */
export const LOCAL_SPEND_SHARDS: Readonly<Record<SpendScope['kind'], number>> = { key: 4, workspace: 8 };

/** A scope's spend shards read at once. */
const PARALLEL_READS = 32;

/** What a new ledger commits: what its scope spent, and its estimates in flight. */
const startCommitted = (start: LedgerStart): string => plus(start.spent, start.flight?.amount ?? ZERO);

/** The update that starts a ledger at `committed`, settled at what its scope spent, with its flight when it has one. */
function startWrite(start: LedgerStart, committed: string): { update: string; names: Record<string, string>; values: Record<string, unknown> } {
  const values: Record<string, unknown> = { ':committed': NumberValue.from(committed), ':base': NumberValue.from(start.spent) };
  const { flight } = start;
  if (!flight) return { update: 'SET committed = :committed, settled = :base', names: {}, values };
  values[':flight'] = { from: flight.from, to: flight.to, amount: NumberValue.from(flight.amount), ended: NumberValue.from(flight.ended) };
  return { update: 'SET committed = :committed, settled = :base, #flight = :flight', names: { '#flight': FLIGHT_ATTRIBUTE }, values };
}

/** Spend items outlive the fold of their holds by a day: enough to audit, not enough to pile up. */
const SPEND_KEPT_SECONDS = 24 * 3600;

/** The key of the spend item of a scope's shard for one bucket's holds. */
export function spendKey(scope: SpendScope, shard: number, hold: HoldRef): { pk: string; sk: string } {
  return { pk: spendPartition(scope, shard), sk: `${hold.bucket}:${hold.epoch}` };
}

/** The partition of a scope's spend shard: its items, one a bucket and writer epoch. */
function spendPartition(scope: SpendScope, shard: number): string {
  return `SPEND#${scope.kind === 'key' ? `K#${scope.keyHash}` : `W#${scope.organizationId}#${scope.workspaceId}`}#${shard}`;
}

/** A ledger item as state; undefined when it does not exist. */
function ledgerState(item: Record<string, unknown> | undefined): LedgerState | undefined {
  if (!item || item.committed === undefined) return undefined;
  const holds: LedgerState['holds'] = [];
  for (const [name, value] of Object.entries(item)) {
    const hold = bucketOfAttribute(HOLD_PREFIX, name);
    if (hold) holds.push({ hold, amount: decimal(value) });
  }
  const flight = flightOf(item[FLIGHT_ATTRIBUTE]);
  return { committed: decimal(item.committed), settled: decimal(item.settled ?? 0), holds, ...(flight ? { flight } : {}) };
}

/** A ledger's flight as stored; undefined when it has none (or it is not one). */
function flightOf(value: unknown): Flight | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { from, to, amount, ended } = value as Record<string, unknown>;
  const bucket = (n: unknown) => Number(decimal(n ?? Number.NaN));
  if (!Number.isSafeInteger(bucket(from)) || !Number.isSafeInteger(bucket(to))) return undefined;
  return { from: bucket(from), to: bucket(to), amount: decimal(amount ?? 0), ended: decimal(ended ?? 0) };
}

function withGrant(before: LedgerState, hold: HoldRef, amount: string, giveBack: Grant['giveBack']): LedgerState {
  const holds = before.holds.map((h) => ({ ...h }));
  const add = (target: HoldRef, value: string) => {
    const existing = holds.find((h) => h.hold.bucket === target.bucket && h.hold.epoch === target.epoch);
    if (existing) existing.amount = plus(existing.amount, value);
    else holds.push({ hold: target, amount: value });
  };
  add(hold, amount);
  if (giveBack) add(giveBack.hold, negate(giveBack.amount));
  return { committed: plus(before.committed, amount, negate(giveBack?.amount ?? ZERO)), settled: before.settled, holds };
}

