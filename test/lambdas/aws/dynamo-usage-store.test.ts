import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoUsageStore, KEY_USAGE_PARTITIONS, USAGE_SHARDS } from '../../../lambdas/aws/dynamo-usage-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import type { UsageRecord } from '../../../lambdas/usage/usage';
import { providerEndpoint, publicModel } from '../../support/catalog-fixtures';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

const KEY_A = 'a'.repeat(64);
const KEY_B = 'b'.repeat(64);

const record = (overrides: Partial<UsageRecord> = {}): UsageRecord => ({
  organizationId: 'org-1',
  keyHash: KEY_A,
  workspaceId: null,
  model: publicModel('acme/chat', { canonical_slug: 'acme/chat-2026-01-01' }),
  endpoint: providerEndpoint('acme/fp8', { provider_name: 'Acme' }),
  promptTokens: 10,
  completionTokens: 5,
  cost: '0.0000003',
  costParts: { prompt: '0.0000002', completion: '0.0000001' },
  date: '2026-11-18',
  via: { credential: 'api_key' },
  ...overrides,
});

describe('DynamoUsageStore on the embedded DynamoDB', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoUsageStore;

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoUsageStore(tables.documentClient, TABLE_SCHEMAS.usage.localName);
  });
  afterAll(async () => {
    await tables.stop();
  });

  it('loses no request under concurrency and sums costs exactly', async () => {
    // 40 at once, half by key and half by two policies' tokens: every ADD lands.
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => {
        const completed = record({ via: i % 2 === 0 ? { credential: 'api_key' } : { credential: 'access_token', policyId: i % 4 === 1 ? 'p1' : 'p2' } });
        return store.record(completed);
      }),
    );
    const rows = await store.activity('org-1', '2026-11-18', '2026-11-18');
    expect(rows).toEqual([
      {
        date: '2026-11-18',
        model: 'acme/chat',
        modelPermaslug: 'acme/chat-2026-01-01',
        endpointId: 'acme/chat:acme/fp8',
        providerName: 'Acme',
        keyHash: KEY_A,
        requests: 40,
        promptTokens: 400,
        completionTokens: 200,
        // 40 × 0.0000003, exact (floating point would say 0.000011999999999999999).
        usage: 0.000012,
        requestsViaApiKey: 20,
        requestsViaPolicy: { p1: 10, p2: 10 },
      },
    ]);
  });

  it('reports each key\'s usage all time and in the current UTC day, week and month', async () => {
    // Wednesday 2026-11-18: the week began Monday the 16th, the month on the 1st.
    for (const [date, cost] of [['2026-10-30', '1'], ['2026-11-02', '2'], ['2026-11-16', '4'], ['2026-11-18', '8']] as const) {
      const completed = record({ keyHash: KEY_B, date, cost });
      await store.record(completed);
    }
    const now = new Date('2026-11-18T23:00:00Z');
    const expected = { usage: 15, daily: 8, weekly: 12, monthly: 14 };
    // Several keys (GET /keys) read the organization's index; one key (GET /key) its partition.
    expect(Object.fromEntries(await store.keyUsage('org-1', [KEY_B, 'c'.repeat(64)], now))).toEqual({ [KEY_B]: expected });
    expect(Object.fromEntries(await store.keyUsage('org-1', [KEY_B], now))).toEqual({ [KEY_B]: expected });
    // A key belongs to one organization: asked for under another, it has no usage there.
    expect(await store.keyUsage('org-2', [KEY_B], now)).toEqual(new Map());
    expect(await store.keyUsage('org-2', [KEY_B, KEY_A], now)).toEqual(new Map());
  });

  it('writes a completion as one UpdateItem of one item that holds every counter', async () => {
    const sent: { command: string; input: Record<string, unknown> }[] = [];
    const counting = interceptSend(tables.documentClient, (command, send) => {
      sent.push({ command: command.constructor.name, input: command.input });
      return send();
    });
    const KEY_D = 'd'.repeat(64);
    // The shard is chosen at random: 0.2 of 64 shards is shard 12, in the key's 12th of 16 partitions and the organization's 12th index partition.
    await new DynamoUsageStore(counting, TABLE_SCHEMAS.usage.localName, () => 0.2).record(
      record({ keyHash: KEY_D, workspaceId: 'w-d', promptTokens: 7, completionTokens: 3, cost: '0.25', via: { credential: 'access_token', policyId: 'p9' } }),
    );
    expect(sent.map(({ command, input }) => [command, input.Key])).toEqual([['UpdateCommand', { pk: `KEY#${KEY_D}#12`, sk: '2026-11-18#acme/chat#acme/fp8#12' }]]);
    const item = await tables.documentClient.send(
      new GetCommand({ TableName: TABLE_SCHEMAS.usage.localName, Key: { pk: `KEY#${KEY_D}#12`, sk: '2026-11-18#acme/chat#acme/fp8#12' }, ConsistentRead: true }),
    );
    expect(item.Item).toEqual({
      pk: `KEY#${KEY_D}#12`,
      sk: '2026-11-18#acme/chat#acme/fp8#12',
      gsi1pk: 'ORG#org-1#12',
      gsi1sk: `2026-11-18#${KEY_D}#acme/chat#acme/fp8`,
      date: '2026-11-18',
      model: 'acme/chat',
      permaslug: 'acme/chat-2026-01-01',
      endpointId: 'acme/chat:acme/fp8',
      providerName: 'Acme',
      workspaceId: 'w-d',
      requests: 1,
      promptTokens: 7,
      completionTokens: 3,
      cost: 0.25,
      via_policy_p9: 1,
    });
    // Every view is a sum of that item: nothing else was written that could disagree with it.
    const now = new Date('2026-11-18T12:00:00Z');
    expect(Object.fromEntries(await store.keyUsage('org-1', [KEY_D], now))).toEqual({ [KEY_D]: { usage: 0.25, daily: 0.25, weekly: 0.25, monthly: 0.25 } });
    expect((await store.activity('org-1', '2026-11-18', '2026-11-18')).filter((row) => row.keyHash === KEY_D)).toEqual([
      expect.objectContaining({ requests: 1, usage: 0.25, requestsViaApiKey: 0, requestsViaPolicy: { p9: 1 } }),
    ]);
  });

  it('reads the day items of the earlier layout and ignores its separate all-time item', async () => {
    // Earlier releases gave a key `TOTAL`, written apart from its day items, so a crash
    // could leave the two disagreeing: the day items are what was charged.
    const KEY_E = 'e'.repeat(64);
    await store.record(record({ keyHash: KEY_E, cost: '2' }));
    await tables.documentClient.send(new PutCommand({ TableName: TABLE_SCHEMAS.usage.localName, Item: { pk: `KEY#${KEY_E}`, sk: 'TOTAL', requests: 9, cost: 99 } }));
    const now = new Date('2026-11-18T12:00:00Z');
    expect(Object.fromEntries(await store.keyUsage('org-1', [KEY_E], now))).toEqual({ [KEY_E]: { usage: 2, daily: 2, weekly: 2, monthly: 2 } });
    expect((await store.keyUsage('org-1', [KEY_E, KEY_A], now)).get(KEY_E)).toEqual({ usage: 2, daily: 2, weekly: 2, monthly: 2 });
  });

  it('spreads one key\'s completions over its shards, and every view sums them into one row, exactly', async () => {
    const KEY_F = 'f'.repeat(64);
    let next = 0;
    // Each write to the next shard in turn: 3 completions per shard.
    const spread = new DynamoUsageStore(tables.documentClient, TABLE_SCHEMAS.usage.localName, () => (next++ % USAGE_SHARDS) / USAGE_SHARDS);
    await Promise.all(Array.from({ length: 3 * USAGE_SHARDS }, () => spread.record(record({ keyHash: KEY_F, organizationId: 'org-f', cost: '0.0000001' }))));
    const partitions = await tables.documentClient.send(
      new ScanCommand({ TableName: TABLE_SCHEMAS.usage.localName, FilterExpression: 'begins_with(pk, :key)', ExpressionAttributeValues: { ':key': `KEY#${KEY_F}` } }),
    );
    expect(partitions.Items).toHaveLength(USAGE_SHARDS);
    expect(new Set(partitions.Items!.map((item) => item.pk)).size).toBe(KEY_USAGE_PARTITIONS);
    expect(new Set(partitions.Items!.map((item) => item.gsi1pk)).size).toBe(USAGE_SHARDS);
    const now = new Date('2026-11-18T12:00:00Z');
    // 192 × 0.0000001, exact in every view.
    const expected = { usage: 0.0000192, daily: 0.0000192, weekly: 0.0000192, monthly: 0.0000192 };
    expect(Object.fromEntries(await store.keyUsage('org-f', [KEY_F], now))).toEqual({ [KEY_F]: expected });
    expect(Object.fromEntries(await store.keyUsage('org-f', [KEY_F, KEY_A], now))).toEqual({ [KEY_F]: expected });
    expect(await store.activity('org-f', '2026-11-18', '2026-11-18')).toEqual([
      expect.objectContaining({ keyHash: KEY_F, requests: 192, promptTokens: 1920, completionTokens: 960, usage: 0.0000192, requestsViaApiKey: 192 }),
    ]);
  });

  it('counts what earlier releases wrote unsharded with what is written now: keys and activity, nothing migrated', async () => {
    const KEY_G = '9'.repeat(64);
    // As a release before shards wrote a completion: the key's own partition, the organization's unsharded index partition.
    await tables.documentClient.send(
      new PutCommand({
        TableName: TABLE_SCHEMAS.usage.localName,
        Item: {
          pk: `KEY#${KEY_G}`,
          sk: '2026-11-18#acme/chat#acme/fp8',
          gsi1pk: 'ORG#org-g',
          gsi1sk: `2026-11-18#${KEY_G}#acme/chat#acme/fp8`,
          date: '2026-11-18',
          model: 'acme/chat',
          permaslug: 'acme/chat-2026-01-01',
          endpointId: 'acme/chat:acme/fp8',
          providerName: 'Acme',
          requests: 2,
          promptTokens: 20,
          completionTokens: 10,
          cost: 0.5,
          via_api_key: 1,
          via_policy_p1: 1,
        },
      }),
    );
    await store.record(record({ keyHash: KEY_G, organizationId: 'org-g', cost: '0.25', via: { credential: 'access_token', policyId: 'p1' } }));
    const now = new Date('2026-11-18T12:00:00Z');
    const expected = { usage: 0.75, daily: 0.75, weekly: 0.75, monthly: 0.75 };
    expect(Object.fromEntries(await store.keyUsage('org-g', [KEY_G], now))).toEqual({ [KEY_G]: expected });
    expect(Object.fromEntries(await store.keyUsage('org-g', [KEY_G, KEY_A], now))).toEqual({ [KEY_G]: expected });
    expect(await store.activity('org-g', '2026-11-18', '2026-11-18')).toEqual([
      expect.objectContaining({ keyHash: KEY_G, requests: 3, promptTokens: 30, completionTokens: 15, usage: 0.75, requestsViaApiKey: 1, requestsViaPolicy: { p1: 2 } }),
    ]);
  });
});
