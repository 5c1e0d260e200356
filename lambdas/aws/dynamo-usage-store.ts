import { NumberValue, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { addDecimals } from '../catalog/pricing';
import { systemRandom, type Random } from '../clock';
import { DynamoItems } from './dynamo-items';
import { BY_ORGANIZATION_INDEX } from './table-schemas';
import {
  daysBefore,
  endpointId,
  periodStarts,
  type ActivityRow,
  type KeyUsage,
  type ModelUsage,
  type UsageRecord,
  type UsageStore,
} from '../usage/usage';

/**
 * Usage in the usage table. A completion's usage is one item, written by one atomic
 * `UpdateItem` (every counter an `ADD`; costs are exact decimals, which DynamoDB numbers hold
 * to 38 digits), so a crash leaves it counted whole or not at all:
 *
 * - `KEY#<hash>#<shard % 16>` / `<date>#<model>#<provider tag>#<shard>`: a key's requests,
 *   tokens and cost per UTC day, model and endpoint, with requests split by credential
 *   (`via_api_key`, `via_policy_<id>`); indexed by organization and date (`ORG#<org>#<shard>` /
 *   `<date>#<hash>#<model>#<tag>`) for the organization's views. Each completion chooses one of
 *   {@link USAGE_SHARDS} shards at random and writes that shard's item, which lies in one of the
 *   key's {@link KEY_USAGE_PARTITIONS} partitions and one of the organization's
 *   {@link USAGE_SHARDS} index partitions: no item or partition takes every write of one key,
 *   nor one index partition every write of one organization (docs/architecture.md, "Data
 *   layout"). Every usage view is a sum of these items over every shard: all time, day, week
 *   and month of `GET /key` and `GET /keys`, and the rows of `GET /activity`; none is kept
 *   apart, so none can disagree.
 * - `POPULARITY#<shard % 64>` / `<date>#<model id>#<shard>`: requests and tokens per model, the
 *   popularity figure of the catalog's usage sorts, over {@link POPULARITY_SHARDS} shards; a
 *   second write, made once the answer has ended, not a usage view (see docs/operating.md).
 *
 * Earlier releases wrote the same items unsharded (`KEY#<hash>`, indexed under `ORG#<org>`;
 * popularity `MODEL_DAY#<date>` / `<model id>`): every view reads those partitions too and
 * sums them with the shards, so their usage still counts, with nothing migrated. They also kept
 * `KEY#<hash>` / `TOTAL` (the all-time cost, written apart from the day item); it is no longer
 * written and never read: day items sort before it and the key queries stop at the last date.
 */
export class DynamoUsageStore implements UsageStore {
  private readonly items: DynamoItems;

  /** `random` chooses each write's shard. */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly random: Random = systemRandom,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  async record(record: UsageRecord): Promise<void> {
    const shard = this.shard(USAGE_SHARDS);
    const viaAttribute = record.via.credential === 'api_key' ? 'via_api_key' : `via_policy_${record.via.policyId ?? 'unknown'}`;
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `${keyPartition(record.keyHash)}#${shard % KEY_USAGE_PARTITIONS}`, sk: `${record.date}#${record.model.id}#${record.endpoint.tag}#${shard}` },
        UpdateExpression:
          'SET gsi1pk = :org, gsi1sk = :orgSk, #date = :date, model = :model, permaslug = :permaslug, endpointId = :endpointId, providerName = :provider ' +
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
          ':one': 1,
          ':prompt': record.promptTokens,
          ':completion': record.completionTokens,
          ':cost': NumberValue.from(record.cost),
        },
      }),
    );
  }

  async countModelRequest(record: UsageRecord): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: popularityKey(this.shard(POPULARITY_SHARDS), `${record.date}#${record.model.id}`),
        UpdateExpression: 'ADD requests :one, tokens :tokens',
        ExpressionAttributeValues: { ':one': 1, ':tokens': record.promptTokens + record.completionTokens },
      }),
    );
  }

  async keyUsage(organizationId: string, keyHashes: readonly string[], now: Date): Promise<Map<string, KeyUsage>> {
    const wanted = new Set(keyHashes);
    if (wanted.size === 0) return new Map();
    // One key (`GET /key`, `GET /keys/{hash}`): its own partitions, read strongly consistently.
    // Several: the organization's index, all dates.
    const items =
      wanted.size === 1
        ? await this.keyItems(organizationId, [...wanted][0]!)
        : (await this.activityItems(organizationId, FIRST_DATE, LAST_DATE)).filter((item) => wanted.has(item.keyHash as string));
    return sumByKey(items, now);
  }

  async organizationUsage(organizationId: string, now: Date): Promise<Map<string, KeyUsage>> {
    return sumByKey(await this.activityItems(organizationId, FIRST_DATE, LAST_DATE), now);
  }

  /** One row per day, key, model and endpoint: the shards' items (and an earlier release's) summed, costs exactly. */
  async activity(organizationId: string, from: string, to: string): Promise<ActivityRow[]> {
    const rows = new Map<string, { row: ActivityRow; costs: string[] }>();
    const items = (await this.activityItems(organizationId, from, to)).sort((a, b) => String(a.gsi1sk).localeCompare(String(b.gsi1sk)));
    for (const item of items) {
      const id = String(item.gsi1sk);
      const { row, costs } = rows.get(id) ?? rows.set(id, { row: emptyRow(item), costs: [] }).get(id)!;
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
    return [...rows.values()].map(({ row, costs }) => ({ ...row, usage: Number(addDecimals(costs)) }));
  }

  async modelUsage(now: Date, days: number): Promise<ModelUsage> {
    const out = new Map<string, { requests: number; tokens: number }>();
    const dates = Array.from({ length: days }, (_, i) => daysBefore(now, i));
    const [from, to] = [dates[dates.length - 1]!, dates[0]!];
    const [sharded, earlier] = await Promise.all([
      Promise.all(
        shards(POPULARITY_PARTITIONS).map((partition) =>
          this.items.queryAll({
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
            ExpressionAttributeValues: { ':pk': `${POPULARITY_PARTITION}${partition}`, ':from': from, ':to': `${to}~` },
          }),
        ),
      ),
      Promise.all(dates.map((date) => this.items.queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `MODEL_DAY#${date}` } }))),
    ]);
    const count = (model: string, item: Record<string, unknown>) => {
      const current = out.get(model) ?? { requests: 0, tokens: 0 };
      out.set(model, { requests: current.requests + Number(item.requests ?? 0), tokens: current.tokens + Number(item.tokens ?? 0) });
    };
    // `<date>#<model id>#<shard>`: the model id follows the 10-character date.
    for (const item of sharded.flat()) count((item.sk as string).slice(11, (item.sk as string).lastIndexOf('#')), item);
    for (const item of earlier.flat()) count(item.sk as string, item);
    return out;
  }

  private shard(count: number): number {
    return Math.min(count - 1, Math.floor(this.random() * count));
  }

  /**
   * Every day item of one key, read consistently: one query of each of its partitions, side by
   * side (each one page per some thousands of items, see docs/operating.md). Only the
   * organization's: a key belongs to one, and a hash asked for under another reads as no usage.
   */
  private async keyItems(organizationId: string, keyHash: string): Promise<Record<string, unknown>[]> {
    const partitions = [keyPartition(keyHash), ...shards(KEY_USAGE_PARTITIONS).map((partition) => `${keyPartition(keyHash)}#${partition}`)];
    const pages = await Promise.all(
      partitions.map((partition) =>
        this.items.queryAll({
          KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': partition, ':from': FIRST_DATE, ':to': `${LAST_DATE}~` },
          ProjectionExpression: 'gsi1pk, #date, cost',
          ExpressionAttributeNames: { '#date': 'date' },
          ConsistentRead: true,
        }),
      ),
    );
    const organization = organizationPartition(organizationId);
    const ofOrganization = (item: Record<string, unknown>) => item.gsi1pk === organization || String(item.gsi1pk).startsWith(`${organization}#`);
    return pages
      .flat()
      .filter(ofOrganization)
      .map((item) => ({ ...item, keyHash }));
  }

  /** The organization's key/day/model items from `from` to `to` (dates, inclusive), of every shard, key hash attached. */
  private async activityItems(organizationId: string, from: string, to: string): Promise<Record<string, unknown>[]> {
    const organization = organizationPartition(organizationId);
    const partitions = [organization, ...shards(USAGE_SHARDS).map((shard) => `${organization}#${shard}`)];
    const pages = await Promise.all(
      partitions.map((partition) =>
        this.items.queryAll({
          IndexName: BY_ORGANIZATION_INDEX,
          KeyConditionExpression: 'gsi1pk = :org AND gsi1sk BETWEEN :from AND :to',
          // `~` sorts after every character of a key hash, model id and tag.
          ExpressionAttributeValues: { ':org': partition, ':from': from, ':to': `${to}~` },
        }),
      ),
    );
    // `KEY#<hash>`, or `KEY#<hash>#<shard>`.
    return pages.flat().map((item) => ({ ...item, keyHash: (item.pk as string).slice('KEY#'.length).split('#')[0] }));
  }
}

