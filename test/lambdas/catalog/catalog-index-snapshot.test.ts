import { OPEN_POLICY, type CallerPolicy } from '../../../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import { SORTS, type CatalogSort } from '../../../lambdas/catalog/catalog-query';
import { averageTokenPrice } from '../../../lambdas/catalog/pricing';
import type { PublicModel } from '../../../lambdas/catalog/types';
import { snapshotCatalog } from '../../../local/seed';
import { listIds, listModels, policy, query } from '../../support/catalog-index-queries';

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
