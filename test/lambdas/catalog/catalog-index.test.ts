import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../../../lambdas/accounts/types';
import { buildCallerPolicy, OPEN_POLICY, type CallerPolicy } from '../../../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import { SORTS, type CatalogQuery, type CatalogSort } from '../../../lambdas/catalog/catalog-query';
import { averageTokenPrice } from '../../../lambdas/catalog/pricing';
import type {
  CatalogEntry,
  ModelBenchmarks,
  OutputModality,
  PercentileStats,
  ProviderEndpoint,
  PublicModel,
  PublicPricing,
} from '../../../lambdas/catalog/types';
import { snapshotCatalog } from '../../../local/seed';
import { catalogEntry, providerEndpoint as endpoint, publicModel } from '../../support/catalog-fixtures';

// --- builders ---

function stats(p50: number | null): PercentileStats {
  return { p50, p75: null, p90: null, p99: null };
}

interface EntryFields {
  slug?: string;
  created?: number;
  popularity?: number;
  weeklyTokens?: number;
  output?: OutputModality[];
  benchmarks?: ModelBenchmarks;
  endpoints?: ProviderEndpoint[];
}

function entry(id: string, fields: EntryFields = {}): CatalogEntry {
  const output = fields.output ?? ['text'];
  const model = publicModel(id, {
    canonical_slug: fields.slug ?? `${id}-20260101`,
    name: `Model ${id}`,
    created: fields.created ?? 1_760_000_000,
    description: `About ${id}`,
    context_length: 32000,
    architecture: { modality: `text->${output.join('+')}`, input_modalities: ['text'], output_modalities: output },
    // The public entry's own pricing and top provider: a caller's view replaces both.
    pricing: { prompt: '0.5', completion: '0.5' },
    top_provider: { context_length: 1, max_completion_tokens: 1, is_moderated: true },
    supported_parameters: ['max_tokens'],
    ...(fields.benchmarks ? { benchmarks: fields.benchmarks } : {}),
  });
  return catalogEntry(id, { ...fields, model });
}

const price = (prompt: string, completion: string, discount?: number): PublicPricing =>
  discount === undefined ? { prompt, completion } : { prompt, completion, discount };

function query(fields: Partial<CatalogQuery> = {}): CatalogQuery {
  return { outputModalities: new Set<OutputModality>(['text']), sort: null, page: null, ...fields };
}

function policy(fields: {
  ignoredProviders?: string[];
  allowedModels?: string[];
  region?: string | null;
}): CallerPolicy {
  return buildCallerPolicy({
    organization: {
      providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES, ignoredProviders: fields.ignoredProviders ?? [] },
      privacy: DEFAULT_PRIVACY,
    },
    guardrails: fields.allowedModels
      ? [{ allowedModels: fields.allowedModels, ignoredModels: null, allowedProviders: null, ignoredProviders: null, enforceZdr: false }]
      : [],
    region: fields.region ?? null,
  });
}

function listModels(index: CatalogIndex, who: CallerPolicy, q: CatalogQuery): PublicModel[] {
  return JSON.parse(index.list(who, q).dataJson) as PublicModel[];
}

function listIds(index: CatalogIndex, who: CallerPolicy, q: CatalogQuery): string[] {
  return listModels(index, who, q).map((m) => m.id);
}

// --- tests ---

