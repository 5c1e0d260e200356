import { NumberValue, type DynamoDBDocumentClient, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { addDecimals, expandExponent } from '../decimal';
import { systemRandom, type Random } from '../clock';
import { DynamoItems, itemId } from './dynamo-items';
import { BY_ORGANIZATION_INDEX } from './table-schemas';
import { FIRST_DATE, NO_USAGE, endpointId, nextDate, periodStarts, type ActivityRow, type KeptUsage, type KeyUsage, type UsageStore } from '../usage/usage';

/**
 * Usage in the usage table (docs/architecture.md, "Data layout", "Usage over time"). A
 * completion's usage is one item, one atomic `UpdateItem` (every counter an `ADD`; costs exact
 * decimals, which DynamoDB numbers hold to 38 digits), so a crash counts it whole or not at all:
 * `KEY#<hash>#<shard % 16>` / `<date>#<model>#<provider tag>#<shard>`, a key's requests (split by
 * credential: `via_api_key`, `via_policy_<id>`), tokens and cost per UTC day, model and endpoint,
 * indexed under `ORG#<org>#<shard>` / `<date>#<hash>#<model>#<tag>`, in one of
 * {@link USAGE_SHARDS} shards chosen at random. Closed days are folded (dynamo-usage-fold.ts): a
 * view reads the folded rows and totals and the shards after them, never the whole history.
 * Earlier releases wrote the day items unsharded (`KEY#<hash>`, indexed under `ORG#<org>`): every
 * read of shards reads those partitions too, and an organization's first fold folds them all.
 */
export class DynamoUsageStore implements UsageStore {
  private readonly items: DynamoItems;

  /** `random` chooses each write's shard. */
  constructor(
    client: DynamoDBDocumentClient,
    tableName: string,
    private readonly random: Random = systemRandom,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  async record(record: KeptUsage): Promise<void> {
    await this.items.update(usageUpdate(record, Math.min(USAGE_SHARDS - 1, Math.floor(this.random() * USAGE_SHARDS))));
  }

  /**
   * The keys' running totals and the organization's fold mark (one BatchGetItem), and the shards
   * of the days after what each key's totals hold: one key's own partitions, several keys' from
   * the organization's index. Given the mark (`known`, read beside what came before), the totals
   * and the shards after the mark are read side by side. A key of another organization has no
   * usage here.
   */
  async keyUsage(organizationId: string, keyHashes: readonly string[], now: Date, known?: { foldedThrough: string | undefined }): Promise<Map<string, KeyUsage>> {
    const hashes = [...new Set(keyHashes)];
    if (hashes.length === 0) return new Map();
    const mark = foldMarkKey(organizationId);
    const shardsAfter = (date: string | undefined) =>
      hashes.length === 1 ? this.keyShards(organizationId, hashes[0]!, nextDate(date)) : this.organizationShards(organizationId, nextDate(date), LAST_DATE);
    const [found, early] = await Promise.all([
      this.items.batchGet(known ? hashes.map(totalsKey) : [mark, ...hashes.map(totalsKey)]),
      known ? shardsAfter(known.foldedThrough) : undefined,
    ]);
    const folded = known ? known.foldedThrough : dateOf(found.get(itemId(mark.pk, mark.sk))?.foldedThrough);
    const totals = new Map(
      hashes.flatMap((hash) => {
        const { pk, sk } = totalsKey(hash);
        const item = found.get(itemId(pk, sk));
        return item && item.organizationId === organizationId ? [[hash, item] as const] : [];
      }),
    );
    // Each key's shards after the later of the organization's mark and its own totals.
    const after = new Map(hashes.map((hash) => [hash, laterDate(folded, dateOf(totals.get(hash)?.foldedThrough))]));
    const open = early ?? (await shardsAfter(folded));
    const wanted = open.filter((item) => after.has(item.keyHash as string) && (item.date as string) > (after.get(item.keyHash as string) ?? ''));
    return sumByKey(totals, wanted, now);
  }

  /**
   * The workspace's running totals and the organization's fold mark (one BatchGetItem), then the
   * organization's shards after the later of the two, those of the workspace summed: its keys'
   * usage without reading a key. Undefined when the totals do not count from `since` (the mark's
   * `workspacesFrom`: an organization folded by an earlier release counts from its first fold
   * since), or a shard after them carries no workspace (written by an earlier release).
   */
  async workspaceUsage(organizationId: string, workspaceId: string, now: Date, since: string): Promise<KeyUsage | undefined> {
    const mark = foldMarkKey(organizationId);
    const key = workspaceTotalsKey(organizationId, workspaceId);
    const found = await this.items.batchGet([mark, key]);
    const marked = found.get(itemId(mark.pk, mark.sk));
    const totals = found.get(itemId(key.pk, key.sk));
    // Never folded: every day is in the shards.
    const countsFrom = marked ? dateOf(marked.workspacesFrom) : FIRST_DATE;
    if (countsFrom === undefined || countsFrom > since) return undefined;
    const open = await this.organizationShards(organizationId, nextDate(laterDate(dateOf(marked?.foldedThrough), dateOf(totals?.foldedThrough))), LAST_DATE);
    if (open.some((item) => typeof item.workspaceId !== 'string')) return undefined;
    const own = open.filter((item) => item.workspaceId === workspaceId).map((item) => ({ ...item, keyHash: workspaceId }));
    return sumByKey(totals ? new Map([[workspaceId, totals]]) : new Map(), own, now).get(workspaceId) ?? NO_USAGE;
  }

  /** The day through which every key of the organization is folded; undefined before its first fold. */
  async foldMark(organizationId: string): Promise<{ foldedThrough: string | undefined }> {
    return { foldedThrough: dateOf((await this.items.getItem(foldMarkKey(organizationId)))?.foldedThrough) };
  }

  /**
   * One row per day, key, model and endpoint from `from` to `to` (UTC dates, inclusive): the
   * folded rows through the organization's fold mark, the shards of the days after it summed.
   */
  async activity(organizationId: string, from: string, to: string): Promise<ActivityRow[]> {
    const mark = await this.items.getItem(foldMarkKey(organizationId));
    const folded = dateOf(mark?.foldedThrough);
    const rows: ActivityRow[] = [];
    if (folded !== undefined && from <= folded) {
      const items = await this.items.queryAll({
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': activityPartition(organizationId), ':from': from, ':to': `${folded < to ? folded : to}~` },
      });
      rows.push(...items.map((item) => activityRow(item, decimal(item.cost))));
    }
    const openFrom = folded !== undefined && folded >= from ? nextDate(folded)! : from;
    if (openFrom <= to) rows.push(...sumRows(await this.organizationShards(organizationId, openFrom, to)).map(({ usageExact: _exact, workspaceId: _workspace, ...row }) => row));
    return rows.sort((a, b) => `${a.date}#${a.keyHash}#${a.endpointId}`.localeCompare(`${b.date}#${b.keyHash}#${b.endpointId}`));
  }

  /**
   * One key's shards from `from` (a date; none: every date), read consistently: one query of
   * each of its partitions, side by side. Only the organization's: a key belongs to one.
   */
  private async keyShards(organizationId: string, keyHash: string, from: string | undefined): Promise<Record<string, unknown>[]> {
    const partitions = [keyPartition(keyHash), ...shards(KEY_USAGE_PARTITIONS).map((partition) => `${keyPartition(keyHash)}#${partition}`)];
    const pages = await Promise.all(
      partitions.map((partition) =>
        this.items.queryAll({
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': partition, ':from': from ?? FIRST_DATE, ':to': `${LAST_DATE}~` },
          ProjectionExpression: 'gsi1pk, #date, cost',
          ExpressionAttributeNames: { '#date': 'date' },
          ConsistentRead: true,
        }),
      ),
    );
    return pages
      .flat()
      .filter(ofOrganization(organizationId))
      .map((item) => ({ ...item, keyHash }));
  }

  /** The organization's shards from `from` to `to` (dates, inclusive; no `from`: every date), of every index partition, key hash attached. */
  organizationShards(organizationId: string, from: string | undefined, to: string): Promise<Record<string, unknown>[]> {
    return organizationShards(this.items, organizationId, from, to);
  }
}

/**
 * The write that adds one completion to its usage item in `shard` (the class's comment): every
 * counter an `ADD`, so a crash counts it whole or not at all. The rollup's writes (`by`) go to
 * items of its own beside the requests' (`…#<shard>#rollup`), which every view sums alike: a
 * request's write that met one of its transactions in progress would fail (`TransactionConflict`,
 * which the SDK does not retry).
 */
export function usageUpdate(
  record: KeptUsage,
  shard: number,
  by: 'request' | 'rollup' = 'request',
): Omit<UpdateCommandInput, 'TableName'> & { Key: { pk: string; sk: string }; UpdateExpression: string } {
  const viaAttribute = record.via.credential === 'api_key' ? 'via_api_key' : `via_policy_${record.via.policyId ?? 'unknown'}`;
  return {
    Key: { pk: `${keyPartition(record.keyHash)}#${shard % KEY_USAGE_PARTITIONS}`, sk: `${record.date}#${record.model.id}#${record.endpoint.tag}#${shard}${by === 'rollup' ? '#rollup' : ''}` },
    UpdateExpression:
      'SET gsi1pk = :org, gsi1sk = :orgSk, #date = :date, model = :model, permaslug = :permaslug, endpointId = :endpointId, providerName = :provider, workspaceId = :workspace ' +
      'ADD requests :one, promptTokens :prompt, completionTokens :completion, cost :cost, #via :one',
    ExpressionAttributeNames: { '#date': 'date', '#via': viaAttribute },
    ExpressionAttributeValues: {
      ':org': `${organizationPartition(record.organizationId)}#${shard}`,
      ':orgSk': `${record.date}#${record.keyHash}#${record.model.id}#${record.endpoint.tag}`,
      ':date': record.date,
      ':model': record.model.id,
      ':permaslug': record.model.canonical_slug,
      ':endpointId': endpointId(record.model, record.endpoint),
      ':provider': record.endpoint.provider_name,
      ':workspace': record.workspaceId ?? NO_WORKSPACE,
      ':one': 1,
      ':prompt': record.promptTokens,
      ':completion': record.completionTokens,
      ':cost': NumberValue.from(record.cost),
    },
  };
}

/** The organization's index partitions from `from` to `to` (dates, inclusive), side by side, key hash attached. */
export async function organizationShards(items: DynamoItems, organizationId: string, from: string | undefined, to: string): Promise<Record<string, unknown>[]> {
  const organization = organizationPartition(organizationId);
  const partitions = [organization, ...shards(USAGE_SHARDS).map((shard) => `${organization}#${shard}`)];
  const pages = await Promise.all(
    partitions.map((partition) =>
      items.queryAll({
        IndexName: BY_ORGANIZATION_INDEX,
        KeyConditionExpression: 'gsi1pk = :org AND gsi1sk BETWEEN :from AND :to',
        // `~` sorts after every character of a key hash, model id and tag.
        ExpressionAttributeValues: { ':org': partition, ':from': from ?? FIRST_DATE, ':to': `${to}~` },
      }),
    ),
  );
  // `KEY#<hash>`, or `KEY#<hash>#<shard>`.
  return pages.flat().map((item) => ({ ...item, keyHash: (item.pk as string).slice('KEY#'.length).split('#')[0] }));
}

/**
 * Shards of a key's usage item and of an organization's index partition: an organization may
 * complete 50,000 requests a second (each of its index partitions then takes about 780 writes
 * a second, of 1,000), one key 10,000 (each shard's item about 160).
 */
export const USAGE_SHARDS = 64;
/** The partitions a key's shards lie in: a key's 10,000 writes a second take 625 of each one's 1,000. */
export const KEY_USAGE_PARTITIONS = 16;

const shards = (count: number): number[] => Array.from({ length: count }, (_, shard) => shard);

/** Day items sort by their date: every date lies between FIRST_DATE and this, the totals item after. */
const LAST_DATE = '9999-12-31';

const keyPartition = (keyHash: string) => `KEY#${keyHash}`;
const organizationPartition = (organizationId: string) => `ORG#${organizationId}`;

/** What a usage item of a key outside any workspace (a management key) holds as its `workspaceId`; an earlier release's hold none. */
export const NO_WORKSPACE = '-';

/** A workspace's running totals (folded days only), kept as a key's are: `all`, the month's and the week's cost, `foldedThrough`. */
export const workspaceTotalsKey = (organizationId: string, workspaceId: string) => ({ pk: activityPartition(organizationId), sk: `WORKSPACE_TOTALS#${workspaceId}` });
/** A key's running totals: folded days only. */
export const totalsKey = (keyHash: string) => ({ pk: keyPartition(keyHash), sk: 'USAGE_TOTALS' });
/** The organization's folded activity rows, and its fold mark among them (`FOLDED` sorts after every date). */
export const activityPartition = (organizationId: string) => `ORG#${organizationId}#ACTIVITY`;
/** The organization's fold mark: through which day every key's usage is folded. */
export const foldMarkKey = (organizationId: string) => ({ pk: activityPartition(organizationId), sk: 'FOLDED' });

const ofOrganization = (organizationId: string) => (item: Record<string, unknown>) => {
  const organization = organizationPartition(organizationId);
  return item.gsi1pk === organization || String(item.gsi1pk).startsWith(`${organization}#`);
};

const dateOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const laterDate = (a: string | undefined, b: string | undefined): string | undefined => (a === undefined ? b : b === undefined || a > b ? a : b);

/** The attribute of a month's (`YYYY-MM`) folded cost in a key's totals. */
export const monthAttribute = (date: string) => `m:${date.slice(0, 7)}`;
/** The attribute of a week's (its Monday's date) folded cost in a key's totals. */
export const weekAttribute = (monday: string) => `w:${monday}`;

/** All-time, day, week and month usage per key: its totals, and its shards after them, summed exactly. */
function sumByKey(totals: ReadonlyMap<string, Record<string, unknown>>, open: readonly Record<string, unknown>[], now: Date): Map<string, KeyUsage> {
  const starts = periodStarts(now);
  const costs = new Map<string, Record<keyof KeyUsage, string[]>>();
  const periodsOf = (hash: string) => costs.get(hash) ?? costs.set(hash, { usage: [], daily: [], weekly: [], monthly: [] }).get(hash)!;
  for (const [hash, item] of totals) {
    const periods = periodsOf(hash);
    periods.usage.push(decimal(item.all));
    periods.weekly.push(decimal(item[weekAttribute(starts.week)]));
    periods.monthly.push(decimal(item[monthAttribute(starts.day)]));
  }
  for (const item of open) {
    const periods = periodsOf(item.keyHash as string);
    const cost = decimal(item.cost);
    const date = item.date as string;
    periods.usage.push(cost);
    if (date === starts.day) periods.daily.push(cost);
    if (date >= starts.week) periods.weekly.push(cost);
    if (date >= starts.month) periods.monthly.push(cost);
  }
  const sum = (values: string[]) => Number(addDecimals(values));
  return new Map([...costs].map(([hash, periods]) => [hash, { usage: sum(periods.usage), daily: sum(periods.daily), weekly: sum(periods.weekly), monthly: sum(periods.monthly) }]));
}

/** A row summed from shards, with its cost as the exact decimal the shards add up to, and its key's workspace (none: written by an earlier release). */
export type SummedRow = ActivityRow & { usageExact: string; workspaceId?: string };

/** The shards (and an earlier release's day items) summed into one row per day, key, model and endpoint, costs exactly. */
export function sumRows(items: readonly Record<string, unknown>[]): SummedRow[] {
  const rows = new Map<string, { row: ActivityRow; costs: string[]; workspaceId?: string }>();
  for (const item of items) {
    const id = String(item.gsi1sk);
    const summed = rows.get(id) ?? rows.set(id, { row: activityRow(item, '0', true), costs: [] }).get(id)!;
    const { row, costs } = summed;
    // A key's shards all carry its workspace, but one an earlier release wrote: the row then has none.
    summed.workspaceId = typeof item.workspaceId === 'string' && (costs.length === 0 || summed.workspaceId !== undefined) ? item.workspaceId : undefined;
    row.requests += Number(item.requests ?? 0);
    row.promptTokens += Number(item.promptTokens ?? 0);
    row.completionTokens += Number(item.completionTokens ?? 0);
    costs.push(decimal(item.cost));
    row.requestsViaApiKey += Number(item.via_api_key ?? 0);
    for (const [name, value] of Object.entries(item)) {
      if (!name.startsWith('via_policy_')) continue;
      const policy = name.slice('via_policy_'.length);
      row.requestsViaPolicy[policy] = (row.requestsViaPolicy[policy] ?? 0) + Number(value);
    }
  }
  return [...rows.values()].map(({ row, costs, workspaceId }) => {
    const usageExact = addDecimals(costs);
    return { ...row, usage: Number(usageExact), usageExact, ...(workspaceId === undefined ? {} : { workspaceId }) };
  });
}

/** The row an item holds (a folded row), or an empty row for its day, key, model and endpoint (`empty`). */
function activityRow(item: Record<string, unknown>, cost: string, empty = false): ActivityRow {
  const count = (value: unknown) => (empty ? 0 : Number(value ?? 0));
  const requestsViaPolicy: Record<string, number> = {};
  if (!empty) {
    for (const [name, value] of Object.entries(item)) if (name.startsWith('via_policy_')) requestsViaPolicy[name.slice('via_policy_'.length)] = Number(value);
  }
  return {
    date: item.date as string,
    model: item.model as string,
    modelPermaslug: item.permaslug as string,
    endpointId: item.endpointId as string,
    providerName: item.providerName as string,
    keyHash: item.keyHash as string,
    requests: count(item.requests),
    promptTokens: count(item.promptTokens),
    completionTokens: count(item.completionTokens),
    usage: Number(cost),
    requestsViaApiKey: count(item.via_api_key),
    requestsViaPolicy,
  };
}

/**
 * A stored number as a plain decimal string: the document client reads numbers as JavaScript
 * numbers, whose shortest form (`3e-7`) is the stored decimal; summed as decimals, the shards'
 * costs add up exactly, in whatever order they are read.
 */
export function decimal(value: unknown): string {
  return expandExponent(String(value ?? 0));
}