/**
 * Shards of a key's usage item and of an organization's index partition: an organization may
 * complete 50,000 requests a second (each of its index partitions then takes about 780 writes
 * a second, of 1,000), one key 10,000 (each shard's item about 160).
 */
export const USAGE_SHARDS = 64;
/**
 * The partitions a key's shards lie in: a key's 10,000 writes a second take 625 of each one's
 * 1,000, and `GET /key` reads these and no more.
 */
export const KEY_USAGE_PARTITIONS = 16;
/**
 * Shards of a model's daily popularity figure, in half as many partitions: one model may complete
 * 50,000 requests a second across the deployment (390 writes a second per shard, 780 per partition).
 */
export const POPULARITY_SHARDS = 128;
const POPULARITY_PARTITIONS = POPULARITY_SHARDS / 2;
const POPULARITY_PARTITION = 'POPULARITY#';

function popularityKey(shard: number, dayAndModel: string): { pk: string; sk: string } {
  return { pk: `${POPULARITY_PARTITION}${shard % POPULARITY_PARTITIONS}`, sk: `${dayAndModel}#${shard}` };
}

const shards = (count: number): number[] => Array.from({ length: count }, (_, shard) => shard);

/** Day items sort by their date: every date lies between these, the old `TOTAL` item after. */
const FIRST_DATE = '0000-01-01';
const LAST_DATE = '9999-12-31';

