import { DynamoCatalogStore, VERSION_COPIES } from '../../lambdas/aws/dynamo-catalog-store';
import { createDocumentClient, createDynamoDbClient } from '../../lambdas/aws/dynamo-client';
import { batchWriteAll } from '../../lambdas/aws/dynamo-items';
import { DynamoSigningKeyStore } from '../../lambdas/aws/dynamo-signing-key-store';
import { DynamoUsageFold, POPULARITY_COPIES } from '../../lambdas/aws/dynamo-usage-fold';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { DEFAULT_SETTINGS } from '../../lambdas/settings';
import { PUBLISHED_KEYS_CACHE_SECONDS } from '../../lambdas/signing/cached-signing-keys';
import { ACTIVE_KEY_RECHECK_SECONDS } from '../../lambdas/signing/active-signer';
import { USAGE_FIGURES_SECONDS, USAGE_SORT_DAYS, closedThrough, daysBefore } from '../../lambdas/usage/usage';
import type { FunctionId } from '../../lambdas/routes';
import { observeClientCalls, type AwsCall } from '../../local/aws-calls';
import { LOCAL_AWS_ENV } from '../../local/embedded-dynamodb';
import { functionCredentials } from '../../local/function-principals';
import type { LocalRuntime } from '../../local/runtime';
import { combinedLoad, type ScaleLoad } from '../../local/scale-model';
import type { MeasuredRow } from './scale-rows';
import { HOLD_BUCKET_SECONDS, HOLD_SECONDS, SPEND_SHARDS } from '../../lambdas/spending/ledgers';
import { OPEN_PREFIX, OPEN_SHARDS } from '../../lambdas/aws/dynamo-open-completions';
import { AHEAD_OF_RESET_SECONDS, REFUSAL_SPREAD_SECONDS } from '../../lambdas/spending/spending-gate';
import { LEDGER_BRANCHES } from '../../lambdas/aws/dynamo-ledger-branches';
import type { SpendScope } from '../../lambdas/spending/limits';
import type { ItemAccess } from '../../local/dynamodb-capacity';

/**
 * How long an invocation lasts at the targets, for the containers a rate keeps busy (rate ×
 * duration): a completion waits on its provider (the cost model's 2 s); the other functions'
 * modelled durations (docs/benchmarks.md), rounded up.
 */
export const INVOCATION_SECONDS: Readonly<Record<Exclude<FunctionId, 'settingsPage'>, number>> = {
  inference: 2,
  catalog: 0.05,
  tokenExchange: 0.1,
  jwks: 0.01,
  management: 0.3,
};

/**
 * The concurrent executions the inference function of a deployment is modelled at: what the
 * rows at 50,000 completions a second keep busy at 2 s each. A regional Lambda concurrency quota
 * is 1,000 by default and is raised on request; no deployment runs more containers than its quota.
 */
export const MODELLED_CONCURRENCY = 100_000;

/**
 * A completion row when its completions last `seconds`: its containers at most
 * {@link MODELLED_CONCURRENCY}, and so its rate no higher than they serve. What keeps a ledger
 * follows the containers, not the rate: the rows hold at any length.
 */
export function atCompletionSeconds(row: MeasuredRow, seconds: number): MeasuredRow {
  if (row.functionName !== 'inference' || row.rate === undefined) return row;
  return { ...row, completionSeconds: seconds, rate: Math.min(row.rate, MODELLED_CONCURRENCY / seconds) };
}

/** How long a row's invocations last: its completions' own length, else the function's. */
function invocationSeconds(row: Pick<MeasuredRow, 'functionName' | 'completionSeconds'>): number {
  if (row.functionName === 'inference') return row.completionSeconds ?? INVOCATION_SECONDS.inference;
  return INVOCATION_SECONDS[row.functionName as keyof typeof INVOCATION_SECONDS] ?? 0;
}

/** How often a container reads the access tokens' signing keys: the verifier's key age, the signer's recheck, the key set's cache. */
const SIGNING_KEYS_SECONDS: Readonly<Record<keyof typeof INVOCATION_SECONDS, number>> = {
  inference: 300,
  catalog: 300,
  management: 300,
  tokenExchange: ACTIVE_KEY_RECHECK_SECONDS,
  jwks: PUBLISHED_KEYS_CACHE_SECONDS,
};