describe('CatalogIndex.list (docs/reference.md#the-catalog)', () => {
  describe('output modality filter', () => {
    const index = new CatalogIndex([
      entry('a/text', { output: ['text'] }),
      entry('a/image', { output: ['image'] }),
      entry('a/both', { output: ['image', 'text'] }),
      entry('a/embed', { output: ['embeddings'] }),
    ]);

    it('lists text models by default, including a model that also outputs images', () => {
      expect(listIds(index, OPEN_POLICY, query())).toEqual(['a/text', 'a/both']);
    });

    it('lists image models for output_modalities=image', () => {
      expect(listIds(index, OPEN_POLICY, query({ outputModalities: new Set(['image']) }))).toEqual(['a/image', 'a/both']);
    });

    it('lists models with any of several modalities, in default order', () => {
      const q = query({ outputModalities: new Set(['embeddings', 'image']) });

      expect(listIds(index, OPEN_POLICY, q)).toEqual(['a/image', 'a/both', 'a/embed']);
    });

    it('lists every model for all', () => {
      expect(listIds(index, OPEN_POLICY, query({ outputModalities: null }))).toEqual(['a/text', 'a/image', 'a/both', 'a/embed']);
    });

    it('lists a model without output modalities only for all', () => {
      const withNone = new CatalogIndex([entry('a/none', { output: [] }), entry('a/text')]);

      expect(listIds(withNone, OPEN_POLICY, query())).toEqual(['a/text']);
      expect(listIds(withNone, OPEN_POLICY, query({ outputModalities: null }))).toEqual(['a/none', 'a/text']);
    });

    it('lists nothing for a modality no model has', () => {
      expect(index.list(OPEN_POLICY, query({ outputModalities: new Set(['rerank']) }))).toEqual({ total: 0, dataJson: '[]' });
    });
  });

  describe('reachability', () => {
    it('drops a model whose every endpoint the caller excludes, and counts only what remains', () => {
      const index = new CatalogIndex([
        entry('a/one', { endpoints: [endpoint('azure'), endpoint('groq')] }),
        entry('a/two', { endpoints: [endpoint('azure')] }),
        entry('a/three', { endpoints: [endpoint('groq')] }),
      ]);

      const result = index.list(policy({ ignoredProviders: ['azure'] }), query());

      expect(result.total).toBe(2);
      expect((JSON.parse(result.dataJson) as PublicModel[]).map((m) => m.id)).toEqual(['a/one', 'a/three']);
    });

    it('drops a model that has no endpoint at all', () => {
      const index = new CatalogIndex([entry('a/none', { endpoints: [] }), entry('a/some')]);

      expect(listIds(index, OPEN_POLICY, query())).toEqual(['a/some']);
    });

    it('drops a model a guardrail does not allow', () => {
      const index = new CatalogIndex([entry('a/one'), entry('a/two')]);

      expect(listIds(index, policy({ allowedModels: ['a/two'] }), query())).toEqual(['a/two']);
    });

    it('keeps only models reachable in the region of a regional hostname (rule 4)', () => {
      const index = new CatalogIndex([
        entry('a/us', { endpoints: [endpoint('groq', { regions: ['us'] })] }),
        entry('a/eu', { endpoints: [endpoint('mistral', { regions: ['eu'] })] }),
        entry('a/both', { endpoints: [endpoint('azure', { regions: ['us', 'eu'] })] }),
      ]);

      expect(listIds(index, policy({ region: 'eu' }), query())).toEqual(['a/eu', 'a/both']);
    });
  });

  describe('the caller view of a model', () => {
    const azure = endpoint('azure', {
      context_length: 100_000,
      max_completion_tokens: 8000,
      is_moderated: true,
      pricing: { prompt: '0.000003', completion: '0.000015', input_cache_read: '0.0000003', discount: 0.1 },
      regions: ['us'],
    });
    const groq = endpoint('groq', {
      context_length: 200_000,
      max_completion_tokens: null,
      is_moderated: false,
      pricing: { prompt: '0.000002', completion: '0.00001' },
      regions: ['us'],
    });
    const mistral = endpoint('mistral', {
      context_length: 50_000,
      max_completion_tokens: 2000,
      is_moderated: false,
      pricing: { prompt: '0.000004', completion: '0.00002', overrides: [{ min_prompt_tokens: 100000, prompt: '0.000008' }] },
      regions: ['eu'],
    });
    const catalog = [entry('acme/large', { created: 1_750_000_000, endpoints: [azure, groq, mistral] })];

    it('takes pricing and top_provider from the first reachable endpoint, context_length from the longest', () => {
      const index = new CatalogIndex(catalog);

      const [view] = listModels(index, OPEN_POLICY, query());

      expect(view).toEqual({
        id: 'acme/large',
        canonical_slug: 'acme/large-20260101',
        name: 'Model acme/large',
        created: 1_750_000_000,
        description: 'About acme/large',
        context_length: 200_000,
        architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'] },
        pricing: { prompt: '0.000003', completion: '0.000015', input_cache_read: '0.0000003', discount: 0.1 },
        top_provider: { context_length: 100_000, max_completion_tokens: 8000, is_moderated: true },
        per_request_limits: null,
        supported_parameters: ['max_tokens'],
        default_parameters: null,
        supported_voices: null,
        links: { details: '/api/v1/models/acme/large/endpoints' },
      });
    });

    it("answers the members in the public catalog's order, whatever order the stored model has, and none beyond the public shape", () => {
      const [snapshotModel] = snapshotCatalog().map((e) => e.model).filter((m) => m.benchmarks && m.reasoning);
      const publicOrder = Object.keys(snapshotModel!);
      // The stored item's members reversed, and one the public shape does not have.
      const stored = { ...Object.fromEntries(Object.entries(snapshotModel!).reverse()), internal_note: 'not public' } as unknown as PublicModel;
      const index = new CatalogIndex([catalogEntry(stored.id, { model: stored })]);

      const [view] = listModels(index, OPEN_POLICY, query({ outputModalities: null }));

      expect(Object.keys(view)).toEqual(publicOrder);
    });

    it('moves to the next reachable endpoint when the caller excludes the first', () => {
      const index = new CatalogIndex(catalog);

      const [view] = listModels(index, policy({ ignoredProviders: ['azure'] }), query());

      expect(view.pricing).toEqual({ prompt: '0.000002', completion: '0.00001' });
      expect(view.top_provider).toEqual({ context_length: 200_000, max_completion_tokens: null, is_moderated: false });
      expect(view.context_length).toBe(200_000);
    });

    it('uses the longest context among reachable endpoints only', () => {
      const index = new CatalogIndex(catalog);

      const [view] = listModels(index, policy({ ignoredProviders: ['groq'] }), query());

      expect(view.pricing).toEqual(azure.pricing);
      expect(view.context_length).toBe(100_000);
    });

    it('shows an in-region caller the in-region endpoint, pricing overrides included', () => {
      const index = new CatalogIndex(catalog);

      const [view] = listModels(index, policy({ region: 'eu' }), query());

      expect(view.pricing).toEqual({ prompt: '0.000004', completion: '0.00002', overrides: [{ min_prompt_tokens: 100000, prompt: '0.000008' }] });
      expect(view.top_provider).toEqual({ context_length: 50_000, max_completion_tokens: 2000, is_moderated: false });
      expect(view.context_length).toBe(50_000);
    });

    it('does not leak one caller view to the next through the serialization cache', () => {
      const index = new CatalogIndex(catalog);

      const first = listModels(index, OPEN_POLICY, query())[0];
      const other = listModels(index, policy({ ignoredProviders: ['azure'] }), query())[0];
      const again = listModels(index, OPEN_POLICY, query())[0];

      expect(first.top_provider.context_length).toBe(100_000);
      expect(other.top_provider.context_length).toBe(200_000);
      expect(again).toEqual(first);
    });

    it('returns data as a JSON array string that parses to the views', () => {
      const index = new CatalogIndex([entry('a/one'), entry('a/two')]);

      const result = index.list(OPEN_POLICY, query());

      expect(result.total).toBe(2);
      expect(result.dataJson.startsWith('[{"id":"a/one",')).toBe(true);
      expect(JSON.parse(result.dataJson)).toHaveLength(2);
    });

    it('counts the bytes of the serialized views it holds', () => {
      const index = new CatalogIndex([entry('a/one')]);
      expect(index.serializedBytes()).toBe(0);

      const { dataJson } = index.list(OPEN_POLICY, query());

      // One view, held once: the array brackets are not stored.
      expect(index.serializedBytes()).toBe((dataJson.length - 2) * 2);
      expect(index.size).toBe(1);
    });
  });

  describe('sorts (rule 2, missing scores last by rule 3, ties in default order)', () => {
    const aa = (field: 'intelligence_index' | 'coding_index' | 'agentic_index', value: number | null): ModelBenchmarks => {
      // The other two indices run the opposite way, so reading the wrong field shows.
      const other = value === null ? 1 : 100 - value;
      const scores = { intelligence_index: other, coding_index: other, agentic_index: other, [field]: value };
      return { artificial_analysis: scores, design_arena: [] };
    };
    const arena = (...elos: number[]): ModelBenchmarks => ({
      design_arena: elos.map((elo, i) => ({ arena: 'web', category: `c${i}`, elo, win_rate: 50, rank: i + 1 })),
    });
    const indexSort = (field: 'intelligence_index' | 'coding_index' | 'agentic_index') => [
      entry('m/a', { benchmarks: aa(field, 40) }),
      entry('m/b', { benchmarks: aa(field, 70) }),
      entry('m/c'),
      entry('m/d', { benchmarks: aa(field, null) }),
      entry('m/e', { benchmarks: aa(field, 70) }),
      entry('m/f', { benchmarks: aa(field, 55) }),
    ];
    const pricingCatalog = [
      entry('m/a', { endpoints: [endpoint('h', { pricing: price('0.000005', '0.000005') })] }),
      entry('m/b', { endpoints: [endpoint('h', { pricing: price('0.000004', '0.000004') })] }),
      // Cheapest prompt, dearest completion: only the average puts it between b and a.
      entry('m/c', { endpoints: [endpoint('h', { pricing: price('0.0000005', '0.000008') })] }),
      // The router's variable price has no average: last either way.
      entry('m/r', { endpoints: [endpoint('router', { pricing: price('-1', '-1') })] }),
      entry('m/e', { endpoints: [endpoint('h', { pricing: price('0.000004', '0.000004') })] }),
      entry('m/f', { endpoints: [endpoint('h', { pricing: price('0', '0') })] }),
      // 0.00001 average, halved by the discount: ties with a.
      entry('m/g', { endpoints: [endpoint('h', { pricing: price('0.00001', '0.00001', 0.5) })] }),
    ];
    const throughputCatalog = [
      entry('m/a', { endpoints: [endpoint('h', { throughput_last_30m: stats(50) })] }),
      entry('m/b', { endpoints: [endpoint('h', { throughput_last_30m: stats(120) })] }),
      entry('m/c', { endpoints: [endpoint('h', { throughput_last_30m: null })] }),
      entry('m/d', { endpoints: [endpoint('h', { throughput_last_30m: stats(null) })] }),
      entry('m/e', { endpoints: [endpoint('h', { throughput_last_30m: stats(120) })] }),
      // The top endpoint counts, not the fastest.
      entry('m/f', { endpoints: [endpoint('h', { throughput_last_30m: stats(80) }), endpoint('i', { throughput_last_30m: stats(500) })] }),
    ];
    const latencyCatalog = [
      entry('m/a', { endpoints: [endpoint('h', { latency_last_30m: stats(0.9) })] }),
      entry('m/b', { endpoints: [endpoint('h', { latency_last_30m: stats(0.3) })] }),
      entry('m/c', { endpoints: [endpoint('h', { latency_last_30m: null })] }),
      entry('m/d', { endpoints: [endpoint('h', { latency_last_30m: stats(0.5) }), endpoint('i', { latency_last_30m: stats(0.1) })] }),
      entry('m/e', { endpoints: [endpoint('h', { latency_last_30m: stats(0.3) })] }),
      entry('m/f', { endpoints: [endpoint('h', { latency_last_30m: stats(null) })] }),
    ];

    const cases: [CatalogSort, CatalogEntry[], string[]][] = [
      [
        'most-popular',
        [entry('m/a', { popularity: 10 }), entry('m/b', { popularity: 30 }), entry('m/c', { popularity: 20 }), entry('m/d', { popularity: 30 })],
        ['m/b', 'm/d', 'm/c', 'm/a'],
      ],
      [
        'newest',
        [entry('m/a', { created: 100 }), entry('m/b', { created: 300 }), entry('m/c', { created: 200 }), entry('m/d', { created: 300 })],
        ['m/b', 'm/d', 'm/c', 'm/a'],
      ],
      [
        'top-weekly',
        // Popularity runs the other way: the sort must read weekly tokens.
        [
          entry('m/a', { weeklyTokens: 10, popularity: 4 }),
          entry('m/b', { weeklyTokens: 30, popularity: 1 }),
          entry('m/c', { weeklyTokens: 20, popularity: 2 }),
          entry('m/d', { weeklyTokens: 30, popularity: 3 }),
        ],
        ['m/b', 'm/d', 'm/c', 'm/a'],
      ],
      ['pricing-low-to-high', pricingCatalog, ['m/f', 'm/b', 'm/e', 'm/c', 'm/a', 'm/g', 'm/r']],
      ['pricing-high-to-low', pricingCatalog, ['m/a', 'm/g', 'm/c', 'm/b', 'm/e', 'm/f', 'm/r']],
      [
        'context-high-to-low',
        [
          entry('m/a', { endpoints: [endpoint('h', { context_length: 1000 })] }),
          // The longest reachable endpoint counts, not the top one.
          entry('m/b', { endpoints: [endpoint('h', { context_length: 4000 }), endpoint('i', { context_length: 8000 })] }),
          entry('m/c', { endpoints: [endpoint('h', { context_length: 2000 })] }),
          entry('m/d', { endpoints: [endpoint('h', { context_length: 8000 })] }),
        ],
        ['m/b', 'm/d', 'm/c', 'm/a'],
      ],
      ['throughput-high-to-low', throughputCatalog, ['m/b', 'm/e', 'm/f', 'm/a', 'm/c', 'm/d']],
      ['latency-low-to-high', latencyCatalog, ['m/b', 'm/e', 'm/d', 'm/a', 'm/c', 'm/f']],
      ['intelligence-high-to-low', indexSort('intelligence_index'), ['m/b', 'm/e', 'm/f', 'm/a', 'm/c', 'm/d']],
      ['coding-high-to-low', indexSort('coding_index'), ['m/b', 'm/e', 'm/f', 'm/a', 'm/c', 'm/d']],
      ['agentic-high-to-low', indexSort('agentic_index'), ['m/b', 'm/e', 'm/f', 'm/a', 'm/c', 'm/d']],
      [
        'design-arena-elo-high-to-low',
        [
          // The best rating across arenas counts.
          entry('m/a', { benchmarks: arena(1200, 1350) }),
          entry('m/b', { benchmarks: arena(1400) }),
          entry('m/c', { benchmarks: arena() }),
          entry('m/d'),
          entry('m/e', { benchmarks: arena(1100, 1400) }),
          entry('m/f', { benchmarks: arena(1300) }),
        ],
        ['m/b', 'm/e', 'm/a', 'm/f', 'm/c', 'm/d'],
      ],
    ];

    it('covers every sort', () => {
      expect(cases.map(([sort]) => sort)).toEqual([...SORTS]);
    });

    it.each(cases)('%s', (sort, catalog, expected) => {
      const index = new CatalogIndex(catalog);

      expect(listIds(index, OPEN_POLICY, query({ sort }))).toEqual(expected);
    });

    it('keeps the default order without a sort', () => {
      const index = new CatalogIndex(pricingCatalog);

      expect(listIds(index, OPEN_POLICY, query())).toEqual(['m/a', 'm/b', 'm/c', 'm/r', 'm/e', 'm/f', 'm/g']);
    });

    it('prices a model by the endpoint the caller routes to first', () => {
      const index = new CatalogIndex([
        entry('m/mid', { endpoints: [endpoint('h', { pricing: price('0.00001', '0.00001') })] }),
        entry('m/split', {
          endpoints: [endpoint('azure', { pricing: price('0.0001', '0.0001') }), endpoint('groq', { pricing: price('0.000001', '0.000001') })],
        }),
      ]);
      const q = query({ sort: 'pricing-low-to-high' });

      expect(listIds(index, OPEN_POLICY, q)).toEqual(['m/mid', 'm/split']);
      expect(listIds(index, policy({ ignoredProviders: ['azure'] }), q)).toEqual(['m/split', 'm/mid']);
    });

    it('reads context length from the endpoints the caller can reach', () => {
      const index = new CatalogIndex([
        entry('m/a', { endpoints: [endpoint('h', { context_length: 6000 })] }),
        entry('m/b', { endpoints: [endpoint('h', { context_length: 4000 }), endpoint('i', { context_length: 8000 })] }),
      ]);
      const q = query({ sort: 'context-high-to-low' });

      expect(listIds(index, OPEN_POLICY, q)).toEqual(['m/b', 'm/a']);
      expect(listIds(index, policy({ ignoredProviders: ['i'] }), q)).toEqual(['m/a', 'm/b']);
    });

    it('sorts before paging and counts every match', () => {
      const index = new CatalogIndex(pricingCatalog);

      const result = index.list(OPEN_POLICY, query({ sort: 'pricing-low-to-high', page: { offset: 2, limit: 3 } }));

      expect(result.total).toBe(7);
      expect((JSON.parse(result.dataJson) as PublicModel[]).map((m) => m.id)).toEqual(['m/e', 'm/c', 'm/a']);
    });
  });

  describe('paging', () => {
    const index = new CatalogIndex(['a', 'b', 'c', 'd', 'e'].map((id) => entry(`p/${id}`)));

    it('slices offset..offset+limit and reports the total of every match', () => {
      const result = index.list(OPEN_POLICY, query({ page: { offset: 1, limit: 2 } }));

      expect(result.total).toBe(5);
      expect((JSON.parse(result.dataJson) as PublicModel[]).map((m) => m.id)).toEqual(['p/b', 'p/c']);
    });

    it('returns the rest on a last page shorter than the limit', () => {
      expect(listIds(index, OPEN_POLICY, query({ page: { offset: 3, limit: 500 } }))).toEqual(['p/d', 'p/e']);
    });

    it('returns an empty page past the end, still with the total', () => {
      expect(index.list(OPEN_POLICY, query({ page: { offset: 5, limit: 10 } }))).toEqual({ total: 5, dataJson: '[]' });
    });

    it('returns everything without a page', () => {
      expect(listIds(index, OPEN_POLICY, query())).toEqual(['p/a', 'p/b', 'p/c', 'p/d', 'p/e']);
    });
  });
});

