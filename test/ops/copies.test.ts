import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { KEY_COPIES, ORGANIZATION_COPIES } from '../../lambdas/aws/copy-kinds';
import { copyKey } from '../../lambdas/aws/dynamo-read-replicas';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { runOps } from '../../ops/run';
import { connectTarget } from '../../ops/target';
import { startEmbeddedTables } from '../support/embedded-tables';

const TABLE = TABLE_SCHEMAS.keys.localName;

/**
 * `npm run ops -- copies check|repair` on a deployed instance (the default credential chain, the
 * tables its variables name), over what earlier releases could leave: items without copies,
 * copies behind their items or marked deleted while the item exists, and copies of an item that
 * is gone, still let in.
 */
describe('ops copies check and repair', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let saved: NodeJS.ProcessEnv;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    saved = { ...process.env };
    Object.assign(process.env, { AWS_ENDPOINT_URL_DYNAMODB: tables.endpoint, AWS_REGION: 'local', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' });
  });
  afterAll(async () => {
    process.env = saved;
    await tables.stop();
  });

  const ops = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runOps([...argv, '--aws'], { out: (text) => out.push(text), err: (text) => err.push(text) }, (flags) =>
      connectTarget(flags, { KEYS_TABLE: TABLE, MODELS_TABLE: TABLE_SCHEMAS.models.localName }),
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const put = (Item: Record<string, unknown>) => tables.documentClient.send(new PutCommand({ TableName: TABLE, Item }));
  const get = async (pk: string, sk: string) => (await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: { pk, sk } }))).Item;

  it('counts what is missing, behind and orphaned, repairs it under the items’ revisions, and then finds nothing', async () => {
    const store = new DynamoAccountStore(tables.documentClient, TABLE);
    const service = new AccountsService({ store });
    const { organization, workspace } = await service.createOrganization({ name: 'Before copies', plan: 'pro' });
    const { key: behind } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'behind' });
    const { key: withdrawn } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'withdrawn' });
    // A key an earlier release wrote: no revision, no copies.
    const legacyHash = 'a'.repeat(64);
    await put({ pk: `APIKEY#${legacyHash}`, sk: 'APIKEY', gsi1pk: `ORG#${organization.id}#APIKEYS`, gsi1sk: `2025-01-01T00:00:00.000Z#${legacyHash}`, ...behind, hash: legacyHash, name: 'legacy', revision: undefined });
    // A rollback: a change the earlier release made reached the key, not copy 3.
    await service.updateApiKey(organization.id, behind.hash, { disabled: true });
    const stale = await get(copyKey({ pk: `APIKEY#${behind.hash}`, sk: 'APIKEY' }, 3).pk, 'COPY');
    await put({ ...stale, disabled: false, revision: 1 });
    // A deletion of the earlier release cut short between marking the copies and deleting the key.
    for (let n = 0; n < KEY_COPIES; n++) await put({ ...copyKey({ pk: `APIKEY#${withdrawn.hash}`, sk: 'APIKEY' }, n), deleted: true, revision: Number.MAX_SAFE_INTEGER });
    // A workspace copy lost, and a failed create of the earlier release that left its copies, let in.
    await tables.documentClient.send(new DeleteCommand({ TableName: TABLE, Key: copyKey({ pk: `ORG#${organization.id}`, sk: `WORKSPACE#${workspace.id}` }, 7) }));
    const orphanHash = 'b'.repeat(64);
    const orphanRecord = { ...behind, hash: orphanHash, name: 'orphan', disabled: false, revision: 1 };
    for (let n = 0; n < KEY_COPIES; n++) await put({ ...orphanRecord, ...copyKey({ pk: `APIKEY#${orphanHash}`, sk: 'APIKEY' }, n) });
    expect((await store.getRecords({ keyHash: orphanHash })).key?.name).toBe('orphan');

    const checked = await ops('copies', 'check', '--json');
    expect(checked.code).toBe(1);
    expect(JSON.parse(checked.out)).toEqual({
      data: {
        key: { items: 3, missing: KEY_COPIES, behind: 1 + KEY_COPIES, orphaned: KEY_COPIES, repaired: 0 },
        organization: { items: 1, missing: 0, behind: 0, orphaned: 0, repaired: 0 },
        workspace: { items: 1, missing: 1, behind: 0, orphaned: 0, repaired: 0 },
        guardrail: { items: 0, missing: 0, behind: 0, orphaned: 0, repaired: 0 },
      },
      consistent: false,
    });
    expect(checked.err).toContain('copies are missing, behind or orphaned');

    const repaired = await ops('copies', 'repair');
    expect(repaired.code).toBe(0);
    expect(repaired.out.split('\n')).toEqual([
      'KIND          ITEMS  MISSING  BEHIND  ORPHANED  REPAIRED',
      `key               3       ${KEY_COPIES}      ${1 + KEY_COPIES}        ${KEY_COPIES}         4`,
      'organization      1        0       0         0         0',
      'workspace         1        1       0         0         1',
      'guardrail         0        0       0         0         0',
      'Repaired the copies of 5 items.',
    ]);

    const again = await ops('copies', 'check');
    expect(again.code).toBe(0);
    expect(again.out.split('\n').at(-1)).toBe('Every copy agrees with its item.');
    // What requests now meet is what management shows.
    for (let copy = 0; copy < ORGANIZATION_COPIES; copy += 5) {
      const reader = new DynamoAccountStore(tables.documentClient, TABLE, { random: () => (copy + 0.5) / ORGANIZATION_COPIES });
      for (const hash of [legacyHash, behind.hash, withdrawn.hash, orphanHash]) expect((await reader.getRecords({ keyHash: hash })).key).toEqual(await store.getApiKey(hash));
      expect((await reader.getRecords({ organizationId: organization.id, workspaceId: workspace.id })).workspace).toEqual(await store.getWorkspace(organization.id, workspace.id));
    }
    expect((await store.getApiKey(withdrawn.hash))?.name).toBe('withdrawn');
    expect((await store.getRecords({ keyHash: orphanHash })).key).toBeUndefined();
  });
});