const keyPartition = (keyHash: string) => `KEY#${keyHash}`;

/** A row for the day, key, model and endpoint of `item`, with nothing counted yet. */
function emptyRow(item: Record<string, unknown>): ActivityRow {
  return {
    date: item.date as string,
    model: item.model as string,
    modelPermaslug: item.permaslug as string,
    endpointId: item.endpointId as string,
    providerName: item.providerName as string,
    keyHash: item.keyHash as string,
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    usage: 0,
    requestsViaApiKey: 0,
    requestsViaPolicy: {},
  };
}
const organizationPartition = (organizationId: string) => `ORG#${organizationId}`;

/** All-time, day, week and month usage per key, summed exactly from its day items. */
function sumByKey(items: readonly Record<string, unknown>[], now: Date): Map<string, KeyUsage> {
  const starts = periodStarts(now);
  const costs = new Map<string, Record<keyof KeyUsage, string[]>>();
  for (const item of items) {
    const hash = item.keyHash as string;
    const periods = costs.get(hash) ?? costs.set(hash, { usage: [], daily: [], weekly: [], monthly: [] }).get(hash)!;
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

/**
 * A stored number as a plain decimal string: the document client reads numbers as JavaScript
 * numbers, whose shortest form (`3e-7`) is the stored decimal; summed as decimals, the shards'
 * costs add up exactly, in whatever order they are read.
 */
function decimal(value: unknown): string {
  const text = String(value ?? 0);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/i.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = '', exponent] = match;
  const digits = `${whole}${fraction}`;
  const point = whole!.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}
