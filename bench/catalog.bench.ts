/**
 * Benchmark of the catalog list (docs/reference.md#the-catalog) against its aims (AIMS below), each scenario's
 * time as a ratio to `JSON.stringify` of the same response. Run with `npm run bench` (`tsx --expose-gc`, so heap figures are taken
 * after a full collection).
 *
 * For the 421-model snapshot and a generated 10,000-model catalog it times one request the
 * way `lambdas/catalog/catalog-api.ts` serves it (parse the query, build the caller policy,
 * `CatalogIndex.list`, the next link, the body string) and, as the yardstick,
 * `JSON.stringify` of the same response held as plain objects. Each figure is the median of
 * at least 15 timed runs after a warm-up; a run repeats the call until it lasts ~20 ms.
 */
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../lambdas/accounts/types';
import { buildCallerPolicy, type CallerPolicy } from '../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../lambdas/catalog/catalog-index';
import { nextPageLink, parseCatalogQuery, SORTS } from '../lambdas/catalog/catalog-query';
import type { CatalogEntry, ProviderEndpoint } from '../lambdas/catalog/types';
import { API_BASE_PATH } from '../lambdas/routes';
import { snapshotCatalog } from '../local/seed';

const LIST_PATH = `${API_BASE_PATH}/models/user`;
const GENERATED_SIZE = 10_000;
const RUNS = 15;
const MIN_RUN_MS = 20;
const COLD_RUNS = 15;
/** Cold requests run, untimed, before the timed ones: the index is cold, the code warm as in every other row. */
const COLD_WARM_UP = 10;

/** The aims as they are stated, and the bound each scenario is held to. */
const AIMS = [
  'every scenario at most 1.5x `JSON.stringify` of the same response at 421 and at 10,000 models',
  'warm pages and full lists at most 1.0x',
  "a new caller's first page at 10,000 models at most 3x",
  'cold at most 1.5x',
];
const EVERY_SCENARIO = 1.5;
const WARM = 1.0;
const NEW_CALLER_AT_10_000 = 3;
const COLD = 1.5;

type RawParams = Record<string, string | undefined>;

/** What the handler builds per request for an organization with default settings and no guardrails. */
function defaultCallerPolicy(): CallerPolicy {
  return buildCallerPolicy({
    organization: { providerPreferences: DEFAULT_PROVIDER_PREFERENCES, privacy: DEFAULT_PRIVACY },
    guardrails: [],
    region: null,
  });
}

let callers = 0;

/**
 * One list request as `catalog-api.ts` serves it, minus authentication and I/O. The index
 * keeps each caller's ordered list, so a `newCaller` request is the first of a caller whose
 * list is not kept yet (its first page), and the others the pages that follow it.
 */
function respond(index: CatalogIndex, params: RawParams, newCaller = false): string {
  const query = parseCatalogQuery({ queryStringParameters: params });
  const policy = defaultCallerPolicy();
  const result = index.list(newCaller ? { ...policy, key: `caller-${callers++}` } : policy, query);
  const next = nextPageLink(LIST_PATH, query, params, result.total);
  return `{"data":${result.dataJson},"total_count":${result.total},"links":{"next":${JSON.stringify(next)}}}`;
}

// --- the catalogs ---

/**
 * The snapshot as the cache receives it: through the store, that is deserialized. The
 * seeding step builds endpoints with object spreads, which gives nearly every endpoint its
 * own hidden class; deserialized objects share one, as in production. The difference shows
 * in the "seed objects" row.
 */
function loadedSnapshot(): CatalogEntry[] {
  return JSON.parse(JSON.stringify(snapshotCatalog())) as CatalogEntry[];
}

/** Deterministic PRNG (mulberry32). */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `size` entries: the snapshot as is, then copies of it whose ids and slugs end in
 * `-copy-N`, with creation dates and usage figures varied. Every entry is its own object
 * graph, as a catalog loaded from the store would be.
 */
function generateCatalog(base: readonly CatalogEntry[], size: number): CatalogEntry[] {
  const random = seededRandom(0x5eed);
  const catalog: CatalogEntry[] = [];
  for (let i = 0; i < size; i++) {
    const source = base[i % base.length]!;
    const copy = Math.floor(i / base.length);
    const entry = structuredClone(source);
    if (copy > 0) {
      const model = entry.model;
      model.id = `${source.model.id}-copy-${copy}`;
      model.canonical_slug = `${source.model.canonical_slug}-copy-${copy}`;
      model.links = { details: `${API_BASE_PATH}/models/${model.canonical_slug}/endpoints` };
      model.created = source.model.created - Math.floor(random() * 730 * 86_400);
      entry.popularity = Math.floor(random() * 1_000_000);
      entry.weeklyTokens = Math.floor(random() * 50_000_000_000);
    }
    catalog.push(entry);
  }
  return catalog;
}

