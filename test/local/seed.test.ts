import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccountsService } from '../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { ensureDemoOrganization } from '../../local/seed';
import { startEmbeddedTables } from '../support/embedded-tables';

describe('the demo organization and .local/demo.json', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoAccountStore;
  let service: AccountsService;
  let dir: string;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName);
    service = new AccountsService({ store });
    dir = mkdtempSync(join(tmpdir(), 'modelgate-seed-'));
  });
  afterAll(async () => {
    await tables.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const ensure = (file: string, warnings: string[] = []) =>
    ensureDemoOrganization(service, store, file, 'http://127.0.0.1:1/api/v1', (message) => warnings.push(message));

  it('writes the credentials owner-only through a temporary file, leaving nothing else behind', async () => {
    const file = join(dir, 'fresh', 'demo.json');
    const demo = await ensure(file);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(demo);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'fresh'))).toEqual(['demo.json']);
    // A second start reuses the organization while its keys still authenticate.
    expect((await ensure(file)).organizationId).toBe(demo.organizationId);
  });

  it.each([
    ['truncated by a crash', '{"baseUrl":"http://127.0.0.1:8787/api/v1","organizationId":"'],
    ['empty', ''],
    ['JSON of another shape', '[1,2,3]'],
    ['null', 'null'],
    ['keys that are not secrets', '{"organizationId":"o","workspaceId":"w","keys":{"a":1,"b":2,"c":3,"d":4}}'],
  ])('rebuilds a damaged file (%s) with a clear message instead of failing to start', async (_name, content) => {
    const file = join(dir, 'demo.json');
    writeFileSync(file, content);
    const warnings: string[] = [];
    const demo = await ensure(file, warnings);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(demo);
    expect(await store.getOrganization(demo.organizationId)).toBeDefined();
    if (content.includes('"keys"')) {
      // Well-formed but unusable credentials are replaced silently, as stale ones always were.
      expect(warnings).toEqual([]);
    } else {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is damaged \\(.+\\): creating a new demo organization and rewriting it$`));
    }
  });
});
