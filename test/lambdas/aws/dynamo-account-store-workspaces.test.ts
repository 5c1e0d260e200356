import { BatchGetCommand, BatchWriteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { WORKSPACE_LIMITS, type Workspace } from '../../../lambdas/accounts/types';
import { UnfinishedWriteError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { useAccountStoreTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

describe('DynamoAccountStore on the embedded DynamoDB', () => {
  const db = useAccountStoreTables();

  /** A workspace named by its slug, without guardrails or description. */
  const workspaceRecord = (organizationId: string, id: string, slug: string, createdAt: string): Workspace => ({
    id,
    organizationId,
    name: slug,
    slug,
    description: null,
    guardrailIds: [],
    createdAt,
    updatedAt: null,
  });

  it('claims workspace slugs per organization, and takes over a claim whose workspace never appeared', async () => {
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { organization } = await db.service.createOrganization({ name: 'Slugs', plan: 'enterprise' });
    const workspace = (id: string, slug: string, createdAt: string) => workspaceRecord(organization.id, id, slug, createdAt);
    await db.store.createWorkspace(workspace('w-1', 'prod', '2026-01-01T00:00:00.000Z'));
    await expect(db.store.createWorkspace(workspace('w-2', 'prod', '2026-06-01T00:00:00.000Z'))).rejects.toThrow('A workspace with slug "prod" already exists');
    expect(await db.store.getWorkspace(organization.id, 'w-2')).toBeUndefined();

    // A claim left by a release before transactional creates, whose process died before writing its workspace.
    await db.tables.documentClient.send(
      new PutCommand({
        TableName: TABLE_SCHEMAS.keys.localName,
        Item: { pk: `ORG#${organization.id}`, sk: 'SLUG#ghost', workspaceId: 'w-dead', claimedAt: '2026-01-01T00:00:00.000Z' },
      }),
    );
    // Within a minute it may still be a creation in flight: honoured, and the refusal says until when.
    const refusal = await db.store.createWorkspace(workspace('w-3', 'ghost', '2026-01-01T00:00:30.000Z')).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UnfinishedWriteError);
    expect(toErrorBody(refusal)).toEqual({
      status: 409,
      body: {
        error: {
          code: 409,
          message: 'The slug "ghost" is held by a write that has not finished: free again at 2026-01-01T00:01:01.000Z unless that write completes',
          metadata: { free_at: '2026-01-01T00:01:01.000Z' },
        },
      },
    });
    await expect(db.store.createWorkspace(workspace('w-3', 'ghost', '2026-01-01T00:01:00.000Z'))).rejects.toBeInstanceOf(UnfinishedWriteError);
    await db.store.createWorkspace(workspace('w-4', 'ghost', '2026-01-01T00:01:01.000Z'));
    const created = (await db.store.listWorkspaces(organization.id)).filter((w) => w.slug !== 'default');
    expect(created.map((w) => [w.id, w.slug]).sort()).toEqual([['w-1', 'prod'], ['w-4', 'ghost']]);
  });

  it('takes over, a minute on, the claim of a rename whose workspace kept its old slug', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Crashed renames', plan: 'enterprise' });
    const workspace = (id: string, slug: string, createdAt: string) => workspaceRecord(organization.id, id, slug, createdAt);
    await db.store.createWorkspace(workspace('w-1', 'before', '2026-01-01T00:00:00.000Z'));
    // A rename of w-1 to "after" that a release before transactional renames left between claiming the new slug and writing the workspace.
    await db.tables.documentClient.send(
      new PutCommand({
        TableName: TABLE_SCHEMAS.keys.localName,
        Item: { pk: `ORG#${organization.id}`, sk: 'SLUG#after', workspaceId: 'w-1', claimedAt: '2026-01-01T00:10:00.000Z' },
      }),
    );

    await expect(db.store.createWorkspace(workspace('w-2', 'after', '2026-01-01T00:10:59.000Z'))).rejects.toThrow(
      'The slug "after" is held by a write that has not finished: free again at 2026-01-01T00:11:01.000Z unless that write completes',
    );
    await db.store.createWorkspace(workspace('w-2', 'after', '2026-01-01T00:11:01.000Z'));
    expect((await db.store.findWorkspace(organization.id, 'after'))?.id).toBe('w-2');
    expect((await db.store.findWorkspace(organization.id, 'before'))?.id).toBe('w-1');
    await expect(db.store.createWorkspace(workspace('w-3', 'before', '2026-01-02T00:00:00.000Z'))).rejects.toThrow('A workspace with slug "before" already exists');
  });

  it('leaves a rename whose transaction failed undone, its new slug free and its old one held', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Renames', plan: 'enterprise' });
    await db.store.createWorkspace(workspaceRecord(organization.id, 'w-1', 'before', '2026-01-01T00:00:00.000Z'));
    // The test's client, its transactions failing.
    const failing = interceptSend(db.tables.documentClient, async (command, send) => {
      if (command instanceof TransactWriteCommand) throw new Error('transactions unavailable');
      return send();
    });

    await expect(new DynamoAccountStore(failing, TABLE_SCHEMAS.keys.localName).updateWorkspace(organization.id, 'w-1', { slug: 'after' }, '2026-01-02T00:00:00.000Z')).rejects.toThrow(
      'transactions unavailable',
    );

    expect((await db.store.getWorkspace(organization.id, 'w-1'))?.slug).toBe('before');
    await db.store.createWorkspace(workspaceRecord(organization.id, 'w-2', 'after', '2026-01-03T00:00:00.000Z'));
    await expect(db.store.createWorkspace(workspaceRecord(organization.id, 'w-3', 'before', '2026-01-03T00:00:00.000Z'))).rejects.toThrow(
      'A workspace with slug "before" already exists',
    );
  });

  describe('a workspace by its id or its slug, and the keys of one workspace', () => {
    const table = TABLE_SCHEMAS.keys.localName;
    const ids = { claimed: '6f1c2d3e-0000-4000-8000-000000000001', legacy: '6f1c2d3e-0000-4000-8000-000000000002', lookalike: '6f1c2d3e-0000-4000-8000-000000000003' };
    let organizationId: string;
    let defaultWorkspaceId: string;

    beforeAll(async () => {
      const created = await db.service.createOrganization({ name: 'Lookups', plan: 'enterprise' });
      organizationId = created.organization.id;
      defaultWorkspaceId = created.workspace.id;
      await db.store.createWorkspace(workspaceRecord(organizationId, ids.claimed, 'claimed', '2030-01-01T00:00:00.000Z'));
      // Written before slugs were claimed and before key places: no claim, no `keyHolds`.
      await db.tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organizationId}`, sk: `WORKSPACE#${ids.legacy}`, ...workspaceRecord(organizationId, ids.legacy, 'legacy', '2030-01-02T00:00:00.000Z') } }));
      // Its slug has the shape of an id: the claimed workspace's.
      await db.store.createWorkspace(workspaceRecord(organizationId, ids.lookalike, ids.claimed, '2030-01-03T00:00:00.000Z'));
    });

    it('finds a workspace by id first, by a claimed slug, and by the slug of a workspace from before claims', async () => {
      const find = async (value: string) => (await db.store.findWorkspace(organizationId, value))?.id;
      expect(await find(ids.claimed)).toBe(ids.claimed);
      expect(await find('claimed')).toBe(ids.claimed);
      expect(await find(ids.legacy)).toBe(ids.legacy);
      expect(await find('legacy')).toBe(ids.legacy);
      expect(await find(ids.lookalike)).toBe(ids.lookalike);
      expect(await find('missing')).toBeUndefined();
      expect(await find('Not A Slug')).toBeUndefined();
      // A claim whose workspace has moved on to another slug names nothing.
      await db.tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organizationId}`, sk: 'SLUG#stale', workspaceId: ids.claimed, claimedAt: '2030-01-01T00:00:00.000Z' } }));
      expect(await find('stale')).toBeUndefined();
      // Another organization's workspace is not found, by id or by slug.
      const other = await db.service.createOrganization({ name: 'Elsewhere', plan: 'enterprise' });
      expect(await db.store.findWorkspace(other.organization.id, ids.claimed)).toBeUndefined();
      expect(await db.store.findWorkspace(other.organization.id, 'claimed')).toBeUndefined();
    });

    it("lists a workspace's keys from its member items, the default workspace's when none is named, and counts a workspace from before counts from the listing", async () => {
      const first = await db.service.createApiKey(organizationId, { kind: 'workspace', name: 'first' });
      const second = await db.service.createApiKey(organizationId, { kind: 'workspace', name: 'second' });
      const elsewhere = await db.service.createApiKey(organizationId, { kind: 'workspace', name: 'elsewhere', workspaceId: ids.claimed });
      await db.service.createApiKey(organizationId, { kind: 'management', name: 'management' });
      // A key an earlier release wrote in the legacy workspace, which counted none.
      const legacyKey = { ...first.key, hash: 'e'.repeat(64), name: 'legacy', workspaceId: ids.legacy };
      await db.tables.documentClient.send(
        new PutCommand({ TableName: table, Item: { pk: `APIKEY#${legacyKey.hash}`, sk: 'APIKEY', gsi1pk: `ORG#${organizationId}#APIKEYS`, gsi1sk: `${legacyKey.createdAt}#${legacyKey.hash}`, ...legacyKey } }),
      );

      const hashes = async (id?: string) => {
        const listed = await db.store.listWorkspaceApiKeys(organizationId, id);
        return listed && [listed.workspace.id, listed.keys.map((key) => key.hash)];
      };
      // Oldest first; two keys of the same millisecond in hash order, as the organization's listing.
      const listingOrder = [first.key, second.key].sort((a, b) => `${a.createdAt}#${a.hash}`.localeCompare(`${b.createdAt}#${b.hash}`));
      expect(await hashes()).toEqual([defaultWorkspaceId, listingOrder.map((key) => key.hash)]);
      expect(await hashes(ids.claimed)).toEqual([ids.claimed, [elsewhere.key.hash]]);
      expect(await hashes(ids.legacy)).toEqual([ids.legacy, [legacyKey.hash]]);
      expect(await hashes('6f1c2d3e-0000-4000-8000-00000000ffff')).toBeUndefined();
      expect(await db.service.listWorkspaceApiKeys(organizationId, '6f1c2d3e-0000-4000-8000-00000000ffff')).toEqual([]);
      // A deleted key leaves the list and the count in its own write.
      await db.store.deleteApiKey(second.key.hash);
      expect(await hashes()).toEqual([defaultWorkspaceId, [first.key.hash]]);
      const counts = await db.tables.documentClient.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: [defaultWorkspaceId, ids.legacy].map((id) => ({ pk: `ORG#${organizationId}`, sk: `WORKSPACE#${id}` })), ProjectionExpression: 'id, keyCount' } } }),
      );
      expect(Object.fromEntries(counts.Responses![table]!.map((item) => [item.id, item.keyCount]))).toEqual({ [defaultWorkspaceId]: 1, [ids.legacy]: 1 });
    });
  });
  it('counts exactly the keys that landed when 24 creates and 12 deletes of one workspace run at once', async () => {
    const { organization, workspace } = await db.service.createOrganization({ name: 'Busy', plan: 'enterprise' });
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => db.service.createApiKey(organization.id, { kind: 'workspace', name: `first ${i}`, workspaceId: workspace.id })));
    await Promise.all([
      ...made.map(({ key }) => db.service.deleteApiKey(organization.id, key.hash)),
      ...Array.from({ length: 24 }, (_, i) => db.service.createApiKey(organization.id, { kind: 'workspace', name: `second ${i}`, workspaceId: workspace.id })),
    ]);
    const item = await db.tables.documentClient.send(new GetCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}` } }));
    const listed = await db.service.listWorkspaceApiKeys(organization.id, workspace.id);
    expect({ count: item.Item?.keyCount, listed: listed.length, names: listed.every((key) => key.name.startsWith('second')) }).toEqual({ count: 24, listed: 24, names: true });
  });

  it('pages a workspace of 250 keys, and its organization, reading their keys a hundred at a time only until the page is full: the keys after the offset, disabled ones counted only when asked for', async () => {
    const { organization, workspace } = await db.service.createOrganization({ name: 'Paged', plan: 'enterprise' });
    const table = TABLE_SCHEMAS.keys.localName;
    const hashes = Array.from({ length: 250 }, (_, i) => `7${i.toString(16).padStart(63, '0')}`);
    // As 250 creates would leave them: each key, its member item, the count; every fifth key disabled.
    const items = hashes.flatMap((hash, i) => {
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      return [
        { pk: `APIKEY#${hash}`, sk: 'APIKEY', gsi1pk: `ORG#${organization.id}#APIKEYS`, gsi1sk: `${createdAt}#${hash}`, hash, organizationId: organization.id, kind: 'workspace', workspaceId: workspace.id, name: `k${i}`, disabled: i % 5 === 4, guardrailIds: [], createdAt, revision: 1 },
        { pk: `ORG#${organization.id}`, sk: `WSKEY#${workspace.id}#${createdAt}#${hash}`, keyHash: hash },
      ];
    });
    for (let start = 0; start < items.length; start += 25) {
      await db.tables.documentClient.send(new BatchWriteCommand({ RequestItems: { [table]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })) } }));
    }
    await db.tables.documentClient.send(new UpdateCommand({ TableName: table, Key: { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}` }, UpdateExpression: 'SET keyCount = :count', ExpressionAttributeValues: { ':count': 250 } }));
    let keysRead = 0;
    const counting = interceptSend(db.tables.documentClient, (command, send) => {
      if (command.constructor.name === 'BatchGetCommand') keysRead += (command.input as { RequestItems: Record<string, { Keys: unknown[] }> }).RequestItems[table]!.Keys.length;
      return send();
    });
    const store = new DynamoAccountStore(counting, table);
    const page = async (offset: number, limit: number, includeDisabled: boolean) => (await store.listWorkspaceApiKeys(organization.id, workspace.id, { offset, limit, includeDisabled }))!.keys.map((key) => key.name);

    expect(await page(0, 3, false)).toEqual(['k0', 'k1', 'k2']);
    expect(keysRead).toBe(100);
    // Past two disabled keys (k4, k9), the enabled keys after the first 8 start at k10.
    expect(await page(8, 4, false)).toEqual(['k10', 'k11', 'k12', 'k13']);
    expect(await page(98, 4, true)).toEqual(['k98', 'k99', 'k100', 'k101']);
    keysRead = 0;
    expect(await page(248, 4, true)).toEqual(['k248', 'k249']);
    // With disabled keys, the offset skips member items, not keys: only the two are read.
    expect(keysRead).toBe(2);
    // The 200 enabled keys: 200 past the last one read, none left.
    expect(await page(200, 10, false)).toEqual([]);
    expect(await page(195, 10, false)).toEqual(['k243', 'k245', 'k246', 'k247', 'k248']);

    // The organization's list the same way, its index naming the keys in order: a page reads the keys up to its last, no further.
    const organizationPage = async (offset: number, limit: number, includeDisabled: boolean) => (await store.listApiKeys(organization.id, { offset, limit, includeDisabled })).map((key) => key.name);
    keysRead = 0;
    expect(await organizationPage(0, 3, false)).toEqual(['k0', 'k1', 'k2']);
    expect(keysRead).toBe(100);
    expect(await organizationPage(8, 4, false)).toEqual(['k10', 'k11', 'k12', 'k13']);
    keysRead = 0;
    expect(await organizationPage(98, 4, true)).toEqual(['k98', 'k99', 'k100', 'k101']);
    expect(keysRead).toBe(200);
    expect(await organizationPage(195, 10, false)).toEqual(['k243', 'k245', 'k246', 'k247', 'k248']);
    expect(await organizationPage(250, 10, true)).toEqual([]);
    expect((await store.listApiKeys(organization.id)).map((key) => key.name)).toEqual(hashes.map((_, i) => `k${i}`));
  });

  it('holds at most 100,000 keys in a workspace, counted by one condition on an item that stays one size: past it, a 400 naming workspace_id', async () => {
    const { organization, workspace } = await db.service.createOrganization({ name: 'Crowded', plan: 'enterprise' });
    const item = { TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}` } };
    const size = async () => JSON.stringify((await db.tables.documentClient.send(new GetCommand(item))).Item).length;
    const empty = await size();
    // 99,999 keys, counted as their creates would have left the count.
    await db.tables.documentClient.send(new UpdateCommand({ ...item, UpdateExpression: 'SET keyCount = :count', ExpressionAttributeValues: { ':count': WORKSPACE_LIMITS.keys - 1 } }));
    // Two creates at once for the last place: one lands.
    const outcomes = await Promise.allSettled([0, 1].map((i) => db.service.createApiKey(organization.id, { kind: 'workspace', name: `last ${i}`, workspaceId: workspace.id })));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')!.reason;
    expect(toErrorBody(refused)).toEqual({
      status: 400,
      body: { error: { code: 400, message: `Invalid workspace_id: workspace ${workspace.id} holds 100,000 keys already, the most one may hold`, metadata: { parameter: 'workspace_id' } } },
    });
    // A key deleted gives its place back; the item is as large as with no key (the count's digits aside).
    const landed = (outcomes.find((outcome) => outcome.status === 'fulfilled') as PromiseFulfilledResult<{ key: { hash: string } }>).value;
    await db.service.deleteApiKey(organization.id, landed.key.hash);
    await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'after', workspaceId: workspace.id });
    expect(await size()).toBeLessThanOrEqual(empty + 5);
  });
});