describe('CatalogIndex.endpointsFor', () => {
  const base = entry('x/y', { slug: 'x/y-20260101', endpoints: [endpoint('azure'), endpoint('groq')] });
  const free = entry('x/y:free', { slug: 'x/y-20260101', endpoints: [endpoint('chutes')] });
  const other = entry('z/w', { slug: 'z/w-20260101', endpoints: [endpoint('azure')] });
  const index = new CatalogIndex([base, free, other]);

  it('finds a model by id with its endpoints', () => {
    expect(index.endpointsFor('z/w', OPEN_POLICY)).toEqual({ model: other.model, endpoints: other.endpoints });
  });

  it('finds a model by canonical slug', () => {
    expect(index.endpointsFor('z/w-20260101', OPEN_POLICY)?.model.id).toBe('z/w');
  });

  it('resolves an id before a shared canonical slug: the variant by its id, the base by the slug', () => {
    expect(index.endpointsFor('x/y:free', OPEN_POLICY)?.model.id).toBe('x/y:free');
    expect(index.endpointsFor('x/y', OPEN_POLICY)?.model.id).toBe('x/y');
    expect(index.endpointsFor('x/y-20260101', OPEN_POLICY)?.model.id).toBe('x/y');
  });

  it('resolves a shared canonical slug to the first model holding it in default order', () => {
    const variantFirst = new CatalogIndex([free, base]);

    expect(variantFirst.endpointsFor('x/y-20260101', OPEN_POLICY)?.model.id).toBe('x/y:free');
    expect(variantFirst.endpointsFor('x/y', OPEN_POLICY)?.model.id).toBe('x/y');
  });

  it('resolves a shared canonical slug to the first model holding it that the caller can use', () => {
    const onlyFree = policy({ allowedModels: ['x/y:free'] });
    const noAzureOrGroq = policy({ ignoredProviders: ['azure', 'groq'] });

    // What the listed variant's links.details (its canonical slug) points at.
    expect(index.endpointsFor('x/y-20260101', onlyFree)?.model.id).toBe('x/y:free');
    expect(index.endpointsFor('x/y-20260101', noAzureOrGroq)?.model.id).toBe('x/y:free');
  });

  it('does not fall back from an id to another model', () => {
    expect(index.endpointsFor('x/y', policy({ allowedModels: ['x/y:free'] }))).toBeUndefined();
  });

  it('returns only the endpoints the caller may reach, in routing order', () => {
    const found = index.endpointsFor('x/y', policy({ ignoredProviders: ['azure'] }));

    expect(found?.endpoints.map((e) => e.tag)).toEqual(['groq']);
  });

  it('is undefined for an unknown model', () => {
    expect(index.endpointsFor('nobody/nothing', OPEN_POLICY)).toBeUndefined();
  });

  it('is undefined for a model the caller may not use', () => {
    expect(index.endpointsFor('z/w', policy({ allowedModels: ['x/y'] }))).toBeUndefined();
  });

  it('is undefined when the caller can reach none of the endpoints', () => {
    expect(index.endpointsFor('z/w', policy({ ignoredProviders: ['azure'] }))).toBeUndefined();
  });
});

