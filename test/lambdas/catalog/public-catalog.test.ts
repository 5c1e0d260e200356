import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * The public catalog's operations (`GET /models`, `/models/count`, `/model/{author}/{slug}`,
 * `/providers`), as the public document describes them: the deployment's whole catalog, from
 * the index `/models/user` narrows per caller, behind a key unless the deployment opens them.
 */
const SNAPSHOT = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'data', 'catalog-snapshot.json'), 'utf8')) as {
  data: { id: string; name: string; canonical_slug: string; supported_parameters: string[]; architecture: { output_modalities: string[] } }[];
};
const TEXT_MODELS = SNAPSHOT.data.filter((model) => model.architecture.output_modalities.includes('text'));

type Listed = { id: string; name: string; canonical_slug: string; supported_parameters: string[] };

describe('the public catalog', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let key: string;

  beforeAll(async () => {
    // Catalog changes (a category filed below) are seen on the next request.
    service = await startTestService({ catalogCacheSeconds: 0 });
    stores = connectToRuntime(service.runtime);
    key = service.runtime.demo.keys.workspace;
  });
  afterAll(async () => {
    stores?.destroy();
    await service?.stop();
  });

  const ids = (body: { data: Listed[] }) => body.data.map((model) => model.id);

  describe('GET /models', () => {
    it('lists every text model of the catalog, in its order, with their total and no next page', async () => {
      const response = await service.call('/models', { key });
      expect(response.status).toBe(200);
      expect(ids(response.body)).toEqual(TEXT_MODELS.map((model) => model.id));
      expect(response.body.total_count).toBe(TEXT_MODELS.length);
      expect(response.body.links).toEqual({ next: null });
    });

    it('shows the whole catalog whatever narrows the caller: /models/user narrows, /models does not', async () => {
      const { organizationId } = service.runtime.demo;
      await stores.accounts.setPrivacy(organizationId, { allowTrainingProviders: false, allowRetainingProviders: false, zeroDataRetentionOnly: true });
      try {
        const mine = await service.call('/models/user', { key });
        const all = await service.call('/models', { key });
        expect(mine.body.total_count).toBeLessThan(all.body.total_count);
        expect(all.body.total_count).toBe(TEXT_MODELS.length);
      } finally {
        await stores.resetOrganization(organizationId);
      }
    });

    it('pages and sorts as /models/user does, the next link naming /models', async () => {
      const response = await service.call('/models?limit=5&offset=5&sort=newest&output_modalities=all', { key });
      const sorted = await service.call('/models?sort=newest&output_modalities=all', { key });
      expect(ids(response.body)).toEqual(ids(sorted.body).slice(5, 10));
      expect(response.body.links.next).toBe('/api/v1/models?sort=newest&output_modalities=all&offset=10&limit=5');
    });

    it('keeps the models supporting every parameter named in supported_parameters', async () => {
      const response = await service.call('/models?supported_parameters=tools,%20tool_choice&output_modalities=all', { key });
      const expected = SNAPSHOT.data.filter((model) => ['tools', 'tool_choice'].every((name) => model.supported_parameters.includes(name)));
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(SNAPSHOT.data.length);
      expect(ids(response.body)).toEqual(expected.map((model) => model.id));
    });

    it('searches ids, canonical slugs and names for q, in any letter case', async () => {
      const response = await service.call('/models?q=GPT-4o&output_modalities=all', { key });
      const expected = SNAPSHOT.data.filter((model) => [model.id, model.canonical_slug, model.name].some((text) => text.toLowerCase().includes('gpt-4o')));
      expect(expected.length).toBeGreaterThan(1);
      expect(ids(response.body)).toEqual(expected.map((model) => model.id));
      expect(response.body.total_count).toBe(expected.length);
    });

    it('selects by category the models the catalog files under it', async () => {
      expect((await service.call('/models?category=programming', { key })).body).toMatchObject({ data: [], total_count: 0 });
      const { entries } = await stores.catalog.load();
      const position = entries.findIndex((entry) => entry.model.id === TEXT_MODELS[3]!.id);
      await stores.catalog.putEntries([{ position, entry: { ...entries[position]!, categories: ['programming', 'science'] } }]);

      const response = await service.call('/models?category=programming', { key });
      expect(ids(response.body)).toEqual([TEXT_MODELS[3]!.id]);
      expect((await service.call('/models?category=legal', { key })).body.total_count).toBe(0);
    });

    it.each([
      ['category=poetry', 'category', 'must be one of programming, roleplay, marketing, marketing/seo, technology, science, translation, legal, finance, health, trivia, academia'],
      ['supported_parameters=tools,juggling', 'supported_parameters', 'must be a comma-separated list of temperature, top_p'],
      [`q=${'x'.repeat(201)}`, 'q', 'must be at most 200 characters'],
      ['limit=0', 'limit', ''],
      ['sort=cheapest', 'sort', 'must be one of most-popular'],
    ])('refuses %s with a 400 naming the parameter', async (query, parameter, reason) => {
      const response = await service.call(`/models?${query}`, { key });
      expect(response.status).toBe(400);
      expect(response.body.error.metadata).toEqual({ parameter });
      expect(response.body.error.message).toContain(reason);
    });

    it('needs a key by default, and refuses a bad one', async () => {
      expect((await service.call('/models')).status).toBe(401);
      expect((await service.call('/models', { key: `sk-mg-v1-${'0'.repeat(64)}` })).body).toEqual({ error: { code: 401, message: 'Invalid API key' } });
    });
  });

  describe('GET /models/count', () => {
    it.each([
      ['', TEXT_MODELS.length],
      ['?output_modalities=all', SNAPSHOT.data.length],
      ['?output_modalities=image', SNAPSHOT.data.filter((model) => model.architecture.output_modalities.includes('image')).length],
    ])('counts the models%s', async (query, count) => {
      const response = await service.call(`/models/count${query}`, { key });
      expect([response.status, response.body]).toEqual([200, { data: { count } }]);
    });

    it('refuses an unknown modality', async () => {
      expect((await service.call('/models/count?output_modalities=smell', { key })).status).toBe(400);
    });
  });

  describe('GET /model/{author}/{slug}', () => {
    it('answers one model as the list shows it', async () => {
      const listed = (await service.call('/models', { key })).body.data[0];
      const response = await service.call(`/model/${listed.id}`, { key });
      expect([response.status, response.body]).toEqual([200, { data: listed }]);
    });

    it('resolves a variant by its id and a model by its canonical slug', async () => {
      const variant = SNAPSHOT.data.find((model) => model.id.includes(':'))!;
      expect((await service.call(`/model/${variant.id}`, { key })).body.data.id).toBe(variant.id);
      const aliased = SNAPSHOT.data.find((model) => model.canonical_slug !== model.id && !model.id.includes(':'))!;
      expect((await service.call(`/model/${aliased.canonical_slug}`, { key })).body.data.id).toBe(aliased.id);
    });

    it('answers 404 for a model the catalog does not hold', async () => {
      const response = await service.call('/model/acme/unknown-model', { key });
      expect([response.status, response.body]).toEqual([404, { error: { code: 404, message: 'Model acme/unknown-model not found' } }]);
    });
  });

  describe('GET /providers', () => {
    it('lists each provider of the catalog once, by name', async () => {
      const response = await service.call('/providers', { key });
      expect(response.status).toBe(200);
      const providers = response.body.data as { name: string; slug: string; privacy_policy_url: null }[];
      expect(providers.length).toBeGreaterThan(3);
      expect(new Set(providers.map((provider) => provider.slug)).size).toBe(providers.length);
      expect(providers.map((provider) => provider.name)).toEqual([...providers.map((provider) => provider.name)].sort((a, b) => a.localeCompare(b)));
      for (const provider of providers) expect(provider).toEqual({ name: expect.any(String), slug: expect.stringMatching(/^[a-z0-9._-]+$/), privacy_policy_url: null });
    });
  });

  describe('HEAD', () => {
    it.each(['/models', '/models/count', '/providers', '/models/user?limit=3'])('HEAD %s answers as GET without a body', async (path) => {
      const get = await fetch(`${service.runtime.baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });
      const getBody = await get.arrayBuffer();
      const head = await service.call(path, { key, method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.headers.get('content-length')).toBe(String(getBody.byteLength));
    });
  });
});

describe('the public catalog opened by the deployment (publicCatalog)', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ publicCatalog: true });
  });
  afterAll(async () => {
    await service?.stop();
  });

  it.each(['/models', '/models/count', '/model/openai/gpt-4o-mini', '/providers'])('answers GET %s without a credential', async (path) => {
    expect((await service.call(path)).status).toBe(200);
  });

  it('still checks a credential that is sent, and keeps /models/user behind a key', async () => {
    expect((await service.call('/models', { key: `sk-mg-v1-${'0'.repeat(64)}` })).status).toBe(401);
    expect((await service.call('/models', { key: service.runtime.demo.keys.personal })).status).toBe(200);
    expect((await service.call('/models/user')).status).toBe(401);
  });
});
