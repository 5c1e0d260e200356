import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import type { CatalogEntry, ProviderEndpoint, PublicModel } from '../../../lambdas/catalog/types';
import { snapshotCatalog } from '../../../local/seed';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * docs/reference.md#workload-identity, docs/reference.md#the-catalog end to end: the listing narrowed by the organization's provider
 * preferences and privacy settings, by guardrails on the key and on its workspace, and by
 * the regional hostname, through real HTTP on the embedded DynamoDB. Settings are read per
 * request, so every change shows on the next call.
 *
 * Expectations are computed here from the seeded catalog's own endpoint facts (tag,
 * dataPolicy, regions), not with the service's policy code: a model is listed when at
 * least one of its endpoints is reachable; its pricing and top_provider are those of the
 * first reachable endpoint (routing preference order); its context_length the longest
 * reachable one.
 */
const CATALOG: CatalogEntry[] = snapshotCatalog();

interface ListedView {
  id: string;
  context_length: number | null;
  pricing: PublicModel['pricing'];
  top_provider: PublicModel['top_provider'];
}

function expectedListing(
  reachable: (endpoint: ProviderEndpoint, model: PublicModel) => boolean,
  modelAllowed: (model: PublicModel) => boolean = () => true,
): ListedView[] {
  const views: ListedView[] = [];
  for (const { model, endpoints } of CATALOG) {
    if (!modelAllowed(model)) continue;
    const usable = endpoints.filter((endpoint) => reachable(endpoint, model));
    const top = usable[0];
    if (!top) continue;
    views.push({
      id: model.id,
      context_length: Math.max(...usable.map((endpoint) => endpoint.context_length)),
      pricing: top.pricing,
      top_provider: { context_length: top.context_length, max_completion_tokens: top.max_completion_tokens, is_moderated: top.is_moderated },
    });
  }
  return views;
}

const EVERYTHING = expectedListing(() => true);

