import { randomUUID } from 'node:crypto';
import { PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { AlreadyExistsError } from '../../../lambdas/accounts/account-store';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES, type Organization, type Workspace } from '../../../lambdas/accounts/types';
import { DomainError, UnfinishedWriteError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { FixedClock } from '../../support/fixed-clock';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

describe('DynamoAccountStore on the embedded DynamoDB', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoAccountStore;
  let service: AccountsService;
  const clock = new FixedClock();
  let counter = 0;

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName);
    service = new AccountsService({ store, clock, newId: () => `id-${++counter}` });
  });
  afterAll(async () => {
    await tables.stop();
  });

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

  const org = (id: string): Organization => ({
    id,
    name: id,
    plan: 'business',
    providerPreferences: DEFAULT_PROVIDER_PREFERENCES,
    privacy: DEFAULT_PRIVACY,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
  });

  it('creates an organization once and refuses a second create of the same id', async () => {
    await store.createOrganization(org('o-1'));
    await expect(store.createOrganization({ ...org('o-1'), name: 'other' })).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(await store.getOrganization('o-1')).toEqual(org('o-1'));
    expect((await store.listOrganizations()).map((o) => o.id)).toContain('o-1');
  });

  it('updates only the fields given and reports a missing item as undefined', async () => {
    const updated = await store.updateOrganization('o-1', { plan: 'enterprise' }, '2026-02-01T00:00:00.000Z');
    expect(updated).toEqual({ ...org('o-1'), plan: 'enterprise', updatedAt: '2026-02-01T00:00:00.000Z' });
    expect(await store.updateOrganization('missing', { plan: 'free' }, 'x')).toBeUndefined();
    expect(await store.getOrganization('missing')).toBeUndefined();
  });

  it('stores keys by hash only, lists them per organization and deletes them once', async () => {
    const { organization } = await service.createOrganization({ name: 'Keys Org', plan: 'pro' });
    const created = await service.createApiKey(organization.id, { kind: 'workspace', name: 'k1' });
    const raw = await tables.documentClient.send(
      new (await import('@aws-sdk/lib-dynamodb')).ScanCommand({ TableName: TABLE_SCHEMAS.keys.localName }),
    );
    expect(JSON.stringify(raw.Items)).not.toContain(created.secret);
    expect(await store.getApiKey(created.key.hash)).toEqual(created.key);
    expect((await store.listApiKeys(organization.id)).map((k) => k.hash)).toEqual([created.key.hash]);
    expect(await store.deleteApiKey(created.key.hash)).toBe(true);
    expect(await store.deleteApiKey(created.key.hash)).toBe(false);
    expect(await store.getApiKey(created.key.hash)).toBeUndefined();
  });

  it('fetches guardrails in the order asked, skipping missing ones, across batch boundaries', async () => {
    const { organization } = await service.createOrganization({ name: 'Guard Org', plan: 'enterprise' });
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) {
      const g = await service.createGuardrail(organization.id, {
        name: `g${i}`,
        description: null,
        workspaceId: null,
        allowedModels: null,
        ignoredModels: null,
        allowedProviders: null,
        ignoredProviders: null,
        enforceZdr: false,
      });
      ids.push(g.id);
    }
    const wanted = [ids[104]!, 'nope', ids[0]!, ...ids.slice(1, 103)];
    const found = await store.getGuardrails(organization.id, wanted);
    expect(found.map((g) => g.id)).toEqual(wanted.filter((id) => id !== 'nope'));
  });

  describe('guardrail updates, written only at the version read', () => {
    const input = {
      name: 'Lists',
      description: null,
      workspaceId: null,
      allowedModels: null,
      ignoredModels: null,
      allowedProviders: null,
      ignoredProviders: null,
      enforceZdr: false,
    };

    it('replaces a guardrail at its version, and refuses a second writer from the same read', async () => {
      const { organization } = await service.createOrganization({ name: 'Versions', plan: 'enterprise' });
      const created = await service.createGuardrail(organization.id, input);
      expect(created.version).toBe(1);
      const allowed = { ...created, allowedModels: ['acme/model'], version: 2 };
      const ignored = { ...created, ignoredModels: ['acme/model'], version: 2 };

      expect(await store.updateGuardrail(allowed, 1)).toBe(true);
      expect(await store.updateGuardrail(ignored, 1)).toBe(false);

      expect(await store.getGuardrail(organization.id, created.id)).toEqual(allowed);
      await store.deleteGuardrail(organization.id, created.id);
      expect(await store.updateGuardrail({ ...allowed, version: 3 }, 2)).toBe(false);
      expect(await store.getGuardrail(organization.id, created.id)).toBeUndefined();
    });

    it('versions a guardrail written before versions on its first update', async () => {
      const { organization } = await service.createOrganization({ name: 'Unversioned', plan: 'enterprise' });
      const { version: _version, ...unversioned } = await service.createGuardrail(organization.id, input);
      await tables.documentClient.send(
        new PutCommand({ TableName: TABLE_SCHEMAS.keys.localName, Item: { pk: `ORG#${organization.id}`, sk: `GUARDRAIL#${unversioned.id}`, ...unversioned } }),
      );

      const updated = await service.updateGuardrail(organization.id, unversioned.id, { enforceZdr: true });

      expect(updated).toEqual({ ...unversioned, enforceZdr: true, version: 1, updatedAt: clock.now().toISOString() });
      expect(await store.updateGuardrail({ ...unversioned, name: 'stale' }, undefined)).toBe(false);
    });

    it('checks a concurrent update against what the other one left: one model is never both allowed and ignored', async () => {
      const { organization } = await service.createOrganization({ name: 'Race', plan: 'enterprise' });
      for (let round = 0; round < 10; round++) {
        const { id } = await service.createGuardrail(organization.id, input);

        const outcomes = await Promise.allSettled([
          service.updateGuardrail(organization.id, id, { allowedModels: ['acme/model'] }),
          service.updateGuardrail(organization.id, id, { ignoredModels: ['acme/model'] }),
        ]);

        expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({
          reason: { kind: 'invalid_input', message: 'Models cannot be both allowed and ignored: acme/model' },
        });
        const stored = await store.getGuardrail(organization.id, id);
        expect([stored?.allowedModels, stored?.ignoredModels].filter((list) => list !== null)).toEqual([['acme/model']]);
        expect(stored?.version).toBe(2);
      }
    });

    it('answers 409 when other writers keep changing the guardrail', async () => {
      const { organization } = await service.createOrganization({ name: 'Busy', plan: 'enterprise' });
      const { id } = await service.createGuardrail(organization.id, input);
      const busy = new AccountsService({ store: Object.assign(Object.create(store), { updateGuardrail: async () => false }), clock });

      await expect(busy.updateGuardrail(organization.id, id, { enforceZdr: true })).rejects.toMatchObject({
        kind: 'conflict',
        message: 'The guardrail was changed by another request at the same time; retry',
      });
    });
  });

  it('keeps organizations apart: another organization sees none of the keys, guardrails or workspaces', async () => {
    const a = await service.createOrganization({ name: 'A', plan: 'enterprise' });
    const b = await service.createOrganization({ name: 'B', plan: 'enterprise' });
    const keyOfA = await service.createApiKey(a.organization.id, { kind: 'workspace', name: 'a-key' });
    const status = async (promise: Promise<unknown>) => promise.then(() => 200, (e: unknown) => toErrorBody(e).status);
    expect(await status(service.getApiKey(b.organization.id, keyOfA.key.hash))).toBe(404);
    expect(await status(service.updateApiKey(b.organization.id, keyOfA.key.hash, { disabled: true }))).toBe(404);
    expect(await status(service.deleteApiKey(b.organization.id, keyOfA.key.hash))).toBe(404);
    expect(await status(service.getWorkspace(b.organization.id, a.workspace.id))).toBe(404);
    expect(await status(service.createApiKey(b.organization.id, { kind: 'workspace', name: 'x', workspaceId: a.workspace.id }))).toBe(404);
    expect((await store.getApiKey(keyOfA.key.hash))?.disabled).toBe(false);
  });

  it('turns a value DynamoDB refuses (an over-long key) into a 400 at the store boundary, for readers and writers alike', async () => {
    const refusal = async (promise: Promise<unknown>) =>
      promise.then(
        () => 'accepted',
        (e: Error) => (e instanceof DomainError ? { status: toErrorBody(e).status, message: e.message } : e.name),
      );
    const expected = { status: 400, message: 'A value in the request cannot be stored: it is too long or malformed' };
    expect(await refusal(store.getApiKey('k'.repeat(3000)))).toEqual(expected);
    expect(await refusal(store.getWorkspace('o-1', 'w'.repeat(1100)))).toEqual(expected);
    expect(await refusal(store.deleteApiKey('k'.repeat(3000)))).toEqual(expected);
    expect(await refusal(store.getGuardrails('o-1', ['g'.repeat(1100)]))).toEqual(expected);
  });

  it('adds and removes guardrail ids as a string set, reporting only real changes, and converts lists written before sets', async () => {
    const { PutCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { organization, workspace } = await service.createOrganization({ name: 'Sets', plan: 'enterprise' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    const holder = { kind: 'key', hash: key.hash } as const;
    const raw = async () =>
      (await tables.documentClient.send(new GetCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: `APIKEY#${key.hash}`, sk: 'APIKEY' } }))).Item!;

    // No guardrails: no attribute at all, as DynamoDB has no empty sets.
    expect(await raw()).not.toHaveProperty('guardrailIds');
    expect(await store.addGuardrail(holder, 'g-2', 't1')).toBe('changed');
    expect(await store.addGuardrail(holder, 'g-1', 't1')).toBe('changed');
    expect(await store.addGuardrail(holder, 'g-1', 't2')).toBe('unchanged');
    expect((await raw()).guardrailIds).toEqual(new Set(['g-1', 'g-2']));
    expect((await store.getApiKey(key.hash))!.guardrailIds).toEqual(['g-1', 'g-2']);
    expect((await store.getApiKey(key.hash))!.updatedAt).toBe('t1');
    expect(await store.removeGuardrail(holder, 'g-3', 't3')).toBe('unchanged');
    expect(await store.removeGuardrail(holder, 'g-1', 't3')).toBe('changed');
    expect(await store.removeGuardrail(holder, 'g-2', 't3')).toBe('changed');
    expect(await raw()).not.toHaveProperty('guardrailIds');
    expect(await store.addGuardrail({ kind: 'key', hash: 'f'.repeat(64) }, 'g-1', 't')).toBe('missing');

    // Items from before sets hold a list: converted on the first change, nothing lost.
    await tables.documentClient.send(new PutCommand({ TableName: TABLE_SCHEMAS.keys.localName, Item: { ...(await raw()), guardrailIds: ['old-1', 'old-2', 'old-1'] } }));
    expect(await store.addGuardrail(holder, 'g-9', 't4')).toBe('changed');
    expect((await raw()).guardrailIds).toEqual(new Set(['old-1', 'old-2', 'g-9']));
    const wsHolder = { kind: 'workspace', organizationId: organization.id, id: workspace.id } as const;
    const wsKey = { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}` };
    const wsItem = (await tables.documentClient.send(new GetCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: wsKey }))).Item!;
    await tables.documentClient.send(new PutCommand({ TableName: TABLE_SCHEMAS.keys.localName, Item: { ...wsItem, guardrailIds: [] } }));
    expect(await store.removeGuardrail(wsHolder, 'g-1', 't5')).toBe('unchanged');
    expect(await store.addGuardrail(wsHolder, 'g-1', 't5')).toBe('changed');
    expect((await store.getWorkspace(organization.id, workspace.id))!.guardrailIds).toEqual(['g-1']);
  });

  it('claims workspace slugs per organization, and takes over a claim whose workspace never appeared', async () => {
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { organization } = await service.createOrganization({ name: 'Slugs', plan: 'enterprise' });
    const workspace = (id: string, slug: string, createdAt: string) => workspaceRecord(organization.id, id, slug, createdAt);
    await store.createWorkspace(workspace('w-1', 'prod', '2026-01-01T00:00:00.000Z'));
    await expect(store.createWorkspace(workspace('w-2', 'prod', '2026-06-01T00:00:00.000Z'))).rejects.toThrow('A workspace with slug "prod" already exists');
    expect(await store.getWorkspace(organization.id, 'w-2')).toBeUndefined();

    // A claim left by a release before transactional creates, whose process died before writing its workspace.
    await tables.documentClient.send(
      new PutCommand({
        TableName: TABLE_SCHEMAS.keys.localName,
        Item: { pk: `ORG#${organization.id}`, sk: 'SLUG#ghost', workspaceId: 'w-dead', claimedAt: '2026-01-01T00:00:00.000Z' },
      }),
    );
    // Within a minute it may still be a creation in flight: honoured, and the refusal says until when.
    const refusal = await store.createWorkspace(workspace('w-3', 'ghost', '2026-01-01T00:00:30.000Z')).catch((error: unknown) => error);
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
    await expect(store.createWorkspace(workspace('w-3', 'ghost', '2026-01-01T00:01:00.000Z'))).rejects.toBeInstanceOf(UnfinishedWriteError);
    await store.createWorkspace(workspace('w-4', 'ghost', '2026-01-01T00:01:01.000Z'));
    const created = (await store.listWorkspaces(organization.id)).filter((w) => w.slug !== 'default');
    expect(created.map((w) => [w.id, w.slug]).sort()).toEqual([['w-1', 'prod'], ['w-4', 'ghost']]);
  });

  it('takes over, a minute on, the claim of a rename whose workspace kept its old slug', async () => {
    const { organization } = await service.createOrganization({ name: 'Crashed renames', plan: 'enterprise' });
    const workspace = (id: string, slug: string, createdAt: string) => workspaceRecord(organization.id, id, slug, createdAt);
    await store.createWorkspace(workspace('w-1', 'before', '2026-01-01T00:00:00.000Z'));
    // A rename of w-1 to "after" that a release before transactional renames left between claiming the new slug and writing the workspace.
    await tables.documentClient.send(
      new PutCommand({
        TableName: TABLE_SCHEMAS.keys.localName,
        Item: { pk: `ORG#${organization.id}`, sk: 'SLUG#after', workspaceId: 'w-1', claimedAt: '2026-01-01T00:10:00.000Z' },
      }),
    );

    await expect(store.createWorkspace(workspace('w-2', 'after', '2026-01-01T00:10:59.000Z'))).rejects.toThrow(
      'The slug "after" is held by a write that has not finished: free again at 2026-01-01T00:11:01.000Z unless that write completes',
    );
    await store.createWorkspace(workspace('w-2', 'after', '2026-01-01T00:11:01.000Z'));
    expect((await store.findWorkspace(organization.id, 'after'))?.id).toBe('w-2');
    expect((await store.findWorkspace(organization.id, 'before'))?.id).toBe('w-1');
    await expect(store.createWorkspace(workspace('w-3', 'before', '2026-01-02T00:00:00.000Z'))).rejects.toThrow('A workspace with slug "before" already exists');
  });

  it('leaves a rename whose transaction failed undone, its new slug free and its old one held', async () => {
    const { organization } = await service.createOrganization({ name: 'Renames', plan: 'enterprise' });
    await store.createWorkspace(workspaceRecord(organization.id, 'w-1', 'before', '2026-01-01T00:00:00.000Z'));
    // The test's client, its transactions failing.
    const failing = interceptSend(tables.documentClient, async (command, send) => {
      if (command instanceof TransactWriteCommand) throw new Error('transactions unavailable');
      return send();
    });

    await expect(new DynamoAccountStore(failing, TABLE_SCHEMAS.keys.localName).updateWorkspace(organization.id, 'w-1', { slug: 'after' }, '2026-01-02T00:00:00.000Z')).rejects.toThrow(
      'transactions unavailable',
    );

    expect((await store.getWorkspace(organization.id, 'w-1'))?.slug).toBe('before');
    await store.createWorkspace(workspaceRecord(organization.id, 'w-2', 'after', '2026-01-03T00:00:00.000Z'));
    await expect(store.createWorkspace(workspaceRecord(organization.id, 'w-3', 'before', '2026-01-03T00:00:00.000Z'))).rejects.toThrow(
      'A workspace with slug "before" already exists',
    );
  });

  describe('a workspace by its id or its slug, and the keys of one workspace', () => {
    const table = TABLE_SCHEMAS.keys.localName;
    const ids = { claimed: '6f1c2d3e-0000-4000-8000-000000000001', legacy: '6f1c2d3e-0000-4000-8000-000000000002', lookalike: '6f1c2d3e-0000-4000-8000-000000000003' };
    let organizationId: string;
    let defaultWorkspaceId: string;

    beforeAll(async () => {
      const created = await service.createOrganization({ name: 'Lookups', plan: 'enterprise' });
      organizationId = created.organization.id;
      defaultWorkspaceId = created.workspace.id;
      await store.createWorkspace(workspaceRecord(organizationId, ids.claimed, 'claimed', '2030-01-01T00:00:00.000Z'));
      // Written before slugs were claimed and before key places: no claim, no `keyHolds`.
      await tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organizationId}`, sk: `WORKSPACE#${ids.legacy}`, ...workspaceRecord(organizationId, ids.legacy, 'legacy', '2030-01-02T00:00:00.000Z') } }));
      // Its slug has the shape of an id: the claimed workspace's.
      await store.createWorkspace(workspaceRecord(organizationId, ids.lookalike, ids.claimed, '2030-01-03T00:00:00.000Z'));
    });

    it('finds a workspace by id first, by a claimed slug, and by the slug of a workspace from before claims', async () => {
      const find = async (value: string) => (await store.findWorkspace(organizationId, value))?.id;
      expect(await find(ids.claimed)).toBe(ids.claimed);
      expect(await find('claimed')).toBe(ids.claimed);
      expect(await find(ids.legacy)).toBe(ids.legacy);
      expect(await find('legacy')).toBe(ids.legacy);
      expect(await find(ids.lookalike)).toBe(ids.lookalike);
      expect(await find('missing')).toBeUndefined();
      expect(await find('Not A Slug')).toBeUndefined();
      // A claim whose workspace has moved on to another slug names nothing.
      await tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organizationId}`, sk: 'SLUG#stale', workspaceId: ids.claimed, claimedAt: '2030-01-01T00:00:00.000Z' } }));
      expect(await find('stale')).toBeUndefined();
      // Another organization's workspace is not found, by id or by slug.
      const other = await service.createOrganization({ name: 'Elsewhere', plan: 'enterprise' });
      expect(await store.findWorkspace(other.organization.id, ids.claimed)).toBeUndefined();
      expect(await store.findWorkspace(other.organization.id, 'claimed')).toBeUndefined();
    });

    it("lists a workspace's keys from its places, the default workspace's when none is named, and a workspace from before places from the listing", async () => {
      const first = await service.createApiKey(organizationId, { kind: 'workspace', name: 'first' });
      const second = await service.createApiKey(organizationId, { kind: 'workspace', name: 'second' });
      const elsewhere = await service.createApiKey(organizationId, { kind: 'workspace', name: 'elsewhere', workspaceId: ids.claimed });
      await service.createApiKey(organizationId, { kind: 'management', name: 'management' });
      // A place whose key never came, and a key written without a place, in the legacy workspace.
      await store.holdWorkspaceKey(organizationId, defaultWorkspaceId, 'f'.repeat(64), '2030-01-01T00:00:00.000Z');
      const legacyKey = { ...first.key, hash: 'e'.repeat(64), name: 'legacy', workspaceId: ids.legacy };
      await store.createApiKey(legacyKey);

      const hashes = async (id?: string) => {
        const listed = await store.listWorkspaceApiKeys(organizationId, id);
        return listed && [listed.workspace.id, listed.keys.map((key) => key.hash)];
      };
      // Oldest first; two keys of the same millisecond in hash order, as the organization's listing.
      const listingOrder = [first.key, second.key].sort((a, b) => `${a.createdAt}#${a.hash}`.localeCompare(`${b.createdAt}#${b.hash}`));
      expect(await hashes()).toEqual([defaultWorkspaceId, listingOrder.map((key) => key.hash)]);
      expect(await hashes(ids.claimed)).toEqual([ids.claimed, [elsewhere.key.hash]]);
      expect(await hashes(ids.legacy)).toEqual([ids.legacy, [legacyKey.hash]]);
      expect(await hashes('6f1c2d3e-0000-4000-8000-00000000ffff')).toBeUndefined();
      expect(await service.listWorkspaceApiKeys(organizationId, '6f1c2d3e-0000-4000-8000-00000000ffff')).toEqual([]);
      // A deleted key leaves the list even before its place is given back.
      await store.deleteApiKey(second.key.hash);
      expect(await hashes()).toEqual([defaultWorkspaceId, [first.key.hash]]);
    });
  });

  describe('spending caps, each change computed from a fresh read (docs/limits.md)', () => {
    /** A second container: its own store, so its writes do not wait for this one's turn. */
    const otherContainer = () => new AccountsService({ store: new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName), clock, newId: () => randomUUID() });

    it("lands a workspace's budgets of different intervals set at once by two containers, and the copies requests read show them", async () => {
      const { organization, workspace } = await service.createOrganization({ name: 'Budgets', plan: 'enterprise' });
      const other = otherContainer();

      for (let round = 0; round < 5; round++) {
        await Promise.all([
          service.putWorkspaceBudget(organization.id, workspace.slug, 'daily', { limitUsd: 1 + round }),
          other.putWorkspaceBudget(organization.id, workspace.slug, 'monthly', { limitUsd: 100 + round, includeByokInBudgets: round % 2 === 0 }),
        ]);

        const stored = await store.getWorkspace(organization.id, workspace.id);
        expect([stored?.budgets?.daily?.amountUsd, stored?.budgets?.monthly?.amountUsd, stored?.includeByokInBudgets]).toEqual([`${1 + round}`, `${100 + round}`, round % 2 === 0]);
        const { workspace: copy } = await store.getRecords({ organizationId: organization.id, workspaceId: workspace.id });
        expect(copy?.budgets).toEqual(stored?.budgets);
      }
      await Promise.all([service.deleteWorkspaceBudget(organization.id, workspace.slug, 'daily'), other.deleteWorkspaceBudget(organization.id, workspace.slug, 'monthly')]);
      expect((await store.getWorkspace(organization.id, workspace.id))?.budgets).toEqual({});
    });

    it("keeps both of two containers' changes of one key's limit: a new amount and a new interval", async () => {
      const { organization } = await service.createOrganization({ name: 'Limits', plan: 'enterprise' });
      const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'Capped', limit: 5, limitReset: 'daily' });
      const created = clock.now().toISOString();
      expect(key.limit).toEqual({ amountUsd: '5', reset: 'daily', since: created });
      clock.advance(60_000);

      await Promise.all([
        service.updateApiKey(organization.id, key.hash, { limit: 7.5 }),
        otherContainer().updateApiKey(organization.id, key.hash, { limitReset: 'monthly', includeByokInLimit: true }),
      ]);

      const stored = await store.getApiKey(key.hash);
      expect([stored?.limit?.amountUsd, stored?.limit?.reset, stored?.includeByokInLimit]).toEqual(['7.5', 'monthly', true]);
      // The interval changed once, at this time: its window starts then, whichever write came first.
      expect(stored?.limit?.since).toBe(clock.now().toISOString());
      expect((await store.getRecords({ keyHash: key.hash })).key?.limit).toEqual(stored?.limit);
    });

    it("keeps a guardrail budget's window across a concurrent change of something else", async () => {
      const { organization } = await service.createOrganization({ name: 'Guardrail budgets', plan: 'enterprise' });
      const input = { name: 'Budget', description: null, workspaceId: null, allowedModels: null, ignoredModels: null, allowedProviders: null, ignoredProviders: null, enforceZdr: false };
      const created = await service.createGuardrail(organization.id, { ...input, budget: { amount: 20, reset: 'weekly' } });
      const since = clock.now().toISOString();
      clock.advance(60_000);

      await Promise.all([
        service.updateGuardrail(organization.id, created.id, { budget: { amount: 25 } }),
        otherContainer().updateGuardrail(organization.id, created.id, { enforceZdr: true }),
      ]);

      expect(await store.getGuardrail(organization.id, created.id)).toMatchObject({ enforceZdr: true, budget: { amountUsd: '25', reset: 'weekly', since }, version: 3 });
    });
  });
});

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

  it('refuses to delete a keyless workspace while a key place is held, saying until when, not that it has a key', async () => {
    clock.set('2026-03-01T11:00:00.000Z');
    const service = new AccountsService({ store: new DynamoAccountStore(tables.documentClient, table, { clock }), clock, newId: randomUUID });
    const { id } = await service.createWorkspace(organization.id, { name: 'Keyless' });
    // A key create killed between taking its place and writing the key, 10.5 s ago.
    await tables.documentClient.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${id}` },
        UpdateExpression: 'SET keyHolds = :holds',
        ExpressionAttributeValues: { ':holds': { ['f'.repeat(64)]: '2026-03-01T10:59:49.500Z' } },
      }),
    );

    expect(await answer(service.deleteWorkspace(organization.id, id))).toEqual({
      status: 409,
      body: {
        error: {
          code: 409,
          message: `Workspace ${id} has no API key, but the place of one is held by a write that has not finished: free again at 2026-03-01T11:00:50.000Z unless that write completes`,
          metadata: { free_at: '2026-03-01T11:00:50.000Z' },
        },
      },
    });
    clock.set('2026-03-01T11:00:49.500Z');
    expect(await answer(service.deleteWorkspace(organization.id, id))).toMatchObject({ status: 409 });
    clock.set('2026-03-01T11:00:50.000Z');
    expect(await answer(service.deleteWorkspace(organization.id, id))).toBe('accepted');
    expect(await service.listWorkspaces(organization.id)).not.toContainEqual(expect.objectContaining({ id }));
  });

  it('names the keys a workspace has, not the places of keys still being written', async () => {
    clock.set('2026-03-01T12:00:00.000Z');
    const store = new DynamoAccountStore(tables.documentClient, table, { clock });
    const service = new AccountsService({ store, clock, newId: randomUUID });
    const { id } = await service.createWorkspace(organization.id, { name: 'Mixed' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'Real', workspaceId: id });
    expect(await store.holdWorkspaceKey(organization.id, id, 'e'.repeat(64), clock.now().toISOString())).toBe(true);

    expect(await store.deleteWorkspace(organization.id, id)).toEqual({ outcome: 'has-keys', keyHashes: [key.hash] });
    expect(await answer(service.deleteWorkspace(organization.id, id))).toEqual({
      status: 400,
      body: { error: { code: 400, message: `Workspace ${id} has 1 API key; delete it first` } },
    });
  });

  it('deletes at once a workspace whose only key place was taken before a restart', async () => {
    const running = new DynamoAccountStore(tables.documentClient, table, { clock });
    await running.createWorkspace(workspace('ws-c', 'keyless-restarted'));
    await tables.documentClient.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: `ORG#${organization.id}`, sk: 'WORKSPACE#ws-c' },
        UpdateExpression: 'SET keyHolds = :holds',
        ExpressionAttributeValues: { ':holds': { ['f'.repeat(64)]: clock.now().toISOString() } },
      }),
    );
    expect(await running.deleteWorkspace(organization.id, 'ws-c')).toMatchObject({ outcome: 'keys-unfinished', places: 1 });
    const restarted = new DynamoAccountStore(tables.documentClient, table, { clock, writersSince: new Date(clock.now().getTime() + 1) });
    expect(await restarted.deleteWorkspace(organization.id, 'ws-c')).toMatchObject({ outcome: 'deleted' });
  });
});
