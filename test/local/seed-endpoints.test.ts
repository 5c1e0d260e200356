import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validatePricing } from '../../lambdas/catalog/pricing';
import { deriveCatalogEntries } from '../../local/seed-endpoints';
import { authorTag, isRouterModel, providerDisplayName, ROUTER_TAG } from '../../local/seed-providers';
import type { EndpointsExcerptFile, ModelStatsFile } from '../../local/seed-sources';
import type { CatalogEntry, PublicModel } from '../../lambdas/catalog/types';

function readData<T>(file: string): T {
  return JSON.parse(readFileSync(join(__dirname, '../../data', file), 'utf8')) as T;
}

const models = readData<{ data: PublicModel[] }>('catalog-snapshot.json').data;
const excerpt = readData<EndpointsExcerptFile>('endpoints-excerpt.json').endpoints;
const stats = readData<ModelStatsFile>('model-stats.json');
const entries = deriveCatalogEntries(models, { endpoints: excerpt, stats });
const allEndpoints = entries.flatMap((e) => e.endpoints);

const excerptModelIds = [...new Set(excerpt.map((e) => e.model_id))];
const snapshotIds = new Set(models.map((m) => m.id));
const excerptModelsInSnapshot = excerptModelIds.filter((id) => snapshotIds.has(id));
const isExcerptModel = (entry: CatalogEntry) => excerptModelIds.includes(entry.model.id);

function entryFor(id: string): CatalogEntry {
  const entry = entries.find((e) => e.model.id === id);
  if (!entry) throw new Error(`no entry for ${id}`);
  return entry;
}

const hasEu = (regions: string[]) => regions.includes('eu');