/** The functions that hold the catalog: each checks its version, and reloads it after a change. */
const HOLD_THE_CATALOG: readonly FunctionId[] = ['catalog', 'inference'];

/**
 * After a catalog change every container holding it reloads after its next check and a random
 * wait: within 1.2 × the check interval (its ±20% spread) plus the reload spread, the burst
 * counted here.
 */
const RELOAD_WINDOW_SECONDS = 1.2 * DEFAULT_SETTINGS.catalogCacheSeconds + DEFAULT_SETTINGS.catalogReloadSpreadSeconds;

/** Exchanges from one address the row sends: past the limit (60 a window), so its refusals are measured. */
export const ADDRESS_ROW_REQUESTS = DEFAULT_SETTINGS.exchangeRateLimit + 40;

/** What one container reads on its own, once: each copy of the version and of the popularity figures, a reload, the signing keys. */
export interface BackgroundReads {
  versionCopies: AwsCall[][];
  popularityCopies: AwsCall[][];
  /** A reload, once for each copy of the version it reads. */
  reloadCopies: AwsCall[][];
  signingKeys: AwsCall[];
}

/**
 * Each background read of a container, made once through a client observed as the functions'
 * are, after the popularity figures have been built for every model of the catalog (as a
 * deployment's are): the version and the figures read from each of their copies in turn.
 */
export async function measureBackground(runtime: LocalRuntime, at: Date): Promise<BackgroundReads> {
  let sink: AwsCall[] = [];
  const client = createDynamoDbClient({ endpoint: runtime.dynamoEndpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: functionCredentials('catalog') });
  observeClientCalls(client, 'catalog', 'DynamoDB', (call) => sink.push(call), 'items');
  const documentClient = createDocumentClient(client);
  const record = async (read: () => Promise<unknown>) => {
    sink = [];
    await read();
    return sink;
  };
  try {
    const catalog = new DynamoCatalogStore(documentClient, TABLE_SCHEMAS.models.localName);
    const models = (await catalog.load()).entries.map((entry) => entry.model.id);
    const figures = Object.fromEntries(models.map((model, i) => [model, { requests: 1_000_000 + i, tokens: 1_000_000_000 + i }]));
    const through = closedThrough(at);
    const days = Array.from({ length: USAGE_SORT_DAYS }, (_, i) => daysBefore(new Date(`${through}T00:00:00Z`), i));
    await batchWriteAll(documentClient, TABLE_SCHEMAS.usage.localName, days.map((date) => ({ PutRequest: { Item: { pk: `POPULARITY_DAY#${date}`, sk: 'scale', models: figures } } })));
    await new DynamoUsageFold(documentClient, TABLE_SCHEMAS.usage.localName).buildPopularity(at);
    const copies = async (count: number, read: (draw: () => number) => Promise<unknown>) => {
      const measured: AwsCall[][] = [];
      for (let copy = 0; copy < count; copy++) measured.push(await record(() => read(() => (copy + 0.5) / count)));
      return measured;
    };
    const versionCopies = await copies(VERSION_COPIES, (draw) => new DynamoCatalogStore(documentClient, TABLE_SCHEMAS.models.localName, undefined, draw).version());
    return {
      versionCopies,
      popularityCopies: await copies(POPULARITY_COPIES, (draw) => new DynamoUsageFold(documentClient, TABLE_SCHEMAS.usage.localName, draw).popularity()),
      reloadCopies: await reloads(versionCopies, (copy) => record(() => new DynamoCatalogStore(documentClient, TABLE_SCHEMAS.models.localName, undefined, () => (copy + 0.5) / VERSION_COPIES).load())),
      signingKeys: await record(() => new DynamoSigningKeyStore(documentClient, TABLE_SCHEMAS.keys.localName).list()),
    };
  } finally {
    client.destroy();
  }
}

