import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoOpenCompletions, OPEN_PREFIX } from '../../../lambdas/aws/dynamo-open-completions';
import { DynamoGenerationStore } from '../../../lambdas/aws/dynamo-generation-store';
import { DynamoUsageStore } from '../../../lambdas/aws/dynamo-usage-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { RUNNING_REQUEST_SECONDS } from '../../../lambdas/spending/ledgers';
import { OPEN_BUCKET_SECONDS, OPEN_HOURS_READ, diedGeneration, openBucketEnds, openBucketOf, type OpenCompletion } from '../../../lambdas/spending/open-completions';
import { FOLD_GRACE_MS } from '../../../lambdas/usage/usage';
import { FixedClock } from '../../support/fixed-clock';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

const TABLE = TABLE_SCHEMAS.usage.localName;
const SHARDS = 4;

/** A limited completion of `keyHash` begun at `at`, recorded at $0.25 should it die. */
function completion(organizationId: string, keyHash: string, id: string, at: Date): OpenCompletion {
  const date = at.toISOString().slice(0, 10);
  return {
    usage: {
      organizationId,
      keyHash,
      workspaceId: 'w-open',
      model: { id: 'acme/chat', canonical_slug: 'acme/chat-2026' },
      endpoint: { tag: 'acme/fp8', provider_name: 'Acme' },
      promptTokens: 4096,
      completionTokens: 1000,
      cost: '0.25',
      costParts: { prompt: '0.05', completion: '0.2' },
      date,
      via: { credential: 'access_token', policyId: 'fp-1' },
      charge: 'maximum',
    },
    request: {
      generationId: id,
      requestId: `req-${id}`,
      createdAt: at.toISOString(),
      streamed: true,
      origin: '',
      httpReferer: null,
      userAgent: 'OpenAI/JS 6.9.1',
      externalUser: null,
    },
  };
}

/**
 * Open completions (lambdas/aws/dynamo-open-completions.ts): a limited completion whose function
 * dies is recorded by the rollup once its hour has ended and no request can still run, as the
 * usage and generation its estimate stands for, exactly once however many rollups run; one that
 * ended (its close lost) is only closed.
 */