describe('deriveCatalogEntries', () => {
  it('is deterministic: two runs over fresh copies of the data deep-equal', () => {
    const again = deriveCatalogEntries(structuredClone(models), {
      endpoints: structuredClone(excerpt),
      stats: structuredClone(stats),
    });

    expect(again).toEqual(entries);
  });

  it('keeps one entry per model, in input order, holding the model itself', () => {
    expect(entries.map((e) => e.model.id)).toEqual(models.map((m) => m.id));
    expect(entries.every((e, i) => e.model === models[i])).toBe(true);
  });

  it('does not let endpoint pricing alias the public model pricing', () => {
    const entry = entryFor('anthropic/claude-sonnet-4.5');

    expect(entry.endpoints[0].pricing).not.toBe(entry.model.pricing);
    expect(entry.endpoints[0].pricing.overrides).not.toBe(entry.model.pricing.overrides);
  });

  it('gives every model an endpoint 0 that matches its public entry (docs/reference.md#the-model-entry, docs/reference.md#pricing-and-cost)', () => {
    const mismatched = entries.filter(({ model, endpoints: [top] }) => {
      try {
        expect(top!.pricing).toEqual(model.pricing);
        expect(top!.context_length).toBe(model.top_provider.context_length ?? model.context_length);
        expect(top!.max_completion_tokens).toBe(model.top_provider.max_completion_tokens ?? null);
        expect(top!.is_moderated).toBe(model.top_provider.is_moderated);
        expect(top!.supported_parameters).toEqual(model.supported_parameters);
        return false;
      } catch {
        return true;
      }
    });
    expect(mismatched.map((entry) => entry.model.id)).toEqual([]);
  });

  it("tags endpoint 0 with the model's author unless the excerpt names its endpoint 0", () => {
    const excerptTops = new Map(excerpt.filter((e) => e._endpoint_index === 0).map((e) => [e.model_id, e.tag]));
    const unexpected = entries
      .filter((e) => !isRouterModel(e.model))
      .filter((e) => e.endpoints[0].tag !== (excerptTops.get(e.model.id) ?? authorTag(e.model.id)))
      .map((e) => e.model.id);

    expect(unexpected).toEqual([]);
    expect(entryFor('qwen/qwen-plus').endpoints[0].tag).toBe('alibaba');
    expect(entryFor('~google/gemini-pro-latest').endpoints[0].tag).toBe('google');
  });

  it.each([
    ['anthropic', 'Anthropic'],
    ['openai', 'OpenAI'],
    ['meta-llama', 'Meta Llama'],
    ['amazon-bedrock', 'Amazon Bedrock'],
    ['router', 'OpenRouter'],
  ])('displays provider %s as %s', (tag, name) => {
    expect(providerDisplayName(tag)).toBe(name);
  });

  it('gives every router model exactly one endpoint, tagged router', () => {
    const routers = entries.filter((e) => isRouterModel(e.model));

    expect(routers.map((e) => e.model.id).sort()).toEqual([
      'openrouter/auto',
      'openrouter/auto-beta',
      'openrouter/bodybuilder',
      'openrouter/free',
      'openrouter/fusion',
      'openrouter/pareto-code',
    ]);
    for (const router of routers) {
      expect(router.endpoints.map((e) => e.tag)).toEqual([ROUTER_TAG]);
    }
  });

  it('gives every other non-excerpt model 1–4 endpoints with distinct tags, and every count occurs', () => {
    const synthetic = entries.filter((e) => !isRouterModel(e.model) && !isExcerptModel(e));
    const counts = new Set(synthetic.map((e) => e.endpoints.length));

    expect([...counts].sort()).toEqual([1, 2, 3, 4]);
    for (const entry of entries) {
      const tags = entry.endpoints.map((e) => e.tag);
      expect(new Set(tags).size).toBe(tags.length);
    }
  });

  describe('excerpt endpoints', () => {
    it('covers 13 models, 10 of them in the snapshot', () => {
      expect(excerptModelIds).toHaveLength(13);
      expect(excerptModelsInSnapshot).toHaveLength(10);
    });

    it.each(excerptModelsInSnapshot.map((id) => [id]))('are used, in order, for %s', (id) => {
      const records = excerpt.filter((e) => e.model_id === id).sort((a, b) => a._endpoint_index - b._endpoint_index);
      const { endpoints, model } = entryFor(id);
      const expectedTags = [
        ...(records[0]._endpoint_index === 0 ? [] : [authorTag(model.id)]),
        ...records.map((r) => r.tag),
      ];

      expect(endpoints.map((e) => e.tag)).toEqual(expectedTags);
    });

    it('maps an excerpt record field by field, dropping the already-applied discount', () => {
      const record = excerpt.find((e) => e.model_id === 'deepseek/deepseek-v4-flash' && e.tag === 'alibaba')!;
      const endpoint = entryFor('deepseek/deepseek-v4-flash').endpoints.find((e) => e.tag === 'alibaba');

      expect(record.pricing.discount).toBe(0.33);
      expect(endpoint).toEqual({
        tag: 'alibaba',
        provider_name: 'Alibaba',
        name: record.name,
        quantization: 'unknown',
        context_length: 1000000,
        max_completion_tokens: 393216,
        max_prompt_tokens: 1000000,
        pricing: { completion: '0.000000268', input_cache_read: '0.0000000268', prompt: '0.000000134' },
        supported_parameters: record.supported_parameters,
        is_moderated: false,
        status: record.status,
        uptime_last_30m: record.uptime_last_30m,
        uptime_last_5m: record.uptime_last_5m,
        uptime_last_1d: record.uptime_last_1d,
        supports_implicit_caching: record.supports_implicit_caching,
        latency_last_30m: record.latency_last_30m,
        throughput_last_30m: record.throughput_last_30m,
        dataPolicy: expect.objectContaining({ training: expect.any(Boolean) }),
        regions: expect.arrayContaining([expect.stringMatching(/^(us|eu)$/)]),
      });
    });

    it("keeps the excerpt's provider for endpoint 0 but the public entry's pricing", () => {
      const top = entryFor('qwen/qwen3-vl-8b-thinking').endpoints[0];

      expect(top.tag).toBe('alibaba');
      expect(top.pricing).toEqual({ prompt: '0.00000018', completion: '0.0000021' });
    });
  });

  it("uses the model stats' median latency and throughput as endpoint 0's p50", () => {
    const withStats = entries.filter(
      (e) => !isExcerptModel(e) && stats[e.model.canonical_slug]?.latency?.median != null,
    );

    expect(withStats.length).toBeGreaterThan(200);
    for (const { model, endpoints } of withStats) {
      const s = stats[model.canonical_slug];
      expect(endpoints[0].latency_last_30m?.p50).toBe(s.latency?.median);
      expect(endpoints[0].throughput_last_30m?.p50).toBe(s.throughput?.median);
    }
  });

  it('prices extra synthetic endpoints between 0.8x and 1.6x of the public price, as valid decimals', () => {
    for (const { model, endpoints } of entries.filter((e) => !isExcerptModel(e))) {
      for (const endpoint of endpoints.slice(1)) {
        expect(validatePricing(endpoint.pricing)).toEqual([]);
        const base = Number(model.pricing.prompt);
        const price = Number(endpoint.pricing.prompt);
        expect(price).toBeGreaterThanOrEqual(base * 0.8 - 1e-18);
        expect(price).toBeLessThanOrEqual(base * 1.6 + 1e-18);
        expect(endpoint.pricing.overrides?.length).toBe(model.pricing.overrides?.length);
      }
    }
  });

  it('sometimes offers a smaller context on an extra endpoint, never a larger one', () => {
    const extras = entries
      .filter((e) => !isExcerptModel(e))
      .flatMap((e) => e.endpoints.slice(1).map((endpoint) => ({ endpoint, top: e.endpoints[0] })));

    expect(extras.every(({ endpoint, top }) => endpoint.context_length <= top.context_length)).toBe(true);
    expect(extras.some(({ endpoint, top }) => endpoint.context_length < top.context_length)).toBe(true);
  });

  describe('data policy', () => {
    it('zero data retention implies neither training nor retention', () => {
      const violations = allEndpoints.filter(
        (e) => e.dataPolicy.zeroDataRetention && (e.dataPolicy.training || e.dataPolicy.retainsPrompts),
      );

      expect(violations).toEqual([]);
    });

    it('training implies retention', () => {
      expect(allEndpoints.filter((e) => e.dataPolicy.training && !e.dataPolicy.retainsPrompts)).toEqual([]);
    });

    it("trains on a :free model's first endpoint", () => {
      const free = entries.filter((e) => e.model.id.endsWith(':free'));

      expect(free).toHaveLength(18);
      expect(free.filter((e) => !e.endpoints[0].dataPolicy.training).map((e) => e.model.id)).toEqual([]);
      expect(free.every((e) => e.endpoints.length >= 2)).toBe(true);
    });


    it('leaves some models without any ZDR endpoint and gives others one', () => {
      const withZdr = entries.filter((e) => e.endpoints.some((x) => x.dataPolicy.zeroDataRetention));

      expect(withZdr.length).toBeGreaterThan(50);
      expect(entries.length - withZdr.length).toBeGreaterThan(50);
    });

    it("has paid models whose first endpoint trains while a later one doesn't", () => {
      const mixed = entries.filter(
        (e) =>
          !e.model.id.endsWith(':free') &&
          e.endpoints[0].dataPolicy.training &&
          e.endpoints.slice(1).some((x) => !x.dataPolicy.training),
      );

      expect(mixed.length).toBeGreaterThan(0);
    });
  });

  describe('regions', () => {
    it('serves every endpoint from us, eu or both', () => {
      const shapes = new Set(allEndpoints.map((e) => e.regions.join(',')));

      expect([...shapes].sort()).toEqual(['eu', 'us', 'us,eu']);
    });


    it('leaves some models without an EU endpoint', () => {
      expect(entries.filter((e) => !e.endpoints.some((x) => hasEu(x.regions))).length).toBeGreaterThan(20);
    });

    it('has models whose only EU endpoints come after the first', () => {
      const laterOnly = entries.filter(
        (e) => !hasEu(e.endpoints[0].regions) && e.endpoints.slice(1).some((x) => hasEu(x.regions)),
      );

      expect(laterOnly.length).toBeGreaterThan(20);
    });
  });

  describe('usage figures', () => {
    it('are non-negative integers, with some models at 0 and most above', () => {
      for (const { popularity, weeklyTokens } of entries) {
        expect(Number.isSafeInteger(popularity) && popularity >= 0).toBe(true);
        expect(Number.isSafeInteger(weeklyTokens) && weeklyTokens >= 0).toBe(true);
        expect(weeklyTokens === 0).toBe(popularity === 0);
      }
      const zero = entries.filter((e) => e.popularity === 0).length;

      expect(zero).toBeGreaterThan(0);
      expect(zero).toBeLessThan(entries.length / 4);
    });

    it("use the top provider's real request count for base models", () => {
      const model = models.find((m) => !m.id.includes(':') && stats[m.canonical_slug]?.topProvider?.request_count);

      expect(entryFor(model!.id).popularity).toBe(stats[model!.canonical_slug].topProvider!.request_count);
    });
  });
});
