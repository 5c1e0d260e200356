import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { createDocumentClient } from '../../../lambdas/aws/dynamo-client';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../../local/embedded-dynamodb';
import { createTables } from '../../../local/tables';

type DynamoJson = Record<string, Record<string, unknown>>;
interface DynaliteStore {
  getTable(name: string, callback: (error: Error | null, table: unknown) => void): void;
  getItemDb(name: string): { get(key: string, callback: (error: Error | null, item: DynamoJson) => void): void };
}
// The embedded server's storage layer, to put its index out of step with its items as an
// interrupted write or index replication lag does. No other server's storage can be reached
// so: this suite runs on dynalite whichever DynamoDB the others run on (test/support/dynamodb-local.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as {
  create(options: unknown): DynaliteStore;
  createKey(item: DynamoJson, table: unknown): string;
  updateIndexes(store: DynaliteStore, table: unknown, existing: DynamoJson | null, item: DynamoJson | null, callback: (error?: Error) => void): void;
};

describe('DynamoAccountStore key listings come from the key items, not the index copies', () => {
  let dynamo: EmbeddedDynamoDb;
  let dynalite: DynaliteStore;
  const create = dynaliteDb.create;
  beforeAll(async () => {
    dynaliteDb.create = (options) => (dynalite = create(options));
    dynamo = await startEmbeddedDynamoDb();
    dynaliteDb.create = create;
    await createTables(dynamo.client);
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  it('shows a key as its item says and leaves out index entries without an item', async () => {
    const store = new DynamoAccountStore(createDocumentClient(dynamo.client), TABLE_SCHEMAS.keys.localName);
    const service = new AccountsService({ store });
    const { organization } = await service.createOrganization({ name: 'Index', plan: 'pro' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'real' });

    const table = await new Promise<unknown>((resolve, reject) =>
      dynalite.getTable(TABLE_SCHEMAS.keys.localName, (e, t) => (e ? reject(e) : resolve(t))),
    );
    const itemKey = dynaliteDb.createKey({ pk: { S: `APIKEY#${key.hash}` }, sk: { S: 'APIKEY' } }, table);
    const item = await new Promise<DynamoJson>((resolve, reject) =>
      dynalite.getItemDb(TABLE_SCHEMAS.keys.localName).get(itemKey, (e, i) => (e ? reject(e) : resolve(i))),
    );
    const orphan = {
      ...item,
      pk: { S: `APIKEY#${'e'.repeat(64)}` },
      gsi1sk: { S: `2000-01-01T00:00:00.000Z#${'e'.repeat(64)}` },
      hash: { S: 'e'.repeat(64) },
    };
    const updateIndexes = (existing: DynamoJson | null, next: DynamoJson | null) =>
      new Promise<void>((resolve, reject) => dynaliteDb.updateIndexes(dynalite, table, existing, next, (e) => (e ? reject(e) : resolve())));
    await updateIndexes(item, { ...item, disabled: { BOOL: true }, name: { S: 'stale copy' } });
    await updateIndexes(null, orphan);

    expect(await store.listApiKeys(organization.id)).toEqual([key]);
    // A page too: the index's stale copy says disabled, the item does not.
    expect(await store.listApiKeys(organization.id, { offset: 0, limit: 10, includeDisabled: false })).toEqual([key]);
  });
});
