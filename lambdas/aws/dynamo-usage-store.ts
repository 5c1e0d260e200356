import {
  NumberValue,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
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
 * - `KEY#<hash>` / `<date>#<model>#<provider tag>`: a key's requests, tokens and cost per UTC
 *   day, model and endpoint, with requests split by credential (`via_api_key`,
 *   `via_policy_<id>`); indexed by organization and date for the activity listing. Every
 *   usage view is a sum of these items: all time, day, week and month of `GET /key` and
 *   `GET /keys`, and the rows of `GET /activity`; none is kept apart, so none can disagree.
 * - `MODEL_DAY#<date>` / `<model id>`: requests and tokens per model, the popularity figure
 *   of the catalog's usage sorts; a second write, not a usage view (see docs/operating.md).
 *
 * Earlier releases also kept `KEY#<hash>` / `TOTAL` (the all-time cost, written apart from
 * the day item); it is no longer written and never read: day items sort before it and the
 * key queries stop at the last date.
 */
export class DynamoUsageStore implements UsageStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(record: UsageRecord): Promise<void> {
    const viaAttribute = record.via.credential === 'api_key' ? 'via_api_key' : `via_policy_${record.via.policyId ?? 'unknown'}`;
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: keyPartition(record.keyHash), sk: `${record.date}#${record.model.id}#${record.endpoint.tag}` },
        UpdateExpression:
          'SET gsi1pk = :org, gsi1sk = :orgSk, #date = :date, model = :model, permaslug = :permaslug, endpointId = :endpointId, providerName = :provider ' +
          'ADD requests :one, promptTokens :prompt, completionTokens :completion, cost :cost, #via :one',
        ExpressionAttributeNames: { '#date': 'date', '#via': viaAttribute },
        ExpressionAttributeValues: {
          ':org': organizationPartition(record.organizationId),
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
        Key: { pk: `MODEL_DAY#${record.date}`, sk: record.model.id },
        UpdateExpression: 'ADD requests :one, tokens :tokens',
        ExpressionAttributeValues: { ':one': 1, ':tokens': record.promptTokens + record.completionTokens },
      }),
    );
  }

  async keyUsage(organizationId: string, keyHashes: readonly string[], now: Date): Promise<Map<string, KeyUsage>> {
    const wanted = new Set(keyHashes);
    if (wanted.size === 0) return new Map();
    // One key (`GET /key`, `GET /keys/{hash}`): one strongly consistent query of its own
    // partition. Several: one query of the organization's index, all dates.
    const items =
      wanted.size === 1
        ? await this.keyItems(organizationId, [...wanted][0]!)
        : (await this.activityItems(organizationId, FIRST_DATE, LAST_DATE)).filter((item) => wanted.has(item.keyHash as string));
    return sumByKey(items, now);
  }

  async organizationUsage(organizationId: string, now: Date): Promise<Map<string, KeyUsage>> {
    return sumByKey(await this.activityItems(organizationId, FIRST_DATE, LAST_DATE), now);
  }

  async activity(organizationId: string, from: string, to: string): Promise<ActivityRow[]> {
    return (await this.activityItems(organizationId, from, to)).map((item) => {
      const requestsViaPolicy: Record<string, number> = {};
      for (const [name, value] of Object.entries(item)) {
        if (name.startsWith('via_policy_')) requestsViaPolicy[name.slice('via_policy_'.length)] = Number(value);
      }
      return {
        date: item.date as string,
        model: item.model as string,
        modelPermaslug: item.permaslug as string,
        endpointId: item.endpointId as string,
        providerName: item.providerName as string,
        keyHash: item.keyHash as string,
        requests: Number(item.requests ?? 0),
        promptTokens: Number(item.promptTokens ?? 0),
        completionTokens: Number(item.completionTokens ?? 0),
        usage: Number(item.cost ?? 0),
        requestsViaApiKey: Number(item.via_api_key ?? 0),
        requestsViaPolicy,
      };
    });
  }

  async modelUsage(now: Date, days: number): Promise<ModelUsage> {
    const out = new Map<string, { requests: number; tokens: number }>();
    const dates = Array.from({ length: days }, (_, i) => daysBefore(now, i));
    const pages = await Promise.all(dates.map((date) => this.queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `MODEL_DAY#${date}` } })));
    for (const item of pages.flat()) {
      const model = item.sk as string;
      const current = out.get(model) ?? { requests: 0, tokens: 0 };
      out.set(model, { requests: current.requests + Number(item.requests ?? 0), tokens: current.tokens + Number(item.tokens ?? 0) });
    }
    return out;
  }

  /**
   * Every day item of one key, read consistently: one query of the key's partition (one page
   * per some thousands of items, see docs/operating.md). Only the organization's: a key
   * belongs to one, and a hash asked for under another reads as no usage.
   */
  private async keyItems(organizationId: string, keyHash: string): Promise<Record<string, unknown>[]> {
    const items = await this.queryAll({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': keyPartition(keyHash), ':from': FIRST_DATE, ':to': `${LAST_DATE}~` },
      ProjectionExpression: 'gsi1pk, #date, cost',
      ExpressionAttributeNames: { '#date': 'date' },
      ConsistentRead: true,
    });
    const organization = organizationPartition(organizationId);
    return items.filter((item) => item.gsi1pk === organization).map((item) => ({ ...item, keyHash }));
  }

  /** The organization's key/day/model items from `from` to `to` (dates, inclusive), key hash attached. */
  private async activityItems(organizationId: string, from: string, to: string): Promise<Record<string, unknown>[]> {
    const items = await this.queryAll({
      IndexName: BY_ORGANIZATION_INDEX,
      KeyConditionExpression: 'gsi1pk = :org AND gsi1sk BETWEEN :from AND :to',
      // `~` sorts after every character of a key hash, model id and tag.
      ExpressionAttributeValues: { ':org': organizationPartition(organizationId), ':from': from, ':to': `${to}~` },
    });
    return items.map((item) => ({ ...item, keyHash: (item.pk as string).slice('KEY#'.length) }));
  }

  private async queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(new QueryCommand({ ...input, TableName: this.tableName, ExclusiveStartKey: startKey }));
      items.push(...((page.Items ?? []) as Record<string, unknown>[]));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }
}

/** Day items sort by their date: every date lies between these, the old `TOTAL` item after. */
const FIRST_DATE = '0000-01-01';
const LAST_DATE = '9999-12-31';

const keyPartition = (keyHash: string) => `KEY#${keyHash}`;
const organizationPartition = (organizationId: string) => `ORG#${organizationId}`;

/** All-time, day, week and month usage per key, summed from its day items. */
function sumByKey(items: readonly Record<string, unknown>[], now: Date): Map<string, KeyUsage> {
  const starts = periodStarts(now);
  const out = new Map<string, KeyUsage>();
  for (const item of items) {
    const hash = item.keyHash as string;
    let usage = out.get(hash);
    if (!usage) out.set(hash, (usage = { usage: 0, daily: 0, weekly: 0, monthly: 0 }));
    const cost = Number(item.cost ?? 0);
    const date = item.date as string;
    usage.usage += cost;
    if (date === starts.day) usage.daily += cost;
    if (date >= starts.week) usage.weekly += cost;
    if (date >= starts.month) usage.monthly += cost;
  }
  return out;
}
