import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoCatalogStore, VERSION_COPIES } from '../../../lambdas/aws/dynamo-catalog-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { catalogEntry } from '../../support/catalog-fixtures';
import { startEmbeddedTables } from '../../support/embedded-tables';

describe('DynamoCatalogStore on the embedded DynamoDB', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoCatalogStore;
  let versions = 0;

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoCatalogStore(tables.documentClient, TABLE_SCHEMAS.models.localName, () => `v${++versions}`);
  });
  afterAll(async () => {
    await tables.stop();
  });

  it('reports the same (absent) version from load and version() before anything is written', async () => {
    expect(await store.version()).toBeUndefined();
    expect(await store.load()).toEqual({ version: undefined, entries: [] });
  });

  it('writes entries in batches, loads them in position order, and bumps the version once per write', async () => {
    const entries = Array.from({ length: 60 }, (_, i) => catalogEntry(`m/${String(i).padStart(2, '0')}`, { popularity: i }));
    // Positions reversed: the load order follows positions, not ids or write order.
    await store.putEntries(entries.map((entry, i) => ({ position: 59 - i, entry })));
    const loaded = await store.load();
    expect(loaded.version).toBe('v1');
    expect(loaded.entries.map((e) => e.model.id)).toEqual(entries.map((e) => e.model.id).reverse());
    expect(loaded.entries[0]).toEqual(entries[59]);
  });

  it('updates usage figures of a known model only, bumping the version', async () => {
    expect(await store.setUsage('m/07', { popularity: 12345, weeklyTokens: 678 })).toBe(true);
    expect(await store.version()).toBe('v2');
    expect(await store.setUsage('nope/none', { popularity: 1 })).toBe(false);
    expect(await store.version()).toBe('v2');
    const seven = (await store.load()).entries.find((e) => e.model.id === 'm/07')!;
    expect({ popularity: seven.popularity, weeklyTokens: seven.weeklyTokens }).toEqual({ popularity: 12345, weeklyTokens: 678 });
  });

  it('removes models and bumps the version', async () => {
    await store.remove(['m/00', 'm/01']);
    const loaded = await store.load();
    expect(loaded.version).toBe('v3');
    expect(loaded.entries).toHaveLength(58);
    expect(loaded.entries.map((e) => e.model.id)).not.toContain('m/00');
  });

  it('writes the version to every copy in the same transaction, and reads a copy at random, the version item where a copy is missing', async () => {
    await store.putEntries([{ position: 0, entry: catalogEntry('m/copied') }]);
    const reader = (copy: number) => new DynamoCatalogStore(tables.documentClient, TABLE_SCHEMAS.models.localName, undefined, () => (copy + 0.5) / VERSION_COPIES);
    const expected = await new DynamoCatalogStore(tables.documentClient, TABLE_SCHEMAS.models.localName).load();
    const seen = await Promise.all(Array.from({ length: VERSION_COPIES }, (_, copy) => reader(copy).version()));
    expect(seen).toEqual(Array(VERSION_COPIES).fill(expected.version));
    // A catalog written before copies: the version item is read instead.
    await tables.documentClient.send(new DeleteCommand({ TableName: TABLE_SCHEMAS.models.localName, Key: { pk: 'CATALOG_VERSION#3', sk: 'VERSION' } }));
    expect(await reader(3).version()).toBe(expected.version);
  });
});
