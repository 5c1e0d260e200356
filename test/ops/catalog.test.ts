import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CatalogEntry, PublicModel } from '../../lambdas/catalog/types';
import { DATA_DIR, snapshotCatalog } from '../../local/seed';
import { startOpsHarness, type OpsHarness } from '../support/ops-harness';

const SNAPSHOT = join(DATA_DIR, 'catalog-snapshot.json');
const derived = snapshotCatalog();
const models: PublicModel[] = derived.map((entry) => entry.model);
const [alpha, beta, gamma] = models;

/** An entry with one hand-made endpoint, unlike any derived one. */
function customEntry(model: PublicModel): CatalogEntry {
  const base = derived.find((entry) => entry.model.id === model.id)!;
  return { model, endpoints: [{ ...base.endpoints[0]!, tag: 'custom-host', provider_name: 'Custom Host' }], popularity: 7, weeklyTokens: 700 };
}

describe('ops catalog commands', () => {
  let ops: OpsHarness;
  let dir: string;
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const ids = async () => (await ops.catalog.load()).entries.map((entry) => entry.model.id);

  beforeEach(async () => {
    ops = await startOpsHarness();
    dir = mkdtempSync(join(tmpdir(), 'modelgate-ops-'));
  });
  afterEach(async () => {
    await ops.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('catalog import accepts the real snapshot: 421 models with the demo endpoints the local seed derives', async () => {
    const result = await ops.run('catalog', 'import', SNAPSHOT);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        `Imported 421 models from ${SNAPSHOT}: 421 new, 0 updated.`,
        'Endpoints: 0 from the file, 0 kept from the catalog, 421 derived (demo data).',
        'Left 0 stored models absent from the file in place (--replace removes them).',
        '',
      ].join('\n'),
    );
    const stored = await ops.catalog.load();
    expect(stored.entries).toHaveLength(421);
    expect(stored.entries).toEqual(derived);
  });

  it('catalog import rejects a file with one bad model, listing the problems, and writes nothing', async () => {
    await ops.run('catalog', 'import', file('two.json', { data: [alpha, beta] }));
    const before = await ops.catalog.load();
    const { name: _name, ...nameless } = gamma!;
    const bad = { ...nameless, pricing: { ...gamma!.pricing, prompt: 'abc' } };
    const path = file('bad.json', { data: [alpha, beta, bad] });

    const result = await ops.run('catalog', 'import', path, '--replace');

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: [
        `error: ${path} was not imported (2 problems); nothing was written:`,
        `  ${gamma!.id}: name: is required`,
        `  ${gamma!.id}: pricing.prompt: "abc" is not a decimal number`,
        '',
      ].join('\n'),
      connectedWith: undefined,
    });
    expect(await ops.catalog.load()).toEqual(before);
  });

  it('catalog import names models without an id by position and reports duplicates', async () => {
    const { id: _id, ...anonymous } = beta!;
    const path = file('dupes.json', { data: [alpha, anonymous, alpha] });

    const result = await ops.run('catalog', 'import', path);

    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').slice(1, 3)).toEqual([
      '  item #2: id: is required',
      `  ${alpha!.id}: appears more than once (first as item #1)`,
    ]);
    expect(await ops.catalog.version()).toBeUndefined();
  });

  it('catalog import rejects catalog entries with unknown fields or malformed endpoints', async () => {
    const entry = customEntry(alpha!);
    const path = file('entries.json', [
      { ...entry, weekly_tokens: 5 },
      { ...customEntry(beta!), endpoints: [{ ...entry.endpoints[0]!, regions: 'eu', pricing: { prompt: '1' } }] },
    ]);

    const result = await ops.run('catalog', 'import', path);

    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').slice(1, -1)).toEqual([
      `  ${alpha!.id}: weekly_tokens: is not a catalog entry field (model, endpoints, popularity, weeklyTokens, categories)`,
      `  ${beta!.id}: endpoints[0].regions: must be an array of strings`,
      `  ${beta!.id}: endpoints[0].pricing.completion: is required`,
    ]);
  });

  it('catalog import files models under the use cases an entry names, which GET /models?category= selects by', async () => {
    const bad = await ops.run('catalog', 'import', file('bad-categories.json', [{ ...customEntry(alpha!), categories: ['poetry'] }]));
    expect(bad.stderr.split('\n')[1]).toBe(
      `  ${alpha!.id}: categories: must be an array of programming, roleplay, marketing, marketing/seo, technology, science, translation, legal, finance, health, trivia, academia`,
    );

    await ops.run('catalog', 'import', file('categories.json', [{ ...customEntry(alpha!), categories: ['programming', 'science', 'programming'] }]));
    expect((await ops.catalog.load()).entries).toEqual([{ ...customEntry(alpha!), categories: ['programming', 'science'] }]);
    // A file in the public shape keeps what the catalog files the model under.
    await ops.run('catalog', 'import', file('public.json', { data: [{ ...alpha!, name: 'Renamed' }] }));
    expect((await ops.catalog.load()).entries[0]!.categories).toEqual(['programming', 'science']);
  });

  it('catalog import of an unreadable path exits 2; of a file that is not JSON or not a catalog exits 1', async () => {
    const missing = await ops.run('catalog', 'import', join(dir, 'absent.json'));
    const notJson = await ops.run('catalog', 'import', file('text.json', 'not json'));
    const wrongShape = await ops.run('catalog', 'import', file('object.json', { models: [] }));
    const empty = await ops.run('catalog', 'import', file('empty.json', { data: [] }));

    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n').slice(0, 2)).toEqual([
      `error: cannot read ${join(dir, 'absent.json')}: ENOENT`,
      'Usage: npm run ops -- catalog import <file> [--replace]',
    ]);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/^error: .*text\.json is not valid JSON: /);
    expect(wrongShape.code).toBe(1);
    expect(wrongShape.stderr.split('\n')[1]).toBe('  file: expected {"data": [models]} or an array of catalog entries');
    expect(empty.stderr.split('\n')[1]).toBe('  file: holds no models');
  });

  it('catalog import takes endpoints and usage figures from catalog entries as given', async () => {
    const result = await ops.run('catalog', 'import', file('entries.json', [customEntry(alpha!), customEntry(beta!)]), '--json');

    expect(JSON.parse(result.stdout)).toEqual({
      imported: 2,
      added: 2,
      updated: 0,
      endpoints: { from_file: 2, kept: 0, derived: 0 },
      removed: [],
      left_in_place: [],
    });
    expect((await ops.catalog.load()).entries).toEqual([customEntry(alpha!), customEntry(beta!)]);
  });

  it('catalog import keeps the stored endpoints and usage of models the file gives without endpoints', async () => {
    await ops.run('catalog', 'import', file('entries.json', [customEntry(alpha!)]));
    const renamed = { ...alpha!, name: 'Renamed' };

    const result = await ops.run('catalog', 'import', file('public.json', { data: [renamed, beta] }));

    expect(result.stdout.split('\n').slice(0, 2)).toEqual([
      `Imported 2 models from ${join(dir, 'public.json')}: 1 new, 1 updated.`,
      'Endpoints: 0 from the file, 1 kept from the catalog, 1 derived (demo data).',
    ]);
    const [first, second] = (await ops.catalog.load()).entries;
    expect(first).toEqual({ ...customEntry(alpha!), model: renamed });
    expect(second).toEqual(derived[1]);
  });

  it('catalog import orders models as the file does and leaves absent models in place without --replace', async () => {
    await ops.run('catalog', 'import', file('abc.json', { data: [alpha, beta, gamma] }));

    const result = await ops.run('catalog', 'import', file('ca.json', { data: [gamma, alpha] }), '--json');

    expect(JSON.parse(result.stdout)).toMatchObject({ removed: [], left_in_place: [beta!.id] });
    expect((await ids()).slice(0, 1)).toEqual([gamma!.id]);
    expect((await ids()).sort()).toEqual([alpha!.id, beta!.id, gamma!.id].sort());
  });

  it('catalog import --replace removes stored models absent from the file', async () => {
    await ops.run('catalog', 'import', file('abc.json', { data: [alpha, beta, gamma] }));

    const result = await ops.run('catalog', 'import', file('ca.json', { data: [gamma, alpha] }), '--replace');

    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[2]).toBe('Removed 1 model absent from the file.');
    expect(await ids()).toEqual([gamma!.id, alpha!.id]);
  });

  it('catalog set-usage updates the figures; an unknown model exits 1, no or bad figures exit 2', async () => {
    await ops.run('catalog', 'import', file('a.json', { data: [alpha] }));

    const both = await ops.run('catalog', 'set-usage', alpha!.id, '--popularity', '42', '--weekly-tokens', '4200');
    const one = await ops.run('catalog', 'set-usage', alpha!.id, '--popularity', '43', '--json');
    const unknown = await ops.run('catalog', 'set-usage', 'nope/model', '--popularity', '1');
    const none = await ops.run('catalog', 'set-usage', alpha!.id);
    const negative = await ops.run('catalog', 'set-usage', alpha!.id, '--weekly-tokens=-5');

    expect(both).toMatchObject({ code: 0, stdout: `Updated ${alpha!.id}: popularity 42, weekly tokens 4200.\n` });
    expect(JSON.parse(one.stdout)).toEqual({ model: alpha!.id, popularity: 43 });
    expect((await ops.catalog.load()).entries[0]).toMatchObject({ popularity: 43, weeklyTokens: 4200 });
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: Model nope/model not found in the catalog\n' });
    expect(none.code).toBe(2);
    expect(none.stderr.split('\n').slice(0, 2)).toEqual([
      'error: nothing to change: give --popularity or --weekly-tokens',
      'Usage: npm run ops -- catalog set-usage <model-id> [--popularity <N>] [--weekly-tokens <N>]',
    ]);
    expect(negative.code).toBe(2);
    expect(negative.stderr.split('\n')[0]).toBe('error: --weekly-tokens must be an integer ≥ 0 (got "-5")');
  });

  it('catalog list prints id, endpoint count and usage in default order, --limit the first N', async () => {
    expect((await ops.run('catalog', 'list')).stdout).toBe('The catalog is empty.\n');
    await ops.run('catalog', 'import', file('entries.json', [customEntry(alpha!), customEntry(beta!), customEntry(gamma!)]));
    await ops.run('catalog', 'set-usage', beta!.id, '--popularity', '12345', '--weekly-tokens', '9876543');

    const text = await ops.run('catalog', 'list', '--limit', '2');
    const json = await ops.run('catalog', 'list', '--json');

    const width = Math.max(alpha!.id.length, beta!.id.length);
    expect(text.stdout).toBe(
      [
        `${'ID'.padEnd(width)}  ENDPOINTS  POPULARITY  WEEKLY TOKENS`,
        `${alpha!.id.padEnd(width)}          1           7            700`,
        `${beta!.id.padEnd(width)}          1       12345        9876543`,
        '2 of 3 models',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(json.stdout)).toEqual({
      data: [
        { id: alpha!.id, endpoints: 1, popularity: 7, weekly_tokens: 700 },
        { id: beta!.id, endpoints: 1, popularity: 12345, weekly_tokens: 9876543 },
        { id: gamma!.id, endpoints: 1, popularity: 7, weekly_tokens: 700 },
      ],
      total_count: 3,
    });
    expect((await ops.run('catalog', 'list', '--limit', '0')).code).toBe(2);
  });
});
