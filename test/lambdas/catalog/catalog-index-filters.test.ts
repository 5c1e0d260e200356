import { OPEN_POLICY } from '../../../lambdas/catalog/caller-policy';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import type { PublicModel } from '../../../lambdas/catalog/types';
import { indexEntry as entry, providerEndpoint as endpoint } from '../../support/catalog-fixtures';
import { listIds, policy, query } from '../../support/catalog-index-queries';

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
});
