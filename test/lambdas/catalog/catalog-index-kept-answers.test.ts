import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import type { PublicModel } from '../../../lambdas/catalog/types';
import { indexEntry as entry, providerEndpoint as endpoint } from '../../support/catalog-fixtures';
import { listIds, policy, query } from '../../support/catalog-index-queries';

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