/**
 * A reload from each copy of the version: that copy's version read, then the catalog's scan,
 * which is the same whichever copy was read. The scan is measured from the first and the last
 * copy, and a reload that reads otherwise fails the measurement.
 */
async function reloads(versionCopies: AwsCall[][], load: (copy: number) => Promise<AwsCall[]>): Promise<AwsCall[][]> {
  const scans: AwsCall[][] = [];
  for (const copy of [0, versionCopies.length - 1]) scans.push((await load(copy)).slice(versionCopies[copy]!.length));
  const accessed = (calls: AwsCall[]) => JSON.stringify(calls.map((call) => [call.command, call.items]));
  if (accessed(scans[0]!) !== accessed(scans[1]!)) throw new Error('a catalog reload reads differently by the version copy it read: measure each copy');
  return versionCopies.map((version) => [...version, ...scans[0]!]);
}

type Part = { calls: readonly AwsCall[]; timesPerSecond: number };

/**
 * What keeps one spending limit's ledger, measured: a container's grant, the fold of one bucket of
 * holds, a refused container's read; and through a branch (lambdas/aws/dynamo-ledger-branches.ts),
 * a hold taken from the branch's room (its read and its take) and a branch's refill (its claim,
 * the grant on the ledger, the chunk added to its room).
 */
export interface BudgetUpkeep {
  limit: string;
  scope: SpendScope['kind'];
  /** Whether its window resets (a day, week or month): the moment its next period is asked for. */
  resets: boolean;
  grant: AwsCall[];
  fold: AwsCall[];
  read: AwsCall[];
  take: AwsCall[];
  refill: AwsCall[];
}

/**
 * What a container's first hold costs its branch when the fleet meets a ledger together: its take,
 * and the claims and takes it lost to other containers' races, at most 3.5 writes a container as
 * measured on the embedded server (test/lambdas/aws/dynamo-ledger-branches.test.ts), whose round
 * trips, slower than a region's, leave more containers in each race.
 */
export const HERD_BRANCH_WRITES = 3.5;
/** The refills each branch asks of the ledger meanwhile: four holds, then half its share of what the ledger had left. */
export const HERD_REFILLS = 2;

/**
 * The moments a limited row is held at: `steady`; `reset`, the minutes before a window resets,
 * when every container also takes its next period's hold; `refused`, a limit without room, when
 * no grant lands and every container reads the ledger again after its refusal memory; `herd`, a
 * limit just set (or its interval changed, a guardrail assigned) or its amount lowered under the
 * holds out, when every container asks the ledger for a hold on its next request, through its
 * branch (lambdas/spending/herds.ts).
 */
export type LimitMoment = 'steady' | 'reset' | 'refused' | 'herd';

/**
 * A limited row's requests and its ledgers' upkeep (docs/architecture.md, "Spending limits"):
 * each request as measured, but its spend writes on every shard of its scope alike, as containers
 * draw their shards at random ({@link spreadSpend}), its open completion on every open partition
 * alike ({@link spreadOpen}); every
 * container renews its holds of each ledger once per {@link HOLD_SECONDS}, and every ledger
 * folds one bucket of holds per {@link HOLD_BUCKET_SECONDS}. The grants the measured run made
 * (one container's first holds and their growth) are what the renewals stand for.
 */
function limitedParts(row: MeasuredRow, moment: LimitMoment): Part[] {
  const containers = row.rate! * invocationSeconds(row);
  const requests = row.callsPerRequest.map((calls) => ({
    calls: calls.flatMap((call) => {
      const items = call.items ?? [];
      const kept = items.filter((access) => !access.partition.startsWith('BUDGET#')).flatMap((access) => spreadOpen(spreadSpend(access)));
      // A grant (all its accesses on a ledger) is counted as a renewal below.
      return items.length > 0 && kept.length === 0 ? [] : [{ ...call, items: kept }];
    }),
    timesPerSecond: row.rate! / row.requests,
  }));
  const upkeep = (row.budgets ?? []).flatMap((ledger) => {
    const steady = [
      { calls: ledger.grant, timesPerSecond: containers / HOLD_SECONDS },
      { calls: ledger.fold, timesPerSecond: 1 / HOLD_BUCKET_SECONDS },
    ];
    if (moment === 'refused') return [{ calls: ledger.read, timesPerSecond: containers / REFUSAL_SPREAD_SECONDS }];
    if (moment === 'herd') return herdParts(ledger, containers, invocationSeconds(row));
    // Each container's first hold of the next period, at its own moment in the minutes before the reset: the next period's item.
    if (moment === 'reset' && ledger.resets) return [...steady, { calls: ledger.grant.map(nextPeriod), timesPerSecond: containers / AHEAD_OF_RESET_SECONDS }];
    return steady;
  });
  return [...requests, ...upkeep];
}