// --- timing ---

let sink = 0;

const gc = (globalThis as { gc?: () => void }).gc;

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median milliseconds per call of `fn`. */
function measure(fn: () => string): number {
  // Warm-up: at least three calls and 50 ms, which also estimates the cost of one call.
  let calls = 0;
  const warmStart = nowMs();
  while (calls < 3 || nowMs() - warmStart < 50) {
    sink += fn().length;
    calls++;
  }
  const perCall = (nowMs() - warmStart) / calls;
  const batch = Math.max(1, Math.ceil(MIN_RUN_MS / perCall));
  const runs: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) sink += fn().length;
    runs.push(Number(process.hrtime.bigint() - start) / 1e6 / batch);
  }
  return median(runs);
}

interface Row {
  scenario: string;
  ms: number;
  stringifyMs: number;
  bytes: number;
  /** The highest ratio to `JSON.stringify` the aims allow this scenario. */
  aim: number;
}

function scenario(name: string, aim: number, index: CatalogIndex, params: RawParams, newCaller = false): Row {
  const body = respond(index, params, newCaller);
  // The yardstick: the same response as plain objects, serialized in one call.
  const parsed = JSON.parse(body) as { data: unknown[]; total_count: number; links: { next: string | null } };
  const equivalent = { data: parsed.data, total_count: parsed.total_count, links: parsed.links };
  if (JSON.stringify(equivalent) !== body) throw new Error(`${name}: the body is not what JSON.stringify gives`);
  return {
    scenario: name,
    ms: measure(() => respond(index, params, newCaller)),
    stringifyMs: measure(() => JSON.stringify(equivalent)),
    bytes: body.length,
    aim,
  };
}

/** Warm requests: the same caller asked before, so its list and the answer are kept. */
function requests(): [string, RawParams][] {
  return [
    ['full list', {}],
    ['page (limit 50) after the first', { offset: '100', limit: '50' }],
    ...SORTS.map((sort): [string, RawParams] => [`full, sort ${sort}`, { sort }]),
  ];
}

/**
 * Median of `COLD_RUNS` first requests, each on a freshly built index (empty serialization
 * cache), after `warmUp` untimed ones; each is followed by one `JSON.stringify` of the same
 * response, timed alike, the yardstick of this row. Each starts after a full collection, so
 * neither pays for the other's garbage. Without a warm-up the first runs also
 * time the optimizing compiler, which on a loaded machine lags by several runs (it compiles
 * on a background thread); that figure is printed beside it.
 */
