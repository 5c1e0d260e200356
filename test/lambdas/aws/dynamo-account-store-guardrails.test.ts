import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { useAccountStoreTables } from '../../support/embedded-tables';
import { guardrailInput } from '../../support/accounts';

describe('DynamoAccountStore on the embedded DynamoDB', () => {
  const db = useAccountStoreTables();

  it('fetches guardrails in the order asked, skipping missing ones, across batch boundaries', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Guard Org', plan: 'enterprise' });
    const ids: string[] = [];
    for (let i = 0; i < 105; i++) {
      const g = await db.service.createGuardrail(organization.id, guardrailInput({ name: `g${i}` }));
      ids.push(g.id);
    }
    const wanted = [ids[104]!, 'nope', ids[0]!, ...ids.slice(1, 103)];
    const found = await db.store.getGuardrails(organization.id, wanted);
    expect(found.map((g) => g.id)).toEqual(wanted.filter((id) => id !== 'nope'));
  });

  it('lets a key hold 10 guardrails and no more, however many are assigned at once', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Full key', plan: 'enterprise' });
    const { key } = await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    const guardrails = await Promise.all(Array.from({ length: 14 }, (_, i) => db.service.createGuardrail(organization.id, guardrailInput({ name: `g${i}` }))));
    const outcomes = await Promise.all(guardrails.map((g) => db.store.addGuardrail({ kind: 'key', hash: key.hash }, g.id, '2026-11-29T00:00:00.000Z')));
    expect(outcomes.filter((outcome) => outcome === 'changed')).toHaveLength(10);
    expect(outcomes.filter((outcome) => outcome === 'full')).toHaveLength(4);
    expect((await db.service.getApiKey(organization.id, key.hash)).guardrailIds).toHaveLength(10);
    // Through the service: a 400 naming the list, before anything is written.
    const spare = guardrails[outcomes.indexOf('full')]!;
    const other = await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'other' });
    await expect(db.service.assignGuardrailToKeys(organization.id, spare.id, [other.key.hash, key.hash])).rejects.toMatchObject({
      message: `Invalid key_hashes: key ${key.hash} holds 10 guardrails already, the most one may hold`,
      metadata: { parameter: 'key_hashes' },
    });
    expect((await db.service.getApiKey(organization.id, other.key.hash)).guardrailIds).toEqual([]);
  });

  describe('guardrail updates, written only at the version read', () => {
    const input = guardrailInput({ name: 'Lists' });

    it('replaces a guardrail at its version, and refuses a second writer from the same read', async () => {
      const { organization } = await db.service.createOrganization({ name: 'Versions', plan: 'enterprise' });
      const created = await db.service.createGuardrail(organization.id, input);
      expect(created.version).toBe(1);
      const allowed = { ...created, allowedModels: ['acme/model'], version: 2 };
      const ignored = { ...created, ignoredModels: ['acme/model'], version: 2 };

      expect(await db.store.updateGuardrail(allowed, 1)).toBe(true);
      expect(await db.store.updateGuardrail(ignored, 1)).toBe(false);

      expect(await db.store.getGuardrail(organization.id, created.id)).toEqual(allowed);
      await db.store.deleteGuardrail(organization.id, created.id);
      expect(await db.store.updateGuardrail({ ...allowed, version: 3 }, 2)).toBe(false);
      expect(await db.store.getGuardrail(organization.id, created.id)).toBeUndefined();
    });

    it('versions a guardrail written before versions on its first update', async () => {
      const { organization } = await db.service.createOrganization({ name: 'Unversioned', plan: 'enterprise' });
      const { version: _version, ...unversioned } = await db.service.createGuardrail(organization.id, input);
      await db.tables.documentClient.send(
        new PutCommand({ TableName: TABLE_SCHEMAS.keys.localName, Item: { pk: `ORG#${organization.id}`, sk: `GUARDRAIL#${unversioned.id}`, ...unversioned } }),
      );

      const updated = await db.service.updateGuardrail(organization.id, unversioned.id, { enforceZdr: true });

      expect(updated).toEqual({ ...unversioned, enforceZdr: true, version: 1, updatedAt: db.clock.now().toISOString() });
      expect(await db.store.updateGuardrail({ ...unversioned, name: 'stale' }, undefined)).toBe(false);
    });

    it('checks a concurrent update against what the other one left: one model is never both allowed and ignored', async () => {
      const { organization } = await db.service.createOrganization({ name: 'Race', plan: 'enterprise' });
      for (let round = 0; round < 10; round++) {
        const { id } = await db.service.createGuardrail(organization.id, input);

        const outcomes = await Promise.allSettled([
          db.service.updateGuardrail(organization.id, id, { allowedModels: ['acme/model'] }),
          db.service.updateGuardrail(organization.id, id, { ignoredModels: ['acme/model'] }),
        ]);

        expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
        expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({
          reason: { kind: 'invalid_input', message: 'Models cannot be both allowed and ignored: acme/model' },
        });
        const stored = await db.store.getGuardrail(organization.id, id);
        expect([stored?.allowedModels, stored?.ignoredModels].filter((list) => list !== null)).toEqual([['acme/model']]);
        expect(stored?.version).toBe(2);
      }
    });

    it('answers 409 when other writers keep changing the guardrail', async () => {
      const { organization } = await db.service.createOrganization({ name: 'Busy', plan: 'enterprise' });
      const { id } = await db.service.createGuardrail(organization.id, input);
      const busy = new AccountsService({ store: Object.assign(Object.create(db.store), { updateGuardrail: async () => false }), clock: db.clock });

      await expect(busy.updateGuardrail(organization.id, id, { enforceZdr: true })).rejects.toMatchObject({
        kind: 'conflict',
        message: 'The guardrail was changed by another request at the same time; retry',
      });
    });
  });

  it('adds and removes guardrail ids as a string set, reporting only real changes, and converts lists written before sets', async () => {
    const { PutCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { organization, workspace } = await db.service.createOrganization({ name: 'Sets', plan: 'enterprise' });
    const { key } = await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    const holder = { kind: 'key', hash: key.hash } as const;
    const raw = async () =>
      (await db.tables.documentClient.send(new GetCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: `APIKEY#${key.hash}`, sk: 'APIKEY' } }))).Item!;

    // No guardrails: no attribute at all, as DynamoDB has no empty sets.
    expect(await raw()).not.toHaveProperty('guardrailIds');
    expect(await db.store.addGuardrail(holder, 'g-2', 't1')).toBe('changed');
    expect(await db.store.addGuardrail(holder, 'g-1', 't1')).toBe('changed');
    expect(await db.store.addGuardrail(holder, 'g-1', 't2')).toBe('unchanged');
    expect((await raw()).guardrailIds).toEqual(new Set(['g-1', 'g-2']));
    expect((await db.store.getApiKey(key.hash))!.guardrailIds).toEqual(['g-1', 'g-2']);
    expect((await db.store.getApiKey(key.hash))!.updatedAt).toBe('t1');
    expect(await db.store.removeGuardrail(holder, 'g-3', 't3')).toBe('unchanged');
    expect(await db.store.removeGuardrail(holder, 'g-1', 't3')).toBe('changed');
    expect(await db.store.removeGuardrail(holder, 'g-2', 't3')).toBe('changed');
    expect(await raw()).not.toHaveProperty('guardrailIds');
    expect(await db.store.addGuardrail({ kind: 'key', hash: 'f'.repeat(64) }, 'g-1', 't')).toBe('missing');

    // Items from before sets hold a list: converted on the first change, nothing lost.
    await db.tables.documentClient.send(new PutCommand({ TableName: TABLE_SCHEMAS.keys.localName, Item: { ...(await raw()), guardrailIds: ['old-1', 'old-2', 'old-1'] } }));
    expect(await db.store.addGuardrail(holder, 'g-9', 't4')).toBe('changed');
    expect((await raw()).guardrailIds).toEqual(new Set(['old-1', 'old-2', 'g-9']));
    const wsHolder = { kind: 'workspace', organizationId: organization.id, id: workspace.id } as const;
    const wsKey = { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}` };
    const wsItem = (await db.tables.documentClient.send(new GetCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: wsKey }))).Item!;
    await db.tables.documentClient.send(new PutCommand({ TableName: TABLE_SCHEMAS.keys.localName, Item: { ...wsItem, guardrailIds: [] } }));
    expect(await db.store.removeGuardrail(wsHolder, 'g-1', 't5')).toBe('unchanged');
    expect(await db.store.addGuardrail(wsHolder, 'g-1', 't5')).toBe('changed');
    expect((await db.store.getWorkspace(organization.id, workspace.id))!.guardrailIds).toEqual(['g-1']);
  });
});
