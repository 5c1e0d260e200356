import { OPEN_POLICY } from '../../../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import { SORTS, type CatalogSort } from '../../../lambdas/catalog/catalog-query';
import type { CatalogEntry, ModelBenchmarks, PercentileStats, PublicModel, PublicPricing } from '../../../lambdas/catalog/types';
import { indexEntry as entry, providerEndpoint as endpoint } from '../../support/catalog-fixtures';
import { listIds, policy, query } from '../../support/catalog-index-queries';

function stats(p50: number | null): PercentileStats {
  return { p50, p75: null, p90: null, p99: null };
}

const price = (prompt: string, completion: string, discount?: number): PublicPricing =>
  discount === undefined ? { prompt, completion } : { prompt, completion, discount };

describe('CatalogIndex.list (docs/reference.md#the-catalog)', () => {
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