describe('CatalogIndex over the snapshot (properties)', () => {
  const catalog = snapshotCatalog();
  const position = new Map(catalog.map((e, i) => [e.model.id, i]));
  const byId = new Map(catalog.map((e) => [e.model.id, e]));
  const index = new CatalogIndex(catalog);
  const callers: [string, CallerPolicy][] = [
    ['open', OPEN_POLICY],
    ['eu, no azure', policy({ region: 'eu', ignoredProviders: ['azure'] })],
  ];

  /** The sort key of one listed model, computed from its view and its stored entry. */
  function keyOf(sort: CatalogSort, view: PublicModel, who: CallerPolicy): number | null {
    const stored = byId.get(view.id)!;
    const top = stored.endpoints.find((e) => who.allowsEndpoint(e))!;
    const aa = view.benchmarks?.artificial_analysis;
    const elos = view.benchmarks?.design_arena.map((a) => a.elo) ?? [];
    switch (sort) {
      case 'most-popular':
        return stored.popularity;
      case 'newest':
        return view.created;
      case 'top-weekly':
        return stored.weeklyTokens;
      case 'pricing-low-to-high':
      case 'pricing-high-to-low':
        return averageTokenPrice(view.pricing);
      case 'context-high-to-low':
        return view.context_length;
      case 'throughput-high-to-low':
        return top.throughput_last_30m?.p50 ?? null;
      case 'latency-low-to-high':
        return top.latency_last_30m?.p50 ?? null;
      case 'intelligence-high-to-low':
        return aa?.intelligence_index ?? null;
      case 'coding-high-to-low':
        return aa?.coding_index ?? null;
      case 'agentic-high-to-low':
        return aa?.agentic_index ?? null;
      case 'design-arena-elo-high-to-low':
        return elos.length > 0 ? Math.max(...elos) : null;
    }
  }

  const ascending = new Set<CatalogSort>(['pricing-low-to-high', 'latency-low-to-high']);

  describe.each(callers)('caller: %s', (_name, who) => {
    it.each(SORTS.map((sort) => [sort]))('%s orders keys monotonically, nulls last, ties in default order', (sort) => {
      const views = listModels(index, who, query({ outputModalities: null, sort }));
      const keys = views.map((v) => keyOf(sort, v, who));
      const sign = ascending.has(sort) ? 1 : -1;

      for (let i = 1; i < views.length; i++) {
        const [a, b] = [keys[i - 1], keys[i]];
        const context = `${sort} at ${i}: ${views[i - 1].id} (${a}) then ${views[i].id} (${b})`;
        if (a === null) {
          expect({ context, next: b }).toEqual({ context, next: null });
        } else if (b !== null) {
          expect({ context, ordered: (b - a) * sign >= 0 }).toEqual({ context, ordered: true });
        }
        if (a === b) {
          expect({ context, tie: position.get(views[i].id)! > position.get(views[i - 1].id)! }).toEqual({ context, tie: true });
        }
      }
      expect(new Set(views.map((v) => v.id)).size).toBe(views.length);
    });

    it.each([null, ...SORTS].map((sort) => [sort]))('sort %s: the full list is the concatenation of pages of 37', (sort) => {
      const full = index.list(who, query({ outputModalities: null, sort }));
      const pages: string[] = [];
      for (let offset = 0; offset < full.total; offset += 37) {
        const page = index.list(who, query({ outputModalities: null, sort, page: { offset, limit: 37 } }));
        expect(page.total).toBe(full.total);
        pages.push(...listIds(index, who, query({ outputModalities: null, sort, page: { offset, limit: 37 } })));
      }

      expect(pages).toEqual((JSON.parse(full.dataJson) as PublicModel[]).map((m) => m.id));
    });
  });

  it('lists all 421 snapshot models to an open caller, each with a reachable endpoint', () => {
    const result = index.list(OPEN_POLICY, query({ outputModalities: null }));

    expect(result.total).toBe(421);
  });

  it('shows an in-region caller fewer models, and only ones with an endpoint in that region', () => {
    const eu = policy({ region: 'eu' });

    const views = listModels(index, eu, query({ outputModalities: null }));

    expect(views.length).toBeGreaterThan(0);
    expect(views.length).toBeLessThan(421);
    for (const view of views) expect(byId.get(view.id)!.endpoints.some((e) => e.regions.includes('eu'))).toBe(true);
  });
});

