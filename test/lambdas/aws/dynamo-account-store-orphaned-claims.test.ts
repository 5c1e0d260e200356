import { randomUUID } from 'node:crypto';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES, type Organization, type Workspace } from '../../../lambdas/accounts/types';
import { UnfinishedWriteError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { FixedClock } from '../../support/fixed-clock';
import { startEmbeddedTables } from '../../support/embedded-tables';

/**
 * A claim whose writer died (kill -9 between the claim and the item it stands for) is taken over
 * after a minute in AWS, where nothing proves the writer gone, and until then the refusal says
 * what holds it and when it is free again; on the local runtime, restarted, every claim from
 * before its start is provably its dead predecessor's and is reclaimed at once.
 */
describe('DynamoAccountStore: claims orphaned by a crash', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  const table = TABLE_SCHEMAS.keys.localName;
  const clock = new FixedClock(new Date('2026-03-01T10:00:00.000Z'));
  const organization: Organization = { id: 'o-crash', name: 'o', plan: 'business', providerPreferences: DEFAULT_PROVIDER_PREFERENCES, privacy: DEFAULT_PRIVACY, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: null };
  const workspace = (id: string, slug: string): Workspace => ({ id, organizationId: organization.id, name: slug, slug, description: null, guardrailIds: [], createdAt: clock.now().toISOString(), updatedAt: null });
  /** What the management API answers for a refusal (docs/reference.md#the-common-error-body). */
  const answer = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: unknown) => toErrorBody(error));

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    await new DynamoAccountStore(tables.documentClient, table).createOrganization(organization);
  });
  afterAll(async () => {
    await tables.stop();
  });

  it('refuses a slug claimed 5 s ago by a workspace that never came as held until a stated time, then gives it', async () => {
    // What a process killed between the slug claim and the workspace write leaves.
    clock.set('2026-03-01T10:00:00.000Z');
    await tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organization.id}`, sk: 'SLUG#orphaned', workspaceId: 'ws-never-written', claimedAt: '2026-03-01T09:59:55.000Z' } }));
    const service = new AccountsService({ store: new DynamoAccountStore(tables.documentClient, table, { clock }), clock, newId: randomUUID });

    expect(await answer(service.createWorkspace(organization.id, { name: 'Orphaned' }))).toEqual({
      status: 409,
      body: {
        error: {
          code: 409,
          message: 'The slug "orphaned" is held by a write that has not finished: free again at 2026-03-01T10:00:56.000Z unless that write completes',
          metadata: { free_at: '2026-03-01T10:00:56.000Z' },
        },
      },
    });
    clock.set('2026-03-01T10:00:55.000Z');
    expect(await answer(service.createWorkspace(organization.id, { name: 'Orphaned' }))).toMatchObject({ status: 409 });
    clock.set('2026-03-01T10:00:56.000Z');
    const created = await service.createWorkspace(organization.id, { name: 'Orphaned' });
    expect((await service.findWorkspace(organization.id, 'orphaned')).id).toBe(created.id);
  });

  it('takes over at once a slug claimed before a restart', async () => {
    await tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organization.id}`, sk: 'SLUG#restarted', workspaceId: 'ws-never-written', claimedAt: clock.now().toISOString() } }));
    const running = new DynamoAccountStore(tables.documentClient, table, { clock });
    await expect(running.createWorkspace(workspace('ws-a', 'restarted'))).rejects.toBeInstanceOf(UnfinishedWriteError);
    const restarted = new DynamoAccountStore(tables.documentClient, table, { clock, writersSince: new Date(clock.now().getTime() + 1) });
    await restarted.createWorkspace(workspace('ws-b', 'restarted'));
    expect((await restarted.getWorkspace(organization.id, 'ws-b'))?.slug).toBe('restarted');
  });

  describe('a workspace an earlier release wrote with key places', () => {
    /** The workspace as a release before key counts left it: its places in `keyHolds`, no count. */
    const asEarlierRelease = (id: string, places: Record<string, string>) =>
      tables.documentClient.send(
        new UpdateCommand({ TableName: table, Key: { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${id}` }, UpdateExpression: 'SET keyHolds = :places REMOVE keyCount', ExpressionAttributeValues: { ':places': places } }),
      );

    it('deletes at once one whose only place belongs to a key a crash never wrote', async () => {
      // Later than the organization's first workspace, its default, which is never deleted.
      clock.set('2026-03-01T11:00:00.000Z');
      const service = new AccountsService({ store: new DynamoAccountStore(tables.documentClient, table, { clock }), clock, newId: randomUUID });
      const { id } = await service.createWorkspace(organization.id, { name: 'Keyless' });
      await asEarlierRelease(id, { ['f'.repeat(64)]: clock.now().toISOString() });
      expect(await answer(service.deleteWorkspace(organization.id, id))).toBe('accepted');
      expect(await service.listWorkspaces(organization.id)).not.toContainEqual(expect.objectContaining({ id }));
    });

    it('counts the keys its places name, and is deleted once they are', async () => {
      clock.set('2026-03-01T12:00:00.000Z');
      const store = new DynamoAccountStore(tables.documentClient, table, { clock });
      const service = new AccountsService({ store, clock, newId: randomUUID });
      const { id } = await service.createWorkspace(organization.id, { name: 'Mixed' });
      const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'Real', workspaceId: id });
      await asEarlierRelease(id, { [key.hash]: key.createdAt, ['e'.repeat(64)]: clock.now().toISOString() });

      expect(await store.deleteWorkspace(organization.id, id)).toEqual({ outcome: 'has-keys', keys: 1 });
      expect(await answer(service.deleteWorkspace(organization.id, id))).toEqual({
        status: 400,
        body: { error: { code: 400, message: `Workspace ${id} has 1 API key; delete it first` } },
      });
      expect((await store.listWorkspaceApiKeys(organization.id, id))?.keys.map((listed) => listed.hash)).toEqual([key.hash]);
      await service.deleteApiKey(organization.id, key.hash);
      expect(await answer(service.deleteWorkspace(organization.id, id))).toBe('accepted');
    });
  });
});