/**
 * A herd on one ledger: every container's next request comes within an invocation (`seconds`), so
 * the `containers` arrive over it, each taking its first hold from its branch (the branch's read,
 * and {@link HERD_BRANCH_WRITES} writes), spread over every branch alike; each branch refills
 * {@link HERD_REFILLS} times from the ledger meanwhile; its buckets fold as ever.
 */
function herdParts(ledger: BudgetUpkeep, containers: number, seconds: number): Part[] {
  const writes = (calls: AwsCall[]) => calls.filter((call) => call.items?.some((access) => access.operation === 'write'));
  const arrivals = containers / seconds;
  const refillsPerSecond = (LEDGER_BRANCHES * HERD_REFILLS) / seconds;
  return [
    { calls: ledger.take.map(spreadBranch), timesPerSecond: arrivals },
    { calls: writes(ledger.take).map(spreadBranch), timesPerSecond: arrivals * (HERD_BRANCH_WRITES - 1) },
    { calls: ledger.refill.map(spreadBranch), timesPerSecond: refillsPerSecond },
    { calls: ledger.fold, timesPerSecond: 1 / HOLD_BUCKET_SECONDS },
  ];
}

/** A ledger's call as made on its next period's item (the same partition). */
function nextPeriod(call: AwsCall): AwsCall {
  return { ...call, items: call.items?.map((access) => ({ ...access, item: `${access.item ?? ''}+1` })) };
}

/**
 * A call on a ledger's branch as the fleet spreads them: each container takes from the branch its
 * draw picks, so one branch, at a share of {@link LEDGER_BRANCHES}, stands for each of them, as
 * {@link spreadSpend}. Calls on the ledger's own item are as measured.
 */