describe('policies that decide by endpoint traits', () => {
  const catalog = snapshotCatalog();
  const callers: [string, CallerPolicy][] = [
    ['default', policy({})],
    ['eu, no azure', policy({ region: 'eu', ignoredProviders: ['azure'] })],
    ['two models', policy({ allowedModels: [catalog[3]!.model.id, catalog[40]!.model.canonical_slug] })],
  ];

  it.each(callers)('list the same bytes as the same policy asked of every model and endpoint (%s)', (_name, who) => {
    // Without the flags the index asks allowsModel and allowsEndpoint of each model and endpoint.
    const asked: CallerPolicy = { key: who.key, allowsModel: (m) => who.allowsModel(m), allowsEndpoint: (e) => who.allowsEndpoint(e) };
    for (const sort of [null, ...SORTS]) {
      for (const page of [null, { offset: 7, limit: 30 }]) {
        const q = query({ outputModalities: null, sort, page });
        const expected = new CatalogIndex(catalog).list(asked, q);
        expect(new CatalogIndex(catalog).list(who, q)).toEqual(expected);
      }
    }
  });

  it('are flagged by buildCallerPolicy, every model allowed only without a guardrail naming models', () => {
    expect(policy({})).toMatchObject({ decidesByTraits: true, allowsEveryModel: true });
    expect(policy({ ignoredProviders: ['azure'] })).toMatchObject({ decidesByTraits: true, allowsEveryModel: true });
    expect(policy({ allowedModels: ['x/y'] }).allowsEveryModel).toBe(false);
  });
});