describe('the catalog listing follows who is asking', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let demo: TestService['runtime']['demo'];

  beforeAll(async () => {
    service = await startTestService();
    stores = connectToRuntime(service.runtime);
    demo = service.runtime.demo;
  });
  afterAll(async () => {
    stores?.destroy();
    await service?.stop();
  });
  afterEach(async () => {
    await stores.resetOrganization(demo.organizationId);
    for (const guardrail of await stores.accounts.listGuardrails(demo.organizationId)) {
      await stores.accounts.deleteGuardrail(demo.organizationId, guardrail.id);
    }
  });

  async function listing(key: string, host?: string): Promise<ListedView[]> {
    const response = await service.call('/models/user?output_modalities=all', { key, host });
    expect(response.status).toBe(200);
    expect(response.body.total_count).toBe(response.body.data.length);
    return (response.body.data as PublicModel[]).map((model) => ({
      id: model.id,
      context_length: model.context_length,
      pricing: model.pricing,
      top_provider: model.top_provider,
    }));
  }

  const ids = (views: readonly ListedView[]) => views.map((view) => view.id);

  /** A guardrail through the management API, attached to the given keys. */
  async function guardrailOnKeys(body: Record<string, unknown>, keys: readonly string[]): Promise<string> {
    const created = await service.call('/guardrails', {
      key: demo.keys.managementReadWrite,
      method: 'POST',
      body: { name: `test ${Object.keys(body).join(' ')}`, ...body },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    if (keys.length > 0) {
      const assigned = await service.call(`/guardrails/${id}/assignments/keys`, {
        key: demo.keys.managementReadWrite,
        method: 'POST',
        body: { key_hashes: keys.map(hashApiKey) },
      });
      expect(assigned).toMatchObject({ status: 200, body: { assigned_count: keys.length } });
    }
    return id;
  }

  /** Models the listing shows with a different price than an unrestricted caller sees. */
  function repriced(views: readonly ListedView[]): string[] {
    const baseline = new Map(EVERYTHING.map((view) => [view.id, view]));
    return views.filter((view) => JSON.stringify(view.pricing) !== JSON.stringify(baseline.get(view.id)!.pricing)).map((view) => view.id);
  }

  it('lists every model, priced by its preferred endpoint, for an unrestricted organization', async () => {
    expect(await listing(demo.keys.workspace)).toEqual(EVERYTHING);
    expect(EVERYTHING).toHaveLength(CATALOG.length);
  });

  describe('organization provider preferences', () => {
    it('allowed providers: only models one of them serves, priced by the first of them in routing order', async () => {
      const allowed = ['azure', 'groq', 'mistral'];
      await stores.accounts.setProviderPreferences(demo.organizationId, { allowedProviders: allowed, ignoredProviders: [] });

      const actual = await listing(demo.keys.workspace);

      const expected = expectedListing((endpoint) => allowed.includes(endpoint.tag));
      expect(actual).toEqual(expected);
      expect(expected.length).toBeGreaterThan(50);
      expect(expected.length).toBeLessThan(CATALOG.length);
      // A model reached through a reseller shows the reseller's price and limits, not the author's.
      const resold = CATALOG.find((entry) => entry.model.id.startsWith('openai/') && entry.endpoints.some((e) => e.tag === 'azure'))!;
      const azure = resold.endpoints.find((endpoint) => endpoint.tag === 'azure')!;
      expect(actual.find((view) => view.id === resold.model.id)).toMatchObject({
        pricing: azure.pricing,
        top_provider: { context_length: azure.context_length, is_moderated: false },
      });
      expect(repriced(actual).length).toBeGreaterThan(0);
    });

    it('ignored providers (any case): models only they serve disappear, the others fall to the next endpoint', async () => {
      await stores.accounts.setProviderPreferences(demo.organizationId, { allowedProviders: null, ignoredProviders: ['openai', 'Azure'] });

      const actual = await listing(demo.keys.workspace);

      const expected = expectedListing((endpoint) => endpoint.tag !== 'openai' && endpoint.tag !== 'azure');
      expect(actual).toEqual(expected);
      expect(expected.length).toBeLessThan(CATALOG.length);
      expect(repriced(actual).length).toBeGreaterThan(0);
    });
  });

  describe('organization privacy settings', () => {
    it('disallowing training providers hides models that only train and reprices those with a later non-training endpoint', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: false,
        allowRetainingProviders: true,
        zeroDataRetentionOnly: false,
      });

      const actual = await listing(demo.keys.workspace);

      expect(actual).toEqual(expectedListing((endpoint) => !endpoint.dataPolicy.training));
      const onlyTraining = CATALOG.filter((entry) => entry.endpoints.every((endpoint) => endpoint.dataPolicy.training));
      expect(onlyTraining.length).toBeGreaterThan(0);
      for (const entry of onlyTraining) expect(ids(actual)).not.toContain(entry.model.id);
      const trainsFirst = CATALOG.filter(
        (entry) => entry.endpoints[0]!.dataPolicy.training && entry.endpoints.some((endpoint) => !endpoint.dataPolicy.training),
      );
      expect(trainsFirst.length).toBeGreaterThan(0);
      for (const entry of trainsFirst) {
        const fallback = entry.endpoints.find((endpoint) => !endpoint.dataPolicy.training)!;
        expect({ id: entry.model.id, pricing: actual.find((view) => view.id === entry.model.id)?.pricing }).toEqual({
          id: entry.model.id,
          pricing: fallback.pricing,
        });
      }
      expect(trainsFirst.some((entry) => repriced(actual).includes(entry.model.id))).toBe(true);
    });

    it('disallowing retaining providers keeps only endpoints that do not retain prompts', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: true,
        allowRetainingProviders: false,
        zeroDataRetentionOnly: false,
      });

      const expected = expectedListing((endpoint) => !endpoint.dataPolicy.retainsPrompts);
      expect(await listing(demo.keys.workspace)).toEqual(expected);
      expect(expected.length).toBeLessThan(expectedListing((endpoint) => !endpoint.dataPolicy.training).length);
    });

    it('zero data retention only keeps only ZDR endpoints', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: true,
        allowRetainingProviders: true,
        zeroDataRetentionOnly: true,
      });

      const expected = expectedListing((endpoint) => endpoint.dataPolicy.zeroDataRetention);
      expect(await listing(demo.keys.workspace)).toEqual(expected);
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.length).toBeLessThan(expectedListing((endpoint) => !endpoint.dataPolicy.retainsPrompts).length);
    });

    it('applies to every key of the organization', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: false,
        allowRetainingProviders: true,
        zeroDataRetentionOnly: false,
      });
      const expected = expectedListing((endpoint) => !endpoint.dataPolicy.training);
      for (const key of Object.values(demo.keys)) expect(ids(await listing(key))).toEqual(ids(expected));
    });
  });

  describe('guardrails', () => {
    it('allowed_models on a key narrows that key only; ids and canonical slugs both match', async () => {
      const batch = CATALOG.find((entry) => entry.model.id.endsWith(':batch'))!.model;
      const allowed = ['openai/gpt-4o', 'anthropic/claude-sonnet-5', batch.canonical_slug];
      await guardrailOnKeys({ allowed_models: allowed }, [demo.keys.workspace]);

      const expected = expectedListing(
        () => true,
        (model) => allowed.includes(model.id) || allowed.includes(model.canonical_slug),
      );
      expect(await listing(demo.keys.workspace)).toEqual(expected);
      expect(ids(expected)).toEqual(expect.arrayContaining(['openai/gpt-4o', 'anthropic/claude-sonnet-5', batch.id]));
      expect(await listing(demo.keys.personal)).toEqual(EVERYTHING);
    });

    it('ignored_providers on a key drop those endpoints for that key only', async () => {
      await guardrailOnKeys({ ignored_providers: ['anthropic', 'amazon-bedrock'] }, [demo.keys.personal]);

      const expected = expectedListing((endpoint) => !['anthropic', 'amazon-bedrock'].includes(endpoint.tag));
      expect(await listing(demo.keys.personal)).toEqual(expected);
      expect(repriced(expected).length).toBeGreaterThan(0);
      expect(await listing(demo.keys.workspace)).toEqual(EVERYTHING);
    });

    it('enforce_zdr on a key keeps only ZDR endpoints for that key', async () => {
      await guardrailOnKeys({ enforce_zdr: true }, [demo.keys.workspace]);

      expect(await listing(demo.keys.workspace)).toEqual(expectedListing((endpoint) => endpoint.dataPolicy.zeroDataRetention));
      expect(await listing(demo.keys.personal)).toEqual(EVERYTHING);
    });

    it('a guardrail on the workspace applies to its workspace key and personal key, not to a management key', async () => {
      const id = await guardrailOnKeys({ allowed_providers: ['anthropic', 'google'] }, []);
      await stores.accounts.setWorkspaceGuardrail(demo.organizationId, id, demo.workspaceId, true);

      const expected = expectedListing((endpoint) => ['anthropic', 'google'].includes(endpoint.tag));
      expect(expected.length).toBeGreaterThan(0);
      expect(await listing(demo.keys.workspace)).toEqual(expected);
      expect(await listing(demo.keys.personal)).toEqual(expected);
      expect(await listing(demo.keys.managementReadOnly)).toEqual(EVERYTHING);

      await stores.accounts.setWorkspaceGuardrail(demo.organizationId, id, demo.workspaceId, false);
      expect(await listing(demo.keys.workspace)).toEqual(EVERYTHING);
    });

    it('guardrails on the key and the workspace, and the organization settings, all apply together', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: false,
        allowRetainingProviders: true,
        zeroDataRetentionOnly: false,
      });
      await guardrailOnKeys({ ignored_providers: ['azure'] }, [demo.keys.workspace]);
      const onWorkspace = await guardrailOnKeys({ ignored_providers: ['amazon-bedrock'] }, []);
      await stores.accounts.setWorkspaceGuardrail(demo.organizationId, onWorkspace, demo.workspaceId, true);

      expect(await listing(demo.keys.workspace)).toEqual(
        expectedListing((e) => !e.dataPolicy.training && e.tag !== 'azure' && e.tag !== 'amazon-bedrock'),
      );
      expect(await listing(demo.keys.personal)).toEqual(expectedListing((e) => !e.dataPolicy.training && e.tag !== 'amazon-bedrock'));
    });

    it('deleting a guardrail restores the listing', async () => {
      const id = await guardrailOnKeys({ allowed_models: ['openai/gpt-4o'] }, [demo.keys.workspace]);
      expect(await listing(demo.keys.workspace)).toEqual(expectedListing(() => true, (model) => model.canonical_slug === 'openai/gpt-4o'));

      const deleted = await service.call(`/guardrails/${id}`, { key: demo.keys.managementReadWrite, method: 'DELETE' });

      expect(deleted).toMatchObject({ status: 200, body: { deleted: true } });
      expect(await listing(demo.keys.workspace)).toEqual(EVERYTHING);
    });
  });

  describe('regional hostnames (docs/reference.md#listing-rules rule 4)', () => {
    const inEu = expectedListing((endpoint) => endpoint.regions.includes('eu'));

    it('lists through the EU hostname only models with an EU endpoint, priced by the first EU endpoint', async () => {
      const actual = await listing(demo.keys.workspace, 'eu.localhost');

      expect(actual).toEqual(inEu);
      expect(inEu.length).toBeGreaterThan(0);
      expect(inEu.length).toBeLessThan(CATALOG.length);
      expect(repriced(actual).length).toBeGreaterThan(0);
    });

    it('matches the EU hostname with a port and in any case', async () => {
      const port = new URL(service.runtime.baseUrl).port;
      expect(await listing(demo.keys.workspace, `eu.localhost:${port}`)).toEqual(inEu);
      expect(await listing(demo.keys.workspace, 'EU.Localhost')).toEqual(inEu);
    });

    it('matches the EU hostname written as a fully qualified name, with its one trailing dot', async () => {
      const port = new URL(service.runtime.baseUrl).port;
      expect(await listing(demo.keys.workspace, 'eu.localhost.')).toEqual(inEu);
      expect(await listing(demo.keys.workspace, `EU.localhost.:${port}`)).toEqual(inEu);
      // Only one dot is a DNS root; two are not a hostname the region is served on.
      expect(await listing(demo.keys.workspace, 'eu.localhost..')).toEqual(EVERYTHING);
    });

    it('lists everything through a hostname that is not configured as regional', async () => {
      for (const host of ['localhost', 'us.localhost', 'eu.localhost.example.com', 'api.modelgate.test']) {
        expect(await listing(demo.keys.workspace, host)).toEqual(EVERYTHING);
      }
    });

    it('combines the region with the organization settings', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: true,
        allowRetainingProviders: true,
        zeroDataRetentionOnly: true,
      });
      expect(await listing(demo.keys.workspace, 'eu.localhost')).toEqual(
        expectedListing((endpoint) => endpoint.regions.includes('eu') && endpoint.dataPolicy.zeroDataRetention),
      );
    });
  });

  describe('the endpoints detail route filters the same way', () => {
    async function endpointTags(id: string, key: string, host?: string): Promise<{ status: number; tags?: string[] }> {
      const response = await service.call(`/models/${id}/endpoints`, { key, host });
      if (response.status !== 200) return { status: response.status };
      return { status: 200, tags: response.body.data.endpoints.map((endpoint: { tag: string }) => endpoint.tag) };
    }

    it('404s a model hidden by privacy settings and lists only the reachable endpoints of the others', async () => {
      await stores.accounts.setPrivacy(demo.organizationId, {
        allowTrainingProviders: false,
        allowRetainingProviders: true,
        zeroDataRetentionOnly: false,
      });
      const hidden = CATALOG.find((entry) => entry.endpoints.every((endpoint) => endpoint.dataPolicy.training))!;
      const partly = CATALOG.find(
        (entry) => entry.endpoints[0]!.dataPolicy.training && entry.endpoints.some((endpoint) => !endpoint.dataPolicy.training),
      )!;

      expect(await endpointTags(hidden.model.id, demo.keys.workspace)).toEqual({ status: 404 });
      expect(await endpointTags(partly.model.id, demo.keys.workspace)).toEqual({
        status: 200,
        tags: partly.endpoints.filter((endpoint) => !endpoint.dataPolicy.training).map((endpoint) => endpoint.tag),
      });
    });

    it('404s a model outside a key guardrail allow list for that key only', async () => {
      await guardrailOnKeys({ allowed_models: ['openai/gpt-4o'] }, [demo.keys.workspace]);

      expect(await endpointTags('openai/gpt-4o', demo.keys.workspace)).toMatchObject({ status: 200 });
      expect(await endpointTags('anthropic/claude-sonnet-5', demo.keys.workspace)).toEqual({ status: 404 });
      expect(await endpointTags('anthropic/claude-sonnet-5', demo.keys.personal)).toMatchObject({ status: 200 });
    });

    it('404s through the EU hostname a model with no EU endpoint', async () => {
      const usOnly = CATALOG.find((entry) => entry.endpoints.every((endpoint) => !endpoint.regions.includes('eu')))!;
      const partlyEu = CATALOG.find(
        (entry) => !entry.endpoints[0]!.regions.includes('eu') && entry.endpoints.some((endpoint) => endpoint.regions.includes('eu')),
      )!;

      expect(await endpointTags(usOnly.model.id, demo.keys.workspace, 'eu.localhost')).toEqual({ status: 404 });
      expect(await endpointTags(usOnly.model.id, demo.keys.workspace)).toMatchObject({ status: 200 });
      expect(await endpointTags(partlyEu.model.id, demo.keys.workspace, 'eu.localhost')).toEqual({
        status: 200,
        tags: partlyEu.endpoints.filter((endpoint) => endpoint.regions.includes('eu')).map((endpoint) => endpoint.tag),
      });
    });
  });
});
