import type { CatalogEntry, PublicModel } from '../../../lambdas/catalog/types';
import { API_BASE_PATH } from '../../../lambdas/routes';
import { snapshotCatalog } from '../../../local/seed';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

/** GET /models/user on the local runtime: query errors, paging links and catalog freshness (docs/reference.md#the-model-entry, docs/reference.md#the-catalog, docs/reference.md#the-common-error-body). */
const CATALOG: CatalogEntry[] = snapshotCatalog();

describe('GET /models/user', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let key: string;
  /** The service's clock: the system's, moved ahead by the test past the catalog cache window instead of waiting. */
  let ahead = 0;
  const clock = { now: () => new Date(Date.now() + ahead) };

  beforeAll(async () => {
    // The runtime's default catalog cache window: 2 s.
    service = await startTestService({ clock });
    stores = connectToRuntime(service.runtime);
    key = service.runtime.demo.keys.workspace;
  });
  afterAll(async () => {
    stores?.destroy();
    await service?.stop();
  });

  const relative = (link: string) => {
    expect(link.startsWith(`${API_BASE_PATH}/`)).toBe(true);
    return link.slice(API_BASE_PATH.length);
  };

  describe('query errors (docs/reference.md#the-common-error-body)', () => {
    it.each(['0', '1001', '-5', 'ten', '1.5', '1e3'])('400 names limit for limit=%j', async (limit) => {
      const response = await service.call(`/models/user?limit=${encodeURIComponent(limit)}`, { key });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: { code: 400, message: 'Invalid limit: must be an integer from 1 to 1000', metadata: { parameter: 'limit' } },
      });
    });

    it.each([
      ['offset', 'offset=-1'],
      ['offset', 'offset=abc'],
      ['sort', 'sort=alphabetical'],
      ['output_modalities', 'output_modalities=text,smell'],
      ['output_modalities', 'output_modalities=all,text'],
    ])('400 names %s for %s', async (parameter, query) => {
      const response = await service.call(`/models/user?${query}`, { key });

      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: { code: 400, message: expect.stringMatching(new RegExp(`^Invalid ${parameter}: `)), metadata: { parameter } },
      });
    });

    it('accepts the neutral and the wire name of the arena sort alike', async () => {
      const neutral = await service.call('/models/user?output_modalities=all&sort=arena-elo-high-to-low', { key });
      const wire = await service.call('/models/user?output_modalities=all&sort=design-arena-elo-high-to-low', { key });
      expect(neutral.status).toBe(200);
      expect(neutral.body).toEqual(wire.body);
    });
  });

  describe('paging (docs/reference.md#the-model-entry, docs/reference.md#listing-rules rule 1)', () => {
    it('returns the full list with links.next null when neither offset nor limit is given', async () => {
      const response = await service.call('/models/user?output_modalities=all', { key });

      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(CATALOG.length);
      expect(response.body.total_count).toBe(CATALOG.length);
      expect(response.body.links).toEqual({ next: null });
    });

    it('follows links.next through every model once, keeping sort and modalities', async () => {
      const full = await service.call('/models/user?sort=newest&output_modalities=all', { key });
      const seen: string[] = [];
      const links: string[] = [];
      let path: string | null = '/models/user?limit=100&sort=newest&output_modalities=all';

      while (path) {
        const page = await service.call(path, { key });
        expect(page.status).toBe(200);
        expect(page.body.total_count).toBe(CATALOG.length);
        expect(page.body.data.length).toBeLessThanOrEqual(100);
        seen.push(...page.body.data.map((model: PublicModel) => model.id));
        const next: string | null = page.body.links.next;
        if (next) {
          links.push(next);
          const params = new URL(next, 'http://x').searchParams;
          expect({ sort: params.get('sort'), output_modalities: params.get('output_modalities'), limit: params.get('limit') }).toEqual({
            sort: 'newest',
            output_modalities: 'all',
            limit: '100',
          });
        }
        path = next && relative(next);
      }

      expect(seen).toEqual(full.body.data.map((model: PublicModel) => model.id));
      expect(new Set(seen).size).toBe(CATALOG.length);
      expect(links.map((link) => new URL(link, 'http://x').searchParams.get('offset'))).toEqual(['100', '200', '300', '400']);
    });

    it('answers an offset past the end with an empty page, the total and no next link', async () => {
      for (const offset of [CATALOG.length, CATALOG.length + 1, 100_000]) {
        const response = await service.call(`/models/user?offset=${offset}&limit=100&output_modalities=all`, { key });

        expect(response.status).toBe(200);
        expect(response.body).toEqual({ data: [], total_count: CATALOG.length, links: { next: null } });
      }
    });

    it('pages with the default limit of 500 when only offset is given', async () => {
      const response = await service.call('/models/user?offset=1&output_modalities=all', { key });

      expect(response.body.data).toHaveLength(CATALOG.length - 1);
      expect(response.body.data[0].id).toBe(CATALOG[1]!.model.id);
      expect(response.body.links).toEqual({ next: null });
    });
  });

  describe('catalog freshness', () => {
    const fresh: CatalogEntry = (() => {
      const base = structuredClone(CATALOG.find((entry) => entry.model.id === 'openai/gpt-4o')!);
      const id = 'modelgate-test/fresh-model';
      base.model = {
        ...base.model,
        id,
        canonical_slug: id,
        name: 'Fresh Model',
        links: { details: `${API_BASE_PATH}/models/${id}/endpoints` },
      };
      delete base.model.alias_target;
      return base;
    })();

    async function listedIds(): Promise<string[]> {
      const response = await service.call('/models/user?output_modalities=all', { key });
      expect(response.status).toBe(200);
      return response.body.data.map((model: PublicModel) => model.id);
    }

    /**
     * Moves the service's clock past the catalog cache window, so the next request checks the
     * catalog again: 2 s, each container's checks spread over ±20% of it, so past 2.4 s.
     */
    const pastCacheWindow = () => {
      ahead += 2_500;
    };

    it('shows an imported model after the cache window, and drops a removed one', async () => {
      expect(await listedIds()).not.toContain(fresh.model.id);

      await stores.catalog.putEntries([{ position: CATALOG.length, entry: fresh }]);

      pastCacheWindow();
      const ids = await listedIds();
      expect(ids).toHaveLength(CATALOG.length + 1);
      expect(ids[ids.length - 1]).toBe(fresh.model.id);
      const detail = await service.call(`/models/${fresh.model.id}/endpoints`, { key });
      expect(detail.status).toBe(200);
      expect(detail.body.data.id).toBe(fresh.model.id);

      await stores.catalog.remove([fresh.model.id]);

      pastCacheWindow();
      expect(await listedIds()).toEqual(CATALOG.map((entry) => entry.model.id));
      expect((await service.call(`/models/${fresh.model.id}/endpoints`, { key })).status).toBe(404);
    });
  });
});
