import { OPEN_POLICY } from '../../../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import type { PublicModel } from '../../../lambdas/catalog/types';
import { snapshotCatalog } from '../../../local/seed';
import { catalogEntry, indexEntry as entry, providerEndpoint as endpoint } from '../../support/catalog-fixtures';
import { listModels, policy, query } from '../../support/catalog-index-queries';

describe('CatalogIndex.list (docs/reference.md#the-catalog)', () => {
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
});