describe('open completions', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let usage: DynamoUsageStore;
  let generations: DynamoGenerationStore;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    usage = new DynamoUsageStore(tables.documentClient, TABLE);
    generations = new DynamoGenerationStore(tables.documentClient, TABLE, new FixedClock(new Date('2026-12-02T12:00:00Z')));
  });
  afterAll(() => tables.stop());

  const store = (options: ConstructorParameters<typeof DynamoOpenCompletions>[2] = {}) => new DynamoOpenCompletions(tables.documentClient, TABLE, { shards: SHARDS, ...options });
  const openItems = async () => {
    const { Items = [] } = await tables.documentClient.send(new ScanCommand({ TableName: TABLE, FilterExpression: 'begins_with(pk, :open)', ExpressionAttributeValues: { ':open': OPEN_PREFIX }, ConsistentRead: true }));
    return Items;
  };

  it('leaves a day its last hour to end before the day may be folded', () => {
    expect(OPEN_BUCKET_SECONDS * 1000 * Math.round(86_400 / OPEN_BUCKET_SECONDS)).toBe(86_400_000);
    const lastHour = openBucketOf(new Date('2026-12-01T23:59:59Z'));
    expect(openBucketEnds(lastHour)).toBe(Date.parse('2026-12-02T00:00:00Z') + RUNNING_REQUEST_SECONDS * 1000);
    expect(openBucketEnds(lastHour)).toBeLessThan(Date.parse('2026-12-02T00:00:00Z') + FOLD_GRACE_MS);
  });

  it('records a completion left open once no request of its hour can run, once, and none that closed', async () => {
    const begun = new Date('2026-12-01T10:59:30Z');
    const died = completion('org-died', 'k-died', 'gen-died-0001', begun);
    const ended = completion('org-died', 'k-died', 'gen-ended-0001', begun);
    const opened = store();
    await Promise.all([opened.open(died), opened.open(ended)]);
    await opened.close(ended);

    // Its hour has ended, but a request begun in it may still run: nothing is recorded yet.
    const ends = openBucketEnds(openBucketOf(begun));
    expect(await opened.recordDied(new Date(ends - 1))).toEqual({ recorded: 0, failed: new Set() });
    expect(await usage.keyUsage('org-died', ['k-died'], new Date(ends))).toEqual(new Map());

    // Two rollups at once: one records it.
    const counts = await Promise.all([store().recordDied(new Date(ends)), store().recordDied(new Date(ends + 1000))]);
    expect(counts.map(({ recorded }) => recorded).sort()).toEqual([0, 1]);
    expect((await store().recordDied(new Date(ends + 3_600_000))).recorded).toBe(0);
    expect(await openItems()).toEqual([]);
    // On an item of the rollup's own, which no request's usage write meets in a transaction.
    const { Items: recorded = [] } = await tables.documentClient.send(
      new ScanCommand({ TableName: TABLE, FilterExpression: 'begins_with(pk, :key)', ExpressionAttributeValues: { ':key': 'KEY#k-died#' }, ConsistentRead: true }),
    );
    expect(recorded.map((item) => item.sk)).toEqual([expect.stringMatching(/^2026-12-01#acme\/chat#acme\/fp8#\d+#rollup$/)]);

    const now = new Date('2026-12-02T12:00:00Z');
    expect(Object.fromEntries(await usage.keyUsage('org-died', ['k-died'], now))).toEqual({ 'k-died': { usage: 0.25, daily: 0, weekly: 0.25, monthly: 0.25 } });
    expect(await usage.activity('org-died', '2026-12-01', '2026-12-02')).toEqual([
      expect.objectContaining({ date: '2026-12-01', model: 'acme/chat', modelPermaslug: 'acme/chat-2026', endpointId: 'acme/chat:acme/fp8', providerName: 'Acme', keyHash: 'k-died', requests: 1, promptTokens: 4096, completionTokens: 1000, usage: 0.25, requestsViaApiKey: 0, requestsViaPolicy: { 'fp-1': 1 } }),
    ]);
    expect(await generations.get('gen-died-0001')).toEqual({
      id: 'gen-died-0001',
      requestId: 'req-gen-died-0001',
      organizationId: 'org-died',
      keyHash: 'k-died',
      workspaceId: 'w-open',
      via: { credential: 'access_token', policyId: 'fp-1' },
      model: 'acme/chat',
      providerName: 'Acme',
      upstreamId: null,
      createdAt: begun.toISOString(),
      streamed: true,
      cancelled: false,
      finishReason: null,
      promptTokens: 4096,
      completionTokens: 1000,
      reasoningTokens: null,
      cachedTokens: null,
      cost: '0.25',
      chargeBasis: 'maximum_cost',
      latencyMs: 0,
      generationTimeMs: null,
      serviceTier: null,
      origin: '',
      httpReferer: null,
      userAgent: 'OpenAI/JS 6.9.1',
      externalUser: null,
    });
    expect(await generations.get('gen-ended-0001')).toBeUndefined();
  });

  it('only closes a completion whose generation was written: it ended, and its close was lost', async () => {
    const begun = new Date('2026-12-01T08:15:00Z');
    const ended = completion('org-lost-close', 'k-lost', 'gen-lost-close-01', begun);
    await store().open(ended);
    await generations.put({ ...diedGeneration(ended), chargeBasis: 'provider_usage', cost: '0.01' });
    expect((await store().recordDied(new Date(openBucketEnds(openBucketOf(begun))))).recorded).toBe(0);
    expect(await openItems()).toEqual([]);
    expect(await usage.keyUsage('org-lost-close', ['k-lost'], new Date('2026-12-02T00:00:00Z'))).toEqual(new Map());
    expect((await generations.get('gen-lost-close-01'))?.cost).toBe('0.01');
  });

  it('names the organization of a completion it could not record, and records the others', async () => {
    const begun = new Date('2026-12-01T05:00:00Z');
    const broken = completion('org-broken', 'k-broken', 'gen-broken-0001', begun);
    await store().open({ ...broken, usage: { ...broken.usage, cost: 'not a number' } });
    await store().open(completion('org-whole', 'k-whole', 'gen-whole-0001', begun));
    const outcome = await store().recordDied(new Date(openBucketEnds(openBucketOf(begun))));
    expect(outcome).toEqual({ recorded: 1, failed: new Set(['org-broken']) });
    expect((await openItems()).map((item) => item.sk)).toEqual(['gen-broken-0001']);
    await store().close(broken);
  });

  it('locally, records at once what an earlier process left open, and not what this one has running', async () => {
    const begun = new Date('2026-12-02T11:00:00Z');
    const earlier = store({ writersSince: new Date('2026-12-02T09:00:00Z') });
    const current = store({ writersSince: new Date('2026-12-02T11:30:00Z') });
    await earlier.open(completion('org-restart', 'k-restart', 'gen-restart-old1', begun));
    await current.open(completion('org-restart', 'k-restart', 'gen-restart-new1', new Date('2026-12-02T11:40:00Z')));
    expect((await current.recordDied(new Date('2026-12-02T11:45:00Z'))).recorded).toBe(1);
    expect((await openItems()).map((item) => item.sk)).toEqual(['gen-restart-new1']);
    expect(Object.fromEntries(await usage.keyUsage('org-restart', ['k-restart'], new Date('2026-12-02T12:00:00Z')))).toEqual({ 'k-restart': { usage: 0.25, daily: 0.25, weekly: 0.25, monthly: 0.25 } });
    await current.close(completion('org-restart', 'k-restart', 'gen-restart-new1', new Date('2026-12-02T11:40:00Z')));
  });

  it('reads the partitions of the hours that have ended within the last two days, and no more', async () => {
    let queries = 0;
    const counted = interceptSend(tables.documentClient, (command, send) => {
      if (command.constructor.name === 'QueryCommand') queries++;
      return send();
    });
    const now = new Date('2026-12-02T12:10:00Z');
    await new DynamoOpenCompletions(counted, TABLE, { shards: SHARDS }).recordDied(now);
    const ended = Array.from({ length: OPEN_HOURS_READ + 1 }, (_, i) => openBucketOf(now) - OPEN_HOURS_READ + i).filter((bucket) => openBucketEnds(bucket) <= now.getTime());
    expect(ended).toHaveLength(OPEN_HOURS_READ);
    expect(queries).toBe(ended.length * SHARDS);
  });
});