function spreadBranch(call: AwsCall): AwsCall {
  const items = call.items?.map((access) => {
    const match = /^(BUDGET#.*)#(\d+)$/.exec(access.partition);
    return match ? { ...access, partition: `${match[1]}#<each>`, units: access.units / LEDGER_BRANCHES } : access;
  });
  return { ...call, ...(items ? { items } : {}) };
}

/**
 * A spend write as the fleet spreads it: each container draws one of its scope's shards at
 * random, so what one measured request stands for lands evenly on every shard, one item a shard
 * (its bucket's). One, at a share of the shards, stands for each of them, as {@link spreadOpen}.
 */
function spreadSpend(access: ItemAccess): ItemAccess {
  const match = /^SPEND#(K|W)#(.*)#(\d+)$/.exec(access.partition);
  if (!match) return access;
  const shards = SPEND_SHARDS[match[1] === 'K' ? 'key' : 'workspace'];
  return { ...access, partition: `SPEND#${match[1]}#${match[2]}#<each>`, units: access.units / shards };
}

/**
 * An open completion's put or delete, as AWS spreads them: each completion's item is its own, on
 * the partition its generation id picks of {@link OPEN_SHARDS}, so what one measured request
 * stands for (many completions) lands evenly on every partition, each on an item of its own. The
 * partitions take alike: one, at a share of {@link OPEN_SHARDS}, stands for each of them, with the
 * same maxima (each access spread over all 512, this suite took 44 s where it takes 20). The
 * local runtime spreads an hour's open completions over a few partitions only.
 */
function spreadOpen(access: ItemAccess): ItemAccess[] {
  const match = new RegExp(`^${OPEN_PREFIX}(\\d+)#\\d+$`).exec(access.partition);
  if (!match) return [access];
  return [{ ...access, partition: `${OPEN_PREFIX}${match[1]}#<each>`, item: `${access.item ?? ''}#<each>`, units: access.units / OPEN_SHARDS }];
}

/** The containers a row keeps busy, by function: its rate times an invocation's length. */
export function containersOf(row: Pick<MeasuredRow, 'functionName' | 'rate' | 'completionSeconds'>): Partial<Record<FunctionId, number>> {
  return { [row.functionName]: (row.rate ?? 0) * invocationSeconds(row) };
}

/** What `containers` read on their own, each at its own interval, per second. */
export function backgroundParts(containers: Partial<Record<FunctionId, number>>, background: BackgroundReads): Part[] {
  const parts: Part[] = [];
  for (const [fn, count] of Object.entries(containers) as [keyof typeof INVOCATION_SECONDS, number][]) {
    if (!count) continue;
    if (HOLD_THE_CATALOG.includes(fn)) {
      parts.push(...background.versionCopies.map((calls) => ({ calls, timesPerSecond: count / DEFAULT_SETTINGS.catalogCacheSeconds / background.versionCopies.length })));
      parts.push(...background.reloadCopies.map((calls) => ({ calls, timesPerSecond: count / RELOAD_WINDOW_SECONDS / background.reloadCopies.length })));
    }
    if (fn === 'catalog') {
      parts.push(...background.popularityCopies.map((calls) => ({ calls, timesPerSecond: count / USAGE_FIGURES_SECONDS / background.popularityCopies.length })));
    }
    parts.push({ calls: background.signingKeys, timesPerSecond: count / SIGNING_KEYS_SECONDS[fn] });
  }
  return parts;
}

/** A row's requests at its rate, with the requests' own calls and what its containers read on their own. */
export function rowParts(row: MeasuredRow, moment: LimitMoment = 'steady'): Part[] {
  if (row.budgets) return limitedParts(row, moment);
  // A completion's open item, spread as AWS spreads it, and its spend in flight on its container's shard.
  if (row.id !== 'address-exchanges') {
    return row.callsPerRequest.map((calls) => ({
      calls: calls.map((call) => (call.items ? { ...call, items: call.items.map(spreadSpend).flatMap(spreadOpen) } : call)),
      timesPerSecond: row.rate! / row.requests,
    }));
  }
  // One address over a window: its limit counted (each a write), then every container that meets
  // the full counter writes once and remembers it; the rest of the window costs no write.
  const windowSeconds = DEFAULT_SETTINGS.exchangeRateWindowSeconds;
  const limit = DEFAULT_SETTINGS.exchangeRateLimit;
  const containers = row.rate! * INVOCATION_SECONDS.tokenExchange;
  const counted = row.callsPerRequest.slice(0, limit);
  const firstRefused = row.callsPerRequest[limit] ?? [];
  const remembered = row.callsPerRequest.slice(limit + 1);
  return [
    ...counted.map((calls) => ({ calls, timesPerSecond: 1 / windowSeconds })),
    { calls: firstRefused, timesPerSecond: containers / windowSeconds },
    ...remembered.map((calls) => ({ calls, timesPerSecond: (row.rate! - (limit + containers) / windowSeconds) / remembered.length })),
  ];
}

/** A row at its rate, its containers' own reads included. */
export function rowLoad(row: MeasuredRow, background: BackgroundReads, moment: LimitMoment = 'steady'): ScaleLoad {
  return combinedLoad([...rowParts(row, moment), ...backgroundParts(containersOf(row), background)]);
}

/** Every rate-targeted row at once, with the containers they all keep busy. */
export function togetherLoad(rows: readonly MeasuredRow[], background: BackgroundReads): ScaleLoad {
  const rated = rows.filter((row) => row.rate !== undefined);
  const containers: Partial<Record<FunctionId, number>> = {};
  for (const row of rated) for (const [fn, count] of Object.entries(containersOf(row)) as [FunctionId, number][]) containers[fn] = (containers[fn] ?? 0) + count;
  return combinedLoad([...rated.flatMap((row) => rowParts(row)), ...backgroundParts(containers, background)]);
}
