import { OPEN_POLICY } from '../../../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import { indexEntry as entry, providerEndpoint as endpoint } from '../../support/catalog-fixtures';
import { listModels, policy, query } from '../../support/catalog-index-queries';

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
