import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { connectTarget } from '../../ops/target';
import { runOps } from '../../ops/run';
import { startLocalProcess, type LocalProcess } from '../support/local-process';

const KEYS_TABLE = TABLE_SCHEMAS.keys.localName;

// dynalite's storage layer: used here, with the service stopped, to leave its data as a
// process killed between an index write and its item write leaves it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as DynaliteDb;
type DynamoJson = Record<string, Record<string, unknown>>;
interface DynaliteStore {
  db: { close(callback?: (error?: Error) => void): unknown };
  getTable(name: string, callback: (error: Error | null, table: unknown) => void): void;
  getItemDb(name: string): { get(key: string, callback: (error: Error | null, item: DynamoJson) => void): void };
}
interface DynaliteDb {
  create(options: { path: string }): DynaliteStore;
  createKey(item: DynamoJson, table: unknown): string;
  updateIndexes(store: DynaliteStore, table: unknown, existing: DynamoJson | null, item: DynamoJson | null, callback: (error?: Error) => void): void;
}

/**
 * `kill -9` of `npm start`, then a start on the same data. dynalite writes a key's index
 * entry and the key item separately, so a kill between the two leaves the listing index
 * saying something the key item does not. Whatever the index says, the key item is the
 * truth after a restart: every listed key can be read and deleted, and lists as it is.
 */
describe('npm start after kill -9', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-crash-'));
  let service: LocalProcess | undefined;
  afterAll(async () => {
    await service?.killHard();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(): Promise<LocalProcess> {
    service = await startLocalProcess(dataDir);
    return service;
  }

  const killHard = () => service!.killHard();

  /** Replays the index half of a write whose item half was lost. */
  async function loseItemWrites(changes: { hash: string; after: (item: DynamoJson) => DynamoJson | null }[], orphan: DynamoJson): Promise<void> {
    const store = dynaliteDb.create({ path: join(dataDir, 'dynamodb') });
    const table = await new Promise<unknown>((resolve, reject) => store.getTable(KEYS_TABLE, (e, t) => (e ? reject(e) : resolve(t))));
    const updateIndexes = (existing: DynamoJson | null, item: DynamoJson | null) =>
      new Promise<void>((resolve, reject) => dynaliteDb.updateIndexes(store, table, existing, item, (e) => (e ? reject(e) : resolve())));
    for (const { hash, after } of changes) {
      const key = dynaliteDb.createKey({ pk: { S: `APIKEY#${hash}` }, sk: { S: 'APIKEY' } }, table);
      const item = await new Promise<DynamoJson>((resolve, reject) => store.getItemDb(KEYS_TABLE).get(key, (e, i) => (e ? reject(e) : resolve(i))));
      await updateIndexes(item, after(item));
    }
    await updateIndexes(null, orphan);
    await new Promise<void>((resolve) => {
      const closing = store.db.close(() => resolve());
      if (closing instanceof Promise) void closing.then(() => resolve());
    });
  }

  it('lists every key as its own item says, and every listed key can be read and deleted', async () => {
    const first = await start();
    const manage = (baseUrl: string, path: string, init: { method?: string; body?: unknown } = {}) =>
      fetch(`${baseUrl}${path}`, {
        method: init.method ?? 'GET',
        headers: { Authorization: `Bearer ${first.keys.managementReadWrite}`, 'Content-Type': 'application/json' },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
    const create = async (name: string) => (await manage(first.baseUrl, '/keys', { method: 'POST', body: { name } })).body;
    const deleting = await create('delete interrupted');
    const disabling = await create('disable interrupted');
    // A burst of writes in flight when the process is killed: once the first is answered, the others are under way.
    const burst = Array.from({ length: 20 }, (_, i) => manage(first.baseUrl, '/keys', { method: 'POST', body: { name: `burst ${i}` } }).catch(() => undefined));
    await Promise.race(burst);
    await killHard();
    await Promise.all(burst);

    const neverWritten = 'e'.repeat(64);
    await loseItemWrites(
      [
        // Delete: index entry gone, key item still there (and still authenticating).
        { hash: deleting.data.hash, after: () => null },
        // Disable: index entry says disabled, the key item does not.
        { hash: disabling.data.hash, after: (item) => ({ ...item, disabled: { BOOL: true } }) },
      ],
      {
        pk: { S: `APIKEY#${neverWritten}` },
        sk: { S: 'APIKEY' },
        gsi1pk: { S: `ORG#${first.organizationId}#APIKEYS` },
        gsi1sk: { S: `2026-01-01T00:00:00.000Z#${neverWritten}` },
        hash: { S: neverWritten },
        organizationId: { S: first.organizationId },
        name: { S: 'create interrupted' },
        disabled: { BOOL: false },
      },
    );

    const second = await start();
    expect(second.organizationId).toBe(first.organizationId);
    const listed = (await manage(second.baseUrl, '/keys?include_disabled=true&include_management=true')).body.data as { hash: string; name: string; disabled: boolean }[];
    const hashes = listed.map((key) => key.hash);
    expect(hashes).toContain(deleting.data.hash);
    expect(hashes).not.toContain(neverWritten);
    expect(listed.find((key) => key.hash === disabling.data.hash)?.disabled).toBe(false);
    expect((await manage(second.baseUrl, '/keys')).body.data.map((key: { hash: string }) => key.hash)).toContain(disabling.data.hash);

    // Every listed key reads as listed; every key but the demo's own is deleted, once.
    for (const key of listed) {
      const read = await manage(second.baseUrl, `/keys/${key.hash}`);
      expect({ hash: key.hash, status: read.status, disabled: read.body.data?.disabled }).toEqual({ hash: key.hash, status: 200, disabled: key.disabled });
    }
    const created = listed.filter((key) => !key.name.startsWith('Demo'));
    const viaCli = created.pop()!;
    for (const key of created) {
      expect((await manage(second.baseUrl, `/keys/${key.hash}`, { method: 'DELETE' })).status).toBe(200);
    }
    const io = { out: () => undefined, err: () => undefined };
    expect(await runOps(['--data-dir', dataDir, 'key', 'delete', first.organizationId, viaCli.hash], io, connectTarget)).toBe(0);
    const remaining = (await manage(second.baseUrl, '/keys?include_disabled=true&include_management=true')).body.data.map((key: { name: string }) => key.name);
    expect(remaining.sort()).toEqual(['Demo personal key', 'Demo read-only management key', 'Demo management key', 'Demo workspace key'].sort());
    // The planted entry at least; a write of the burst cut between its index entry and its item adds its own.
    expect(second.output()).toMatch(/repaired the listing index after an unclean stop \(\d+ entries restored, [1-9]\d* without their item removed\)/);
    await killHard();
  }, 120_000);
});
