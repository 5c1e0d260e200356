import {
  BatchGetCommand,
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
 * Usage counters in the usage table, one item per fact, every count an atomic `ADD`
 * (costs are exact decimals, which DynamoDB numbers hold to 38 digits):
 *
 * - `KEY#<hash>` / `<date>#<model>#<provider tag>`: a key's requests, tokens and cost per
 *   day, model and endpoint, with requests split by credential (`via_api_key`,
 *   `via_policy_<id>`); indexed by organization and date for the activity listing;
 * - `KEY#<hash>` / `TOTAL`: the key's all-time cost;
 * - `MODEL_DAY#<date>` / `<model id>`: requests and tokens per model, for the catalog's
 *   usage sorts.
 */
export class DynamoUsageStore implements UsageStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(record: UsageRecord): Promise<void> {
    const cost = NumberValue.from(record.cost);
    const tokens = record.promptTokens + record.completionTokens;
    const viaAttribute = record.via.credential === 'api_key' ? 'via_api_key' : `via_policy_${record.via.policyId ?? 'unknown'}`;
    const sk = `${record.date}#${record.model.id}#${record.endpoint.tag}`;
    await Promise.all([
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: `KEY#${record.keyHash}`, sk },
          UpdateExpression:
            'SET gsi1pk = :org, gsi1sk = :orgSk, #date = :date, model = :model, permaslug = :permaslug, endpointId = :endpointId, providerName = :provider ' +
            'ADD requests :one, promptTokens :prompt, completionTokens :completion, cost :cost, #via :one',
          ExpressionAttributeNames: { '#date': 'date', '#via': viaAttribute },
          ExpressionAttributeValues: {
            ':org': `ORG#${record.organizationId}`,
            ':orgSk': `${record.date}#${record.keyHash}#${record.model.id}#${record.endpoint.tag}`,
            ':date': record.date,
            ':model': record.model.id,
            ':permaslug': record.model.canonical_slug,
            ':endpointId': endpointId(record.model, record.endpoint),
            ':provider': record.endpoint.provider_name,
            ':one': 1,
            ':prompt': record.promptTokens,
            ':completion': record.completionTokens,
            ':cost': cost,
          },
        }),
      ),
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: `KEY#${record.keyHash}`, sk: 'TOTAL' },
          UpdateExpression: 'ADD requests :one, cost :cost',
          ExpressionAttributeValues: { ':one': 1, ':cost': cost },
        }),
      ),
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: `MODEL_DAY#${record.date}`, sk: record.model.id },
          UpdateExpression: 'ADD requests :one, tokens :tokens',
          ExpressionAttributeValues: { ':one': 1, ':tokens': tokens },
        }),
      ),
    ]);
  }

  async keyUsage(organizationId: string, keyHashes: readonly string[], now: Date): Promise<Map<string, KeyUsage>> {
    const wanted = new Set(keyHashes);
    const out = new Map<string, KeyUsage>();
    if (wanted.size === 0) return out;
    const starts = periodStarts(now);
    const from = starts.week < starts.month ? starts.week : starts.month;
    const entry = (hash: string) => {
      let usage = out.get(hash);
      if (!usage) out.set(hash, (usage = { usage: 0, daily: 0, weekly: 0, monthly: 0 }));
      return usage;
    };
    // One query for the organization's rows of this week and month, however many keys.
    for (const row of await this.activityItems(organizationId, from, starts.day)) {
      const hash = row.keyHash as string;
      if (!wanted.has(hash)) continue;
      const usage = entry(hash);
      const cost = Number(row.cost ?? 0);
      const date = row.date as string;
      if (date === starts.day) usage.daily += cost;
      if (date >= starts.week) usage.weekly += cost;
      if (date >= starts.month) usage.monthly += cost;
    }
    const hashes = [...wanted];
    for (let i = 0; i < hashes.length; i += 100) {
      const keys = hashes.slice(i, i + 100).map((hash) => ({ pk: `KEY#${hash}`, sk: 'TOTAL' }));
      let request: Record<string, { Keys: Record<string, unknown>[] }> | undefined = { [this.tableName]: { Keys: keys } };
      while (request && Object.keys(request).length > 0) {
        const result = await this.client.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of result.Responses?.[this.tableName] ?? []) entry((item.pk as string).slice(4)).usage = Number(item.cost ?? 0);
        request = result.UnprocessedKeys as typeof request;
      }
    }
    return out;
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

  /** The organization's key/day/model items from `from` to `to` (dates, inclusive), key hash attached. */
  private async activityItems(organizationId: string, from: string, to: string): Promise<Record<string, unknown>[]> {
    const items = await this.queryAll({
      IndexName: BY_ORGANIZATION_INDEX,
      KeyConditionExpression: 'gsi1pk = :org AND gsi1sk BETWEEN :from AND :to',
      // `~` sorts after every character of a key hash, model id and tag.
      ExpressionAttributeValues: { ':org': `ORG#${organizationId}`, ':from': from, ':to': `${to}~` },
    });
    return items.map((item) => ({ ...item, keyHash: (item.pk as string).slice(4) }));
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