describe('links.details of models sharing a canonical slug', () => {
  it('keeps the slug link of the first model holding it and gives a variant a link by its own id', () => {
    const index = new CatalogIndex([
      entry('x/y', { slug: 'x/y-20260101' }),
      entry('x/y:free', { slug: 'x/y-20260101' }),
      entry('z/w', { slug: 'z/w' }),
    ]);
    const links = Object.fromEntries(listModels(index, OPEN_POLICY, query()).map((m) => [m.id, m.links.details]));
    expect(links).toEqual({
      'x/y': '/api/v1/models/x/y/endpoints',
      'x/y:free': '/api/v1/models/x/y:free/endpoints',
      'z/w': '/api/v1/models/z/w/endpoints',
    });
    // Each link's path resolves to the model that carries it.
    for (const [id, link] of Object.entries(links)) {
      const slug = link.replace('/api/v1/models/', '').replace('/endpoints', '');
      expect(index.endpointsFor(slug, OPEN_POLICY)?.model.id).toBe(id);
    }
  });
});

describe('ordered lists kept between requests', () => {
  const catalog = Array.from({ length: 30 }, (_, i) =>
    entry(`m/${i}`, { popularity: i, endpoints: [endpoint(i % 2 ? 'odd' : 'even')] }),
  );

  it('pages a kept list consistently, and never serves one caller the list of another', () => {
    const index = new CatalogIndex(catalog);
    const everyone = policy({});
    const noOdd = policy({ ignoredProviders: ['odd'] });
    const sorted = query({ sort: 'most-popular', page: { offset: 0, limit: 10 } });
    const pages = [0, 10, 20].map((offset) => listIds(index, everyone, { ...sorted, page: { offset, limit: 10 } }));
    expect(pages.flat()).toEqual(Array.from({ length: 30 }, (_, i) => `m/${29 - i}`));

    const filtered = index.list(noOdd, sorted);
    expect(filtered.total).toBe(15);
    expect((JSON.parse(filtered.dataJson) as PublicModel[]).map((m) => m.id)).toEqual(['m/28', 'm/26', 'm/24', 'm/22', 'm/20', 'm/18', 'm/16', 'm/14', 'm/12', 'm/10']);
    // Same caller, another sort or modality: another list.
    expect(listIds(index, everyone, query({ page: { offset: 0, limit: 3 } }))).toEqual(['m/0', 'm/1', 'm/2']);
    expect(index.list(everyone, query({ outputModalities: new Set(['image']) })).total).toBe(0);
    expect(index.list(everyone, sorted).total).toBe(30);
  });

  it('answers a repeated page or full list with the bytes it kept, within its budget', () => {
    const index = new CatalogIndex(catalog);
    const everyone = policy({});
    const page = query({ page: { offset: 10, limit: 10 } });
    const first = index.list(everyone, page);
    // The same string, not an equal one: nothing was serialized again.
    expect(index.list(everyone, page).dataJson).toBe(first.dataJson);
    expect(index.list(everyone, query()).dataJson).toBe(index.list(everyone, query()).dataJson);
    expect(index.keptAnswerBytes).toBe((first.dataJson.length + index.list(everyone, query()).dataJson.length) * 2);

    const small = new CatalogIndex(catalog, 4096);
    for (let i = 0; i < 40; i++) {
      const who = policy({ ignoredProviders: [`provider-${i}`] });
      expect(JSON.parse(small.list(who, query()).dataJson)).toHaveLength(30);
      expect(small.keptAnswerBytes).toBeLessThanOrEqual(4096);
    }
  });

  it('stays correct after more callers than it keeps', () => {
    const index = new CatalogIndex(catalog);
    for (let i = 0; i < 100; i++) {
      const who = policy({ ignoredProviders: [`provider-${i}`, ...(i % 2 ? ['odd'] : [])] });
      expect(index.list(who, query()).total).toBe(i % 2 ? 15 : 30);
    }
  });
});
