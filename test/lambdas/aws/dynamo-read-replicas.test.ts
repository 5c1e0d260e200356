import { PutCommand, ScanCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../../../lambdas/accounts/types';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { KEY_COPIES, ORGANIZATION_COPIES } from '../../../lambdas/aws/copy-kinds';
import { COPY_PREFIX } from '../../../lambdas/aws/dynamo-read-replicas';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { FixedClock } from '../../support/fixed-clock';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';
import { guardrailInput } from '../../support/accounts';

const TABLE = TABLE_SCHEMAS.keys.localName;

/**
 * What every request reads (a key, its organization, workspace and guardrails) it reads from
 * one of the item's copies (lambdas/aws/dynamo-read-replicas.ts). Whichever copy a request
 * picks, it sees every change answered before it, and a deleted key on none.
 */
describe('read copies of keys, organizations, workspaces and guardrails', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoAccountStore;
  let service: AccountsService;

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoAccountStore(tables.documentClient, TABLE);
    service = new AccountsService({ store, clock: new FixedClock() });
  });
  afterAll(async () => {
    await tables.stop();
  });

  /** A store whose requests read copy `copy` of every item. */
  const readingCopy = (copy: number, count: number) => new DynamoAccountStore(tables.documentClient, TABLE, { random: () => (copy + 0.5) / count });
  /** What each of the `count` copies says, through `read`. */
  const everyCopy = <T>(count: number, read: (reader: DynamoAccountStore) => Promise<T>) =>
    Promise.all(Array.from({ length: count }, (_, copy) => read(readingCopy(copy, count))));

  const copiesOf = async (pk: string, sk: string) => {
    const scan = await tables.documentClient.send(
      new ScanCommand({ TableName: TABLE, FilterExpression: 'begins_with(pk, :copy)', ExpressionAttributeValues: { ':copy': `${COPY_PREFIX}${pk}#${sk}#` } }),
    );
    return scan.Items ?? [];
  };

  it('writes every copy on create and on each change, and each copy reads as the item', async () => {
    const { organization, workspace } = await service.createOrganization({ name: 'Copies', plan: 'pro' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    expect(await copiesOf(`APIKEY#${key.hash}`, 'APIKEY')).toHaveLength(KEY_COPIES);
    expect(await copiesOf(`ORG#${organization.id}`, 'ORG')).toHaveLength(ORGANIZATION_COPIES);
    // The workspace's key count is not copied: it changes with its keys and no request reads it.
    const workspaceCopies = await copiesOf(`ORG#${organization.id}`, `WORKSPACE#${workspace.id}`);
    expect(workspaceCopies).toHaveLength(ORGANIZATION_COPIES);
    expect(workspaceCopies.every((copy) => copy.keyCount === undefined)).toBe(true);

    await service.updateApiKey(organization.id, key.hash, { disabled: true });
    await service.setPlan(organization.id, 'enterprise');
    const seen = await everyCopy(ORGANIZATION_COPIES, (reader) => reader.getRecords({ keyHash: key.hash, organizationId: organization.id, workspaceId: workspace.id }));
    for (const records of seen) {
      expect(records.key).toEqual(await store.getApiKey(key.hash));
      expect(records.key?.disabled).toBe(true);
      expect(records.organization).toEqual(await store.getOrganization(organization.id));
      expect(records.workspace).toEqual(await store.getWorkspace(organization.id, workspace.id));
    }
  });

  it('refuses a deleted key on every copy', async () => {
    const { organization } = await service.createOrganization({ name: 'Deleted key', plan: 'pro' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    await service.deleteApiKey(organization.id, key.hash);
    expect((await everyCopy(KEY_COPIES, (reader) => reader.getRecords({ keyHash: key.hash }))).map((records) => records.key)).toEqual(Array(KEY_COPIES).fill(undefined));
  });

  it('leaves every copy as the item is after concurrent changes, whatever order their copies landed in', async () => {
    const { organization } = await service.createOrganization({ name: 'Racing', plan: 'pro' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    await Promise.all(Array.from({ length: 12 }, (_, i) => store.updateApiKey(key.hash, { name: `name ${i}`, disabled: i % 2 === 0 }, `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`)));
    const item = await store.getApiKey(key.hash);
    expect(await everyCopy(KEY_COPIES, async (reader) => (await reader.getRecords({ keyHash: key.hash })).key)).toEqual(Array(KEY_COPIES).fill(item));
  });

  /**
   * A store whose first transaction is held until `release()`, once it has read the item and
   * computed its change: later changes land first, as they may in DynamoDB.
   */
  function holdingFirstTransaction() {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    let holding = true;
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (holding && command instanceof TransactWriteCommand) {
        holding = false;
        reached();
        await gate;
      }
      return send();
    });
    return { store: new DynamoAccountStore(client, TABLE), held, release };
  }

  it('computes a change held back behind a later one again from what that one left, on the item and every copy', async () => {
    const { organization } = await service.createOrganization({ name: 'Held', plan: 'pro' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'before' });
    const slow = holdingFirstTransaction();
    const disabling = slow.store.updateApiKey(key.hash, { disabled: true }, '2026-01-01T00:00:01.000Z');
    await slow.held;
    await store.updateApiKey(key.hash, { name: 'renamed' }, '2026-01-01T00:00:02.000Z');
    slow.release();
    await disabling;
    const item = await store.getApiKey(key.hash);
    expect(item).toMatchObject({ name: 'renamed', disabled: true });
    expect(await everyCopy(KEY_COPIES, async (reader) => (await reader.getRecords({ keyHash: key.hash })).key)).toEqual(Array(KEY_COPIES).fill(item));
  });

  it('keeps both guardrails of two assignments whose writes land in the other order', async () => {
    const { organization, workspace } = await service.createOrganization({ name: 'Held sets', plan: 'pro' });
    const holder = { kind: 'workspace', organizationId: organization.id, id: workspace.id } as const;
    const slow = holdingFirstTransaction();
    const first = slow.store.addGuardrail(holder, 'g-first', '2026-01-01T00:00:01.000Z');
    await slow.held;
    expect(await store.addGuardrail(holder, 'g-second', '2026-01-01T00:00:02.000Z')).toBe('changed');
    slow.release();
    expect(await first).toBe('changed');
    const item = await store.getWorkspace(organization.id, workspace.id);
    expect(item?.guardrailIds).toEqual(['g-first', 'g-second']);
    expect(await everyCopy(ORGANIZATION_COPIES, async (reader) => (await reader.getRecords({ organizationId: organization.id, workspaceId: workspace.id })).workspace)).toEqual(
      Array(ORGANIZATION_COPIES).fill(item),
    );
  });

  it('keeps a key deleted on every copy when changes race its deletion', async () => {
    const { organization } = await service.createOrganization({ name: 'Race delete', plan: 'pro' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'k' });
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => store.updateApiKey(key.hash, { name: `name ${i}` }, '2026-01-01T00:00:00.000Z')),
      store.deleteApiKey(key.hash),
      ...Array.from({ length: 6 }, (_, i) => store.updateApiKey(key.hash, { disabled: i % 2 === 0 }, '2026-01-01T00:00:00.000Z')),
    ]);
    expect(await store.getApiKey(key.hash)).toBeUndefined();
    expect((await everyCopy(KEY_COPIES, (reader) => reader.getRecords({ keyHash: key.hash }))).map((records) => records.key)).toEqual(Array(KEY_COPIES).fill(undefined));
  });

  it('reads guardrails from their copies: a change on every copy, a deleted one on none', async () => {
    const { organization } = await service.createOrganization({ name: 'Guarded', plan: 'pro' });
    const input = guardrailInput();
    const kept = await service.createGuardrail(organization.id, input);
    const gone = await service.createGuardrail(organization.id, input);
    const changed = await service.updateGuardrail(organization.id, kept.id, { allowedModels: ['acme/chat'] });
    await service.deleteGuardrail(organization.id, gone.id);
    const seen = await everyCopy(ORGANIZATION_COPIES, (reader) => reader.getGuardrails(organization.id, [gone.id, kept.id]));
    expect(seen).toEqual(Array(ORGANIZATION_COPIES).fill([changed]));
  });

  it('reads items an earlier release wrote without copies from the items themselves', async () => {
    const hash = 'e'.repeat(64);
    const organization = { id: 'org-before-copies', name: 'Before', plan: 'pro', providerPreferences: DEFAULT_PROVIDER_PREFERENCES, privacy: DEFAULT_PRIVACY, createdAt: '2025-01-01T00:00:00.000Z', updatedAt: null };
    const workspace = { id: 'ws-before-copies', organizationId: organization.id, name: 'default', slug: 'default', description: null, createdAt: '2025-01-01T00:00:00.000Z', updatedAt: null };
    const key = { hash, organizationId: organization.id, kind: 'workspace', workspaceId: workspace.id, accessLevel: null, userId: null, name: 'old', label: 'sk-mg-v1-e...', disabled: false, guardrailIds: [], expiresAt: null, createdAt: '2025-01-01T00:00:00.000Z', updatedAt: null };
    for (const item of [
      { pk: `ORG#${organization.id}`, sk: 'ORG', gsi1pk: 'ORGS', gsi1sk: organization.id, ...organization },
      { pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}`, ...workspace, guardrailIds: [], keyHolds: { [hash]: key.createdAt } },
      { pk: `APIKEY#${hash}`, sk: 'APIKEY', gsi1pk: `ORG#${organization.id}#APIKEYS`, gsi1sk: `${key.createdAt}#${hash}`, ...key },
    ]) {
      await tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: item }));
    }
    const records = await store.getRecords({ keyHash: hash, organizationId: organization.id, workspaceId: workspace.id });
    expect(records).toEqual({ key, organization, workspace: { ...workspace, guardrailIds: [] } });
    // Its first change writes its copies.
    await store.updateApiKey(hash, { disabled: true }, '2026-01-01T00:00:00.000Z');
    expect(await copiesOf(`APIKEY#${hash}`, 'APIKEY')).toHaveLength(KEY_COPIES);
    expect((await everyCopy(KEY_COPIES, (reader) => reader.getRecords({ keyHash: hash }))).every((seen) => seen.key?.disabled === true)).toBe(true);
  });
});