function coldFullList(catalog: readonly CatalogEntry[], warmUp: number, name: string): Row {
  const body = respond(new CatalogIndex(catalog), {});
  const equivalent = JSON.parse(body) as unknown;
  const runs: number[] = [];
  const stringifyRuns: number[] = [];
  for (let run = 0; run < warmUp + COLD_RUNS; run++) {
    const index = new CatalogIndex(catalog);
    gc?.();
    let start = process.hrtime.bigint();
    sink += respond(index, {}).length;
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    gc?.();
    start = process.hrtime.bigint();
    sink += JSON.stringify(equivalent).length;
    if (run < warmUp) continue;
    runs.push(ms);
    stringifyRuns.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return { scenario: name, ms: median(runs), stringifyMs: median(stringifyRuns), bytes: body.length, aim: COLD };
}

// --- memory ---

function heapUsedMb(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/**
 * Serializes every view any caller could get: each endpoint as the top one, with each
 * longest context reachable together with it. Round r lets every model reach its r-th
 * variant, so a handful of full listings covers them all.
 */
function warmEveryVariant(index: CatalogIndex, catalog: readonly CatalogEntry[]): number {
  const variantsPerModel = catalog.map((entry) => variants(entry.endpoints));
  const rounds = Math.max(...variantsPerModel.map((v) => v.length));
  const all = parseCatalogQuery({ queryStringParameters: { output_modalities: 'all' } });
  for (let round = 0; round < rounds; round++) {
    const allowed = new Set<ProviderEndpoint>();
    variantsPerModel.forEach((list) => list[round % list.length]?.forEach((e) => allowed.add(e)));
    sink += index.list({ key: `variant-round-${round}`, allowsModel: () => true, allowsEndpoint: (e) => allowed.has(e) }, all).dataJson.length;
  }
  return variantsPerModel.reduce((sum, v) => sum + v.length, 0);
}

/** Endpoint sets giving each distinct (top endpoint, longest reachable context) pair. */
function variants(endpoints: readonly ProviderEndpoint[]): ProviderEndpoint[][] {
  const sets: ProviderEndpoint[][] = [];
  endpoints.forEach((top, i) => {
    const contexts = new Map<number, ProviderEndpoint[]>([[top.context_length, [top]]]);
    for (const later of endpoints.slice(i + 1)) {
      if (later.context_length > top.context_length && !contexts.has(later.context_length)) {
        contexts.set(later.context_length, [top, later]);
      }
    }
    sets.push(...contexts.values());
  });
  return sets;
}

// --- the run ---

function runCatalog(label: string, load: () => CatalogEntry[], extraRows: () => Row[] = () => []): Row[] {
  const heapBefore = heapUsedMb();
  const catalog = load();
  const heapCatalog = heapUsedMb();
  const buildStart = nowMs();
  const index = new CatalogIndex(catalog);
  const buildMs = nowMs() - buildStart;
  const heapIndex = heapUsedMb();
  for (const [, params] of requests()) sink += respond(index, { ...params, output_modalities: 'all' }).length;
  const heapDefaultViews = heapUsedMb();
  const defaultBytes = index.serializedBytes();
  const variantCount = warmEveryVariant(index, catalog);
  const heapAllViews = heapUsedMb();

  const mb = (value: number) => `${value.toFixed(1)} MB`;
  console.log(`\n## ${label}: ${index.size} models, ${catalog.reduce((n, e) => n + e.endpoints.length, 0)} endpoints`);
  console.log(`heap used${gc ? '' : ' (no --expose-gc: figures include garbage)'}:`);
  console.log(`  before loading            ${mb(heapBefore)}`);
  console.log(`  entries loaded            ${mb(heapCatalog)}  (+${mb(heapCatalog - heapBefore)})`);
  console.log(`  index built               ${mb(heapIndex)}  (+${mb(heapIndex - heapCatalog)}; built in ${buildMs.toFixed(1)} ms)`);
  console.log(`  default views serialized  ${mb(heapDefaultViews)}  (+${mb(heapDefaultViews - heapIndex)}; serializedBytes ${mb(defaultBytes / 1024 / 1024)})`);
  console.log(
    `  all ${variantCount} variants`.padEnd(28) + `${mb(heapAllViews)}  (+${mb(heapAllViews - heapIndex)} over the index; serializedBytes ${mb(index.serializedBytes() / 1024 / 1024)})`,
  );

  const rows = requests().map(([name, params]) => scenario(name, WARM, index, params));
  const newCallerAim = index.size >= 10_000 ? NEW_CALLER_AT_10_000 : EVERY_SCENARIO;
  rows.splice(2, 0, scenario('first page (limit 50) of a new caller', newCallerAim, index, { limit: '50' }, true));
  rows.push(...extraRows());
  const unwarmed = coldFullList(catalog, 0, `  the same, no warm-up (first ${COLD_RUNS} cold requests)`);
  rows.push(coldFullList(catalog, COLD_WARM_UP, 'cold full list (1st request)'), unwarmed);
  printTable(rows);
  return rows.map((row) => ({ ...row, scenario: `${label}: ${row.scenario}` }));
}

function printTable(rows: Row[]): void {
  const header = ['scenario', 'median ms', 'JSON.stringify ms', 'ratio', 'aim', '', 'body KB'];
  const lines = rows.map((r) => [
    r.scenario,
    r.ms.toFixed(3),
    r.stringifyMs.toFixed(3),
    `${(r.ms / r.stringifyMs).toFixed(2)}x`,
    `<= ${r.aim.toFixed(1)}x`,
    meets(r) ? 'met' : 'MISSED',
    (r.bytes / 1024).toFixed(0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  console.log(format(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const line of lines) console.log(format(line));
}

const meets = (row: Row) => row.ms <= row.aim * row.stringifyMs;

function main(): void {
  const started = nowMs();
  console.log(`catalog list benchmark: node ${process.version}, median of ${RUNS} runs (each >= ${MIN_RUN_MS} ms), caller with default settings`);
  console.log(`aims: ${AIMS.join('; ')}`);
  const snapshot = snapshotCatalog();
  const rows = [
    ...runCatalog('snapshot', loadedSnapshot, () => [
      scenario('page (limit 50), seed objects', WARM, new CatalogIndex(snapshot), { offset: '100', limit: '50' }),
    ]),
    ...runCatalog('generated', () => generateCatalog(snapshot, GENERATED_SIZE)),
  ];
  const missed = rows.filter((r) => !meets(r)).map((r) => r.scenario);
  console.log(`\naims: ${missed.length === 0 ? 'met by every scenario' : `missed by ${missed.join(', ')}`}`);
  console.log(`total ${((nowMs() - started) / 1000).toFixed(1)} s (sink ${sink % 10})`);
}

main();
