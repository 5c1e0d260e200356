import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoUsageFold } from '../../../lambdas/aws/dynamo-usage-fold';
import { DynamoUsageStore } from '../../../lambdas/aws/dynamo-usage-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { spendBeforeFrom } from '../../../lambdas/spending/spend-before';
import type { UsageRecord } from '../../../lambdas/usage/usage';
import { providerEndpoint, publicModel } from '../../support/catalog-fixtures';
import { startEmbeddedTables } from '../../support/embedded-tables';

const TABLE = TABLE_SCHEMAS.usage.localName;
const KEPT = 'a'.repeat(64);
const DELETED = 'b'.repeat(64);

const record = (organizationId: string, keyHash: string, date: string, cost: string): UsageRecord => ({
  organizationId,
  keyHash,
  workspaceId: 'w-seeded',
  model: publicModel('acme/chat', { canonical_slug: 'acme/chat' }),
  endpoint: providerEndpoint('acme/fp8', { provider_name: 'Acme' }),
  promptTokens: 10,
  completionTokens: 5,
  cost,
  costParts: { prompt: cost, completion: '0' },
  date,
  via: { credential: 'api_key' },
});

/**
 * Where a limit that began during its period starts (lambdas/spending/spend-before.ts): a
 * workspace's budget counts what its keys spent, deleted keys' included, from the workspace's
 * own running totals without reading a key; only where those do not reach back to the period's
 * start does it sum the keys the workspace holds and held.
 */
describe('what a scope spent before its limit began', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let usage: DynamoUsageStore;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    usage = new DynamoUsageStore(tables.documentClient, TABLE, () => 0);
  });
  afterAll(() => tables.stop());

  // Wednesday 2 December: the month began on Tuesday, the week on Monday 30 November.
  const now = new Date('2026-12-02T01:00:00Z');
  const scope = (organizationId: string) => ({ kind: 'workspace', organizationId, workspaceId: 'w-seeded' }) as const;
  /** The workspace's keys as management lists them: the kept key, and the deleted one's mark (a key belongs to one organization: each test has its own). */
  const accounts = (kept = KEPT, deleted = DELETED) => {
    const read = { listed: 0 };
    return {
      read,
      store: {
        listWorkspaceApiKeys: async () => {
          read.listed++;
          return { workspace: {} as never, keys: [{ hash: kept } as never] };
        },
        formerWorkspaceKeys: async () => [deleted],
      },
    };
  };

  it("counts a workspace's window from its totals, its deleted key's spend included, without reading a key, folded or not", async () => {
    const organizationId = 'org-seeded';
    for (const [date, cost] of [['2026-11-20', '1'], ['2026-11-30', '2'], ['2026-12-01', '4'], ['2026-12-02', '8']] as const) {
      await usage.record(record(organizationId, KEPT, date, cost));
      await usage.record(record(organizationId, DELETED, date, `0.${cost}`));
    }
    const { read, store } = accounts();
    const spendBefore = spendBeforeFrom(store, usage);
    const windows = async () => ({
      day: await spendBefore(scope(organizationId), 'day', now),
      week: await spendBefore(scope(organizationId), 'week', now),
      month: await spendBefore(scope(organizationId), 'month', now),
      all: await spendBefore(scope(organizationId), 'all', now),
    });
    const expected = { day: '8.8', week: '15.4', month: '13.2', all: '16.5' };
    expect(await windows()).toEqual(expected);
    await new DynamoUsageFold(tables.documentClient, TABLE).foldOrganization(organizationId, now);
    expect(await windows()).toEqual(expected);
    expect(read.listed).toBe(0);
  });

  it('sums the keys the workspace holds and held where its totals do not reach back: usage an earlier release wrote without a workspace', async () => {
    const organizationId = 'org-seeded-earlier';
    const [kept, deleted] = ['c'.repeat(64), 'd'.repeat(64)];
    await usage.record(record(organizationId, kept, '2026-12-02', '8'));
    await usage.record(record(organizationId, deleted, '2026-12-01', '0.4'));
    // The deleted key's day as an earlier release wrote it (shard 0): no workspace.
    await tables.documentClient.send(new UpdateCommand({ TableName: TABLE, Key: { pk: `KEY#${deleted}#0`, sk: '2026-12-01#acme/chat#acme/fp8#0' }, UpdateExpression: 'REMOVE workspaceId' }));
    const { read, store } = accounts(kept, deleted);
    expect(await spendBeforeFrom(store, usage)(scope(organizationId), 'month', now)).toBe('8.4');
    expect(read.listed).toBe(1);
  });
});
