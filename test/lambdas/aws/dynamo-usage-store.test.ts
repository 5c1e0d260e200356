import { DynamoUsageStore } from '../../../lambdas/aws/dynamo-usage-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import type { UsageRecord } from '../../../lambdas/usage/usage';
import { providerEndpoint, publicModel } from '../../support/catalog-fixtures';
import { startEmbeddedTables } from '../../support/embedded-tables';

const KEY_A = 'a'.repeat(64);
const KEY_B = 'b'.repeat(64);

const record = (overrides: Partial<UsageRecord> = {}): UsageRecord => ({
  organizationId: 'org-1',
  keyHash: KEY_A,
  model: publicModel('acme/chat', { canonical_slug: 'acme/chat-2026-01-01' }),
  endpoint: providerEndpoint('acme/fp8', { provider_name: 'Acme' }),
  promptTokens: 10,
  completionTokens: 5,
  cost: '0.0000003',
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
      Array.from({ length: 40 }, (_, i) =>
        store.record(record({ via: i % 2 === 0 ? { credential: 'api_key' } : { credential: 'access_token', policyId: i % 4 === 1 ? 'p1' : 'p2' } })),
      ),
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
    await store.record(record({ keyHash: KEY_B, date: '2026-10-30', cost: '1' }));
    await store.record(record({ keyHash: KEY_B, date: '2026-11-02', cost: '2' }));
    await store.record(record({ keyHash: KEY_B, date: '2026-11-16', cost: '4' }));
    await store.record(record({ keyHash: KEY_B, date: '2026-11-18', cost: '8' }));
    const usage = await store.keyUsage('org-1', [KEY_B, 'c'.repeat(64)], new Date('2026-11-18T23:00:00Z'));
    expect(Object.fromEntries(usage)).toEqual({ [KEY_B]: { usage: 15, daily: 8, weekly: 12, monthly: 14 } });
    expect(await store.keyUsage('org-2', [KEY_B], new Date('2026-11-18T23:00:00Z'))).toEqual(new Map([[KEY_B, { usage: 15, daily: 0, weekly: 0, monthly: 0 }]]));
  });

  it('sums requests and tokens per model over the recent days', async () => {
    const figures = await store.modelUsage(new Date('2026-11-18T12:00:00Z'), 7);
    // Days 12 to 18: the 40 requests of the 18th and the 16th and 18th of key B.
    expect(figures.get('acme/chat')).toEqual({ requests: 42, tokens: 42 * 15 });
    expect((await store.modelUsage(new Date('2026-11-18T12:00:00Z'), 1)).get('acme/chat')).toEqual({ requests: 41, tokens: 41 * 15 });
  });
});
