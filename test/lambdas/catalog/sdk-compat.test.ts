import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { NotFoundResponseError, UnauthorizedResponseError } from '@openrouter/sdk/models/errors';
import OpenAI from 'openai';
import { SORTS } from '../../../lambdas/catalog/catalog-query';
import { API_BASE_PATH } from '../../../lambdas/routes';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * The official client of the public service this gateway is compatible with, unchanged, against the local
 * runtime (its clients must work as they are).
 *
 * What the SDK (1.3.x) does with `models.listForUser`, read from
 * `esm/funcs/modelsListForUser.js`:
 * - security is per operation: `listForUser({ bearer }, request)`; the client's `apiKey` is
 *   not used for it (it is for operations such as `endpoints.list`);
 * - the request schema defaults `offset` to 0 and `limit` to 500, so the SDK always sends
 *   both and cannot ask for the unpaged list (docs/reference.md#listing-rules rule 1);
 * - it sends `offset`, `limit` and `output_modalities` only: there is no `sort`, and
 *   unknown request fields are stripped by its zod schema; a sort goes in through the
 *   HTTP client's `beforeRequest` hook, the SDK's own extension point;
 * - pagination (`x-speakeasy-pagination` offsetLimit): `next()` / `for await` request
 *   `offset + page length` until a page is shorter than `limit`.
 */

describe('the official SDK against the catalog', () => {
  let service: TestService;
  let key: string;
  /** URLs the SDK requested, in order. */
  let requested: URL[];

  beforeAll(async () => {
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
  });
  afterAll(async () => {
    await service?.stop();
  });
  beforeEach(() => {
    requested = [];
  });

  /** A client on the local base URL; `query` adds parameters the SDK cannot send itself. */
  function client(query: Record<string, string> = {}): OpenRouter {
    const httpClient = new HTTPClient();
    httpClient.addHook('beforeRequest', (request) => {
      const url = new URL(request.url);
      for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
      requested.push(url);
      return Object.keys(query).length === 0 ? request : new Request(url, request);
    });
    return new OpenRouter({ apiKey: key, serverURL: service.runtime.baseUrl, httpClient, retryConfig: { strategy: 'none' } });
  }

  async function rawIds(query: string): Promise<string[]> {
    const response = await service.call(`/models/user${query}`, { key });
    expect(response.status).toBe(200);
    return response.body.data.map((model: { id: string }) => model.id);
  }

  it('parses the full list, with the same ids as the raw HTTP response', async () => {
    const page = await client().models.listForUser({ bearer: key }, { outputModalities: 'all' });

    expect(requested.map((url) => url.pathname + url.search)).toEqual([
      `${API_BASE_PATH}/models/user?limit=500&offset=0&output_modalities=all`,
    ]);
    const raw = await rawIds('?output_modalities=all');
    expect(raw.length).toBeLessThan(500);
    expect(page.result.data.map((model) => model.id)).toEqual(raw);
    expect(page.result.totalCount).toBe(raw.length);
    expect(page.result.links.next).toBeNull();
  });

  it('parses the default (text) list and keeps the fields docs/reference.md#the-model-entry names', async () => {
    const page = await client().models.listForUser({ bearer: key });

    expect(page.result.data.map((model) => model.id)).toEqual(await rawIds(''));
    const withEverything = page.result.data.find((model) => model.benchmarks && model.reasoning && model.pricing.overrides);
    expect(withEverything).toBeDefined();
    const alias = page.result.data.find((model) => model.aliasTarget);
    expect(alias?.aliasTarget).toEqual({ slug: expect.any(String), name: expect.any(String) });
  });

  it('pages through with limit 100: every model once, in order', async () => {
    const raw = await rawIds('?output_modalities=all');
    const seen: string[] = [];

    for await (const page of await client().models.listForUser({ bearer: key }, { limit: 100, outputModalities: 'all' })) {
      seen.push(...page.result.data.map((model) => model.id));
    }

    expect(seen).toEqual(raw);
    expect(new Set(seen).size).toBe(seen.length);
    const offsets = requested.map((url) => [url.searchParams.get('offset'), url.searchParams.get('limit')]);
    const pages = Math.ceil(raw.length / 100) + (raw.length % 100 === 0 ? 1 : 0);
    expect(offsets).toEqual(Array.from({ length: pages }, (_, i) => [String(i * 100), '100']));
  });

  it('follows next() page by page to the same end', async () => {
    const raw = await rawIds('?output_modalities=all');
    const seen: string[] = [];
    let page: Awaited<ReturnType<OpenRouter['models']['listForUser']>> | null = await client().models.listForUser(
      { bearer: key },
      { limit: 100, outputModalities: 'all' },
    );
    while (page) {
      seen.push(...page.result.data.map((model) => model.id));
      page = (await page.next()) as typeof page;
    }
    expect(seen).toEqual(raw);
  });

  it('strips a sort given as a request field, so a sort needs the HTTP client hook', async () => {
    await client().models.listForUser({ bearer: key }, { outputModalities: 'all', sort: 'newest' } as never);
    expect(requested[0]!.searchParams.has('sort')).toBe(false);
  });

  it.each(SORTS)('gives the raw HTTP order for sort=%s', async (sort) => {
    const page = await client({ sort }).models.listForUser({ bearer: key }, { outputModalities: 'all' });

    expect(requested[0]!.searchParams.get('sort')).toBe(sort);
    expect(page.result.data.map((model) => model.id)).toEqual(await rawIds(`?output_modalities=all&sort=${sort}`));
  });

  it('keeps the sort across pages when paging through a sorted list', async () => {
    const raw = await rawIds('?output_modalities=all&sort=pricing-low-to-high');
    const seen: string[] = [];
    for await (const page of await client({ sort: 'pricing-low-to-high' }).models.listForUser(
      { bearer: key },
      { limit: 100, outputModalities: 'all' },
    )) {
      seen.push(...page.result.data.map((model) => model.id));
    }
    expect(seen).toEqual(raw);
  });

  it('parses the endpoints detail of listed models with endpoints.list', async () => {
    const listed = (await service.call('/models/user?limit=40&sort=most-popular', { key })).body.data as { id: string }[];
    for (const { id } of listed) {
      const [author, slug] = [id.slice(0, id.indexOf('/')), id.slice(id.indexOf('/') + 1)];
      const detail = await client().endpoints.list({ author, slug });
      expect(detail.data.id).toBe(id);
      expect(detail.data.endpoints.length).toBeGreaterThan(0);
      for (const endpoint of detail.data.endpoints) {
        expect(typeof endpoint.supportsToolChoice.auto).toBe('boolean');
        expect(endpoint.modelId).toBe(id);
      }
    }
  });

  it('raises its typed UnauthorizedResponseError for a bad key', async () => {
    const error = await client()
      .models.listForUser({ bearer: `sk-mg-v1-${'0'.repeat(64)}` })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnauthorizedResponseError);
    expect((error as UnauthorizedResponseError).data$).toMatchObject({ error: { code: 401, message: 'Invalid API key' } });
  });

  describe('the public catalog through its own methods', () => {
    it('models.list pages through every model with limit 100, as GET /models lists them', async () => {
      const raw = (await service.call('/models?output_modalities=all', { key })).body.data.map((model: { id: string }) => model.id);
      const seen: string[] = [];
      for await (const page of await client().models.list({ limit: 100, outputModalities: 'all' })) {
        seen.push(...page.result.data.map((model) => model.id));
      }
      expect(seen).toEqual(raw);
      expect(requested.map((url) => url.pathname)).toEqual(requested.map(() => `${API_BASE_PATH}/models`));
      expect(requested.length).toBe(Math.ceil(raw.length / 100) + (raw.length % 100 === 0 ? 1 : 0));
    });

    it('models.list sends its filters and sort, and parses what they select', async () => {
      const page = await client().models.list({ supportedParameters: 'tools', q: 'gpt', sort: 'newest', outputModalities: 'all' });
      expect(Object.fromEntries(requested[0]!.searchParams)).toMatchObject({ supported_parameters: 'tools', q: 'gpt', sort: 'newest' });
      const raw = await service.call('/models?supported_parameters=tools&q=gpt&sort=newest&output_modalities=all&offset=0&limit=500', { key });
      expect(page.result.data.map((model) => model.id)).toEqual(raw.body.data.map((model: { id: string }) => model.id));
      expect(page.result.data.length).toBeGreaterThan(0);
      for (const model of page.result.data) expect(model.supportedParameters).toContain('tools');
    });

    it('models.count counts as GET /models/count does', async () => {
      const counted = await client().models.count({ outputModalities: 'all' });
      expect(counted).toEqual({ data: { count: (await service.call('/models/count?output_modalities=all', { key })).body.data.count } });
      const images = await client().models.count({ outputModalities: 'image' });
      expect(images.data.count).toBe((await service.call('/models/count?output_modalities=image', { key })).body.data.count);
      expect(images.data.count).toBeLessThan(counted.data.count);
    });

    it('models.get reads one model, a variant included, and raises its typed 404', async () => {
      const listed = (await service.call('/models?q=:free&output_modalities=all', { key })).body.data[0] as { id: string; name: string };
      const [author, slug] = [listed.id.slice(0, listed.id.indexOf('/')), listed.id.slice(listed.id.indexOf('/') + 1)];
      const found = await client().models.get({ author, slug });
      expect(found.data).toMatchObject({ id: listed.id, name: listed.name });
      const error = await client()
        .models.get({ author: 'acme', slug: 'nothing' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundResponseError);
    });

    it('providers.list parses the providers list', async () => {
      const providers = await client().providers.list();
      expect(providers.data.map((provider) => provider.slug)).toEqual((await service.call('/providers', { key })).body.data.map((provider: { slug: string }) => provider.slug));
      expect(providers.data[0]).toEqual({ name: expect.any(String), slug: expect.any(String), privacyPolicyUrl: null });
    });

    it("the openai client's models.list() lists GET /models, which OpenAI-compatible tools call first", async () => {
      const openai = new OpenAI({ apiKey: key, baseURL: service.runtime.baseUrl, maxRetries: 0 });
      const listed: string[] = [];
      for await (const model of openai.models.list()) listed.push(model.id);
      expect(listed).toEqual((await service.call('/models', { key })).body.data.map((model: { id: string }) => model.id));
      expect(listed).toContain('openai/gpt-4o-mini');
      const refused = await new OpenAI({ apiKey: 'sk-mg-v1-unknown', baseURL: service.runtime.baseUrl, maxRetries: 0 }).models.list().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    });
  });
});
