import { AlreadyExistsError } from '../../../lambdas/accounts/account-store';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES, type Organization } from '../../../lambdas/accounts/types';
import { DomainError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { useAccountStoreTables } from '../../support/embedded-tables';

describe('DynamoAccountStore on the embedded DynamoDB', () => {
  const db = useAccountStoreTables();

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
    await db.store.createOrganization(org('o-1'));
    await expect(db.store.createOrganization({ ...org('o-1'), name: 'other' })).rejects.toBeInstanceOf(AlreadyExistsError);
    expect(await db.store.getOrganization('o-1')).toEqual(org('o-1'));
    expect((await db.store.listOrganizations()).map((o) => o.id)).toContain('o-1');
  });

  it('updates only the fields given and reports a missing item as undefined', async () => {
    const updated = await db.store.updateOrganization('o-1', { plan: 'enterprise' }, '2026-02-01T00:00:00.000Z');
    expect(updated).toEqual({ ...org('o-1'), plan: 'enterprise', updatedAt: '2026-02-01T00:00:00.000Z' });
    expect(await db.store.updateOrganization('missing', { plan: 'free' }, 'x')).toBeUndefined();
    expect(await db.store.getOrganization('missing')).toBeUndefined();
  });

  it('stores keys by hash only, lists them per organization and deletes them once', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Keys Org', plan: 'pro' });
    const created = await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'k1' });
    const raw = await db.tables.documentClient.send(
      new (await import('@aws-sdk/lib-dynamodb')).ScanCommand({ TableName: TABLE_SCHEMAS.keys.localName }),
    );
    expect(JSON.stringify(raw.Items)).not.toContain(created.secret);
    expect(await db.store.getApiKey(created.key.hash)).toEqual(created.key);
    expect((await db.store.listApiKeys(organization.id)).map((k) => k.hash)).toEqual([created.key.hash]);
    expect(await db.store.deleteApiKey(created.key.hash)).toBe(true);
    expect(await db.store.deleteApiKey(created.key.hash)).toBe(false);
    expect(await db.store.getApiKey(created.key.hash)).toBeUndefined();
  });

  it('keeps organizations apart: another organization sees none of the keys, guardrails or workspaces', async () => {
    const a = await db.service.createOrganization({ name: 'A', plan: 'enterprise' });
    const b = await db.service.createOrganization({ name: 'B', plan: 'enterprise' });
    const keyOfA = await db.service.createApiKey(a.organization.id, { kind: 'workspace', name: 'a-key' });
    const status = async (promise: Promise<unknown>) => promise.then(() => 200, (e: unknown) => toErrorBody(e).status);
    expect(await status(db.service.getApiKey(b.organization.id, keyOfA.key.hash))).toBe(404);
    expect(await status(db.service.updateApiKey(b.organization.id, keyOfA.key.hash, { disabled: true }))).toBe(404);
    expect(await status(db.service.deleteApiKey(b.organization.id, keyOfA.key.hash))).toBe(404);
    expect(await status(db.service.getWorkspace(b.organization.id, a.workspace.id))).toBe(404);
    expect(await status(db.service.createApiKey(b.organization.id, { kind: 'workspace', name: 'x', workspaceId: a.workspace.id }))).toBe(404);
    expect((await db.store.getApiKey(keyOfA.key.hash))?.disabled).toBe(false);
  });

  it('turns a value DynamoDB refuses (an over-long key) into a 400 at the store boundary, for readers and writers alike', async () => {
    const refusal = async (promise: Promise<unknown>) =>
      promise.then(
        () => 'accepted',
        (e: Error) => (e instanceof DomainError ? { status: toErrorBody(e).status, message: e.message } : e.name),
      );
    const expected = { status: 400, message: 'A value in the request cannot be stored: it is too long or malformed' };
    expect(await refusal(db.store.getApiKey('k'.repeat(3000)))).toEqual(expected);
    expect(await refusal(db.store.getWorkspace('o-1', 'w'.repeat(1100)))).toEqual(expected);
    expect(await refusal(db.store.deleteApiKey('k'.repeat(3000)))).toEqual(expected);
    expect(await refusal(db.store.getGuardrails('o-1', ['g'.repeat(1100)]))).toEqual(expected);
  });
});
