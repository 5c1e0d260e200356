import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { BadRequestResponseError, ForbiddenResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { defaultGuardrailId } from '../../../lambdas/accounts/derived-ids';
import { API_BASE_PATH } from '../../../lambdas/routes';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * The official SDK (1.3.x) on the management API, unchanged: its own request serialisers
 * (camelCase in, the public snake_case bodies out) and its own zod response parsers.
 *
 * Unlike `models.listForUser`, these operations authenticate with the client's `apiKey`.
 * The list operations send `limit` and `offset` whenever a request is given (50 and 0 by
 * default), neither without one; their paginator asks for `offset + page length` while a page holds `limit` items (50 when not
 * given), so it ends only because modelgate honours `offset` (lambdas/management/list-page.ts).
 *
 * The SDK parses every answer here. Two used to be refused: workspaces carried
 * `default_guardrail_id: null` where the public `Workspace` requires a uuid (now derived from
 * the workspace id, the default guardrail written on first PATCH), and an unfiltered key list
 * held the management keys' `workspace_id: null` (an unfiltered list is now the default
 * workspace's, as in the public API, and a management key's `workspace_id` names the default
 * workspace, so `apiKeys.get` of one parses too). Keys carry `external_user: null`, which the SDK
 * requires: its document is newer than the copy in test/fixtures.
 */
describe('the official SDK against the management API', () => {
  let service: TestService;
  let sdk: OpenRouter;
  let managementKey: string;
  let workspaceId: string;
  /** `METHOD path?query` of every request the SDK sent, in order. */
  let requested: string[] = [];

  beforeAll(async () => {
    service = await startTestService();
    managementKey = service.runtime.demo.keys.managementReadWrite;
    workspaceId = service.runtime.demo.workspaceId;
    const httpClient = new HTTPClient();
    httpClient.addHook('beforeRequest', (request) => {
      const url = new URL(request.url);
      requested.push(`${request.method} ${url.pathname.slice(API_BASE_PATH.length)}${url.search}`);
      return request;
    });
    sdk = new OpenRouter({ apiKey: managementKey, serverURL: service.runtime.baseUrl, httpClient, retryConfig: { strategy: 'none' } });
  });
  afterAll(async () => {
    await service?.stop();
  });
  beforeEach(() => {
    requested = [];
  });

  const raw = async (path: string) => {
    const response = await service.call(path, { key: managementKey });
    expect(response.status).toBe(200);
    return response.body;
  };

  describe('guardrails: every answer parsed', () => {
    let guardrailId: string;
    const keyHashes = () => [hashApiKey(service.runtime.demo.keys.workspace), hashApiKey(service.runtime.demo.keys.personal)];

    it('creates a guardrail and reads it back from list and get', async () => {
      const created = await sdk.guardrails.create({
        createGuardrailRequest: {
          name: 'EU production',
          description: 'Only two providers, zero retention',
          allowedProviders: ['openai', 'anthropic'],
          ignoredModels: ['openai/gpt-4o'],
          enforceZdr: true,
          workspaceId,
        },
      });

      expect(created.data).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'EU production',
        description: 'Only two providers, zero retention',
        workspaceId,
        allowedModels: null,
        ignoredModels: ['openai/gpt-4o'],
        allowedProviders: ['openai', 'anthropic'],
        ignoredProviders: null,
        enforceZdr: true,
        limitUsd: null,
        resetInterval: null,
        includeByokInBudgets: false,
        createdAt: expect.any(String),
        updatedAt: null,
      });
      guardrailId = created.data.id;
      expect(new Date(created.data.createdAt).toISOString()).toBe(created.data.createdAt);

      const page = await sdk.guardrails.list();
      expect(page.result).toEqual({ data: [created.data], totalCount: 1 });
      expect(await page.next()).toBeNull();
      expect((await sdk.guardrails.get({ id: guardrailId })).data).toEqual(created.data);
      expect(requested).toEqual(['POST /guardrails', 'GET /guardrails', `GET /guardrails/${guardrailId}`]);
    });

    it('updates it: changed fields only, and a new updatedAt', async () => {
      const before = (await sdk.guardrails.get({ id: guardrailId })).data;
      const updated = await sdk.guardrails.update({
        id: guardrailId,
        updateGuardrailRequest: { description: null, allowedProviders: ['openai'], enforceZdr: false },
      });

      expect(updated.data).toEqual({ ...before, description: null, allowedProviders: ['openai'], enforceZdr: false, updatedAt: expect.any(String) });
      expect(Date.parse(updated.data.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(before.createdAt));
    });

    it('assigns keys in bulk and removes them again, with the counts', async () => {
      const [workspaceHash, personalHash] = keyHashes();
      const assigned = await sdk.guardrails.bulkAssignKeys({ id: guardrailId, bulkAssignKeysRequest: { keyHashes: [workspaceHash!, personalHash!] } });
      expect(assigned).toEqual({ assignedCount: 2 });
      expect((await raw(`/keys/${workspaceHash}`)).data.guardrail_ids).toEqual([guardrailId]);
      // Already assigned: nothing new.
      expect(await sdk.guardrails.bulkAssignKeys({ id: guardrailId, bulkAssignKeysRequest: { keyHashes: [workspaceHash!] } })).toEqual({ assignedCount: 0 });

      const unassigned = await sdk.guardrails.bulkUnassignKeys({ id: guardrailId, bulkUnassignKeysRequest: { keyHashes: [workspaceHash!, personalHash!] } });
      expect(unassigned).toEqual({ unassignedCount: 2 });
      expect((await raw(`/keys/${personalHash}`)).data.guardrail_ids).toEqual([]);
      expect(requested.filter((line) => line.startsWith('POST'))).toEqual([
        `POST /guardrails/${guardrailId}/assignments/keys`,
        `POST /guardrails/${guardrailId}/assignments/keys`,
        `POST /guardrails/${guardrailId}/assignments/keys/remove`,
      ]);
    });

    it("parses modelgate's errors into the SDK's error classes", async () => {
      const tooLong = await sdk.guardrails.create({ createGuardrailRequest: { name: 'x'.repeat(201) } }).catch((error: unknown) => error);
      expect(tooLong).toBeInstanceOf(BadRequestResponseError);
      expect((tooLong as BadRequestResponseError).error).toEqual({ code: 400, message: 'Invalid name: must be at most 200 characters', metadata: { parameter: 'name' } });
    });

    it('deletes it; reading it afterwards is a NotFoundResponseError', async () => {
      expect(await sdk.guardrails.delete({ id: guardrailId })).toEqual({ deleted: true });

      const gone = await sdk.guardrails.get({ id: guardrailId }).catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(NotFoundResponseError);
      expect((gone as NotFoundResponseError).statusCode).toBe(404);
      expect((gone as NotFoundResponseError).error).toEqual({ code: 404, message: expect.any(String) });
      expect((await sdk.guardrails.list()).result).toEqual({ data: [], totalCount: 0 });
    });
  });

  describe('guardrails: pages and the workspace filter', () => {
    let ids: string[];

    beforeAll(async () => {
      ids = [];
      for (const [name, scope] of [['first', workspaceId], ['second', undefined], ['third', workspaceId]] as const) {
        ids.push((await sdk.guardrails.create({ createGuardrailRequest: { name, ...(scope ? { workspaceId: scope } : {}) } })).data.id);
      }
    });
    afterAll(async () => {
      for (const id of ids) await sdk.guardrails.delete({ id });
    });

    it('pages through with the paginator: every guardrail once, and an end', async () => {
      const seen: string[] = [];
      for await (const page of await sdk.guardrails.list({ limit: 2 })) {
        expect(page.result.totalCount).toBe(3);
        seen.push(...page.result.data.map((guardrail) => guardrail.id));
      }

      expect(seen.sort()).toEqual([...ids].sort());
      expect(requested).toEqual(['GET /guardrails?limit=2&offset=0', 'GET /guardrails?limit=2&offset=2']);
    });

    it('lists the guardrails of one workspace only', async () => {
      const page = await sdk.guardrails.list({ workspaceId });

      expect(page.result.data.map((guardrail) => guardrail.name).sort()).toEqual(['first', 'third']);
      expect(page.result.totalCount).toBe(2);
      expect(requested).toEqual([`GET /guardrails?limit=50&offset=0&workspace_id=${workspaceId}`]);
    });

    it('refuses a page size over 100 with a 400 the SDK parses', async () => {
      const refused = await sdk.guardrails.list({ limit: 101 }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestResponseError);
      expect((refused as BadRequestResponseError).error).toEqual({ code: 400, message: 'Invalid limit: must be an integer from 1 to 100', metadata: { parameter: 'limit' } });
    });
  });

  describe('guardrails: key assignments listed, per guardrail and for all', () => {
    let first: string;
    let second: string;
    const workspaceHash = () => hashApiKey(service.runtime.demo.keys.workspace);
    const personalHash = () => hashApiKey(service.runtime.demo.keys.personal);

    beforeAll(async () => {
      first = (await sdk.guardrails.create({ createGuardrailRequest: { name: 'first' } })).data.id;
      second = (await sdk.guardrails.create({ createGuardrailRequest: { name: 'second' } })).data.id;
      await sdk.guardrails.bulkAssignKeys({ id: first, bulkAssignKeysRequest: { keyHashes: [workspaceHash(), personalHash()] } });
      await sdk.guardrails.bulkAssignKeys({ id: second, bulkAssignKeysRequest: { keyHashes: [workspaceHash()] } });
    });
    afterAll(async () => {
      for (const id of [first, second]) await sdk.guardrails.delete({ id });
    });

    it("lists one guardrail's assignments: the answer parsed, each with its key's name and label", async () => {
      const page = await sdk.guardrails.listGuardrailKeyAssignments({ id: first });

      const keys = (await raw('/keys')).data as { hash: string; name: string; label: string }[];
      const expected = [workspaceHash(), personalHash()].map((hash) => {
        const key = keys.find((k) => k.hash === hash)!;
        return { id: expect.stringMatching(/^[0-9a-f-]{36}$/), keyHash: hash, guardrailId: first, keyName: key.name, keyLabel: key.label, assignedBy: null, createdAt: expect.any(String) };
      });
      expect(page.result.data).toEqual(expect.arrayContaining(expected));
      expect(page.result.totalCount).toBe(2);
      expect(new Set(page.result.data.map((assignment) => assignment.id)).size).toBe(2);
      // A request is given (the id), so the SDK sends its default page.
      expect(requested).toEqual([`GET /guardrails/${first}/assignments/keys?limit=50&offset=0`]);
    });

    it('lists every assignment of the organization, page by page with the paginator', async () => {
      const all = await sdk.guardrails.listKeyAssignments();
      expect(all.result.data.map((assignment) => `${assignment.guardrailId} ${assignment.keyHash}`).sort()).toEqual(
        [`${first} ${workspaceHash()}`, `${first} ${personalHash()}`, `${second} ${workspaceHash()}`].sort(),
      );

      requested = [];
      const seen: string[] = [];
      for await (const page of await sdk.guardrails.listKeyAssignments({ limit: 2 })) seen.push(...page.result.data.map((assignment) => assignment.id));
      expect(seen.sort()).toEqual(all.result.data.map((assignment) => assignment.id).sort());
      expect(requested).toEqual(['GET /guardrails/assignments/keys?limit=2&offset=0', 'GET /guardrails/assignments/keys?limit=2&offset=2']);
    });

    it('keeps an assignment id across reads, and drops an assignment once it is removed', async () => {
      const before = (await sdk.guardrails.listGuardrailKeyAssignments({ id: first })).result.data;
      await sdk.guardrails.bulkUnassignKeys({ id: first, bulkUnassignKeysRequest: { keyHashes: [personalHash()] } });

      const after = (await sdk.guardrails.listGuardrailKeyAssignments({ id: first })).result.data;
      expect(after).toEqual(before.filter((assignment) => assignment.keyHash !== personalHash()));
    });

    it('answers an unknown guardrail with a 404', async () => {
      const missing = await service.call('/guardrails/00000000-0000-4000-8000-000000000000/assignments/keys', { key: managementKey });
      expect([missing.status, missing.body]).toEqual([404, { error: { code: 404, message: 'Guardrail 00000000-0000-4000-8000-000000000000 not found' } }]);
    });
  });

  describe('workspaces: every answer parsed, with a default guardrail id derived from the workspace', () => {
    let research: string;
    const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

    it('creates a workspace: the answer parses, default_guardrail_id a uuid derived from the workspace id', async () => {
      const created = await sdk.workspaces.create({ createWorkspaceRequest: { name: 'Research', slug: 'research', description: 'Model evaluations' } });

      research = created.data.id;
      expect(created.data).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Research',
        slug: 'research',
        description: 'Model evaluations',
        defaultGuardrailId: defaultGuardrailId(research),
        defaultTextModel: null,
        defaultImageModel: null,
        defaultProviderSort: null,
        isObservabilityIoLoggingEnabled: false,
        isObservabilityBroadcastEnabled: false,
        isDataDiscountLoggingEnabled: false,
        ioLoggingSamplingRate: 1,
        ioLoggingApiKeyIds: null,
        includeByokInBudgets: false,
        createdAt: expect.any(String),
        updatedAt: null,
        createdBy: null,
      });
      expect(created.data.defaultGuardrailId).toMatch(UUID_V5);
      expect((await raw(`/workspaces/${research}`)).data).toMatchObject({ default_guardrail_id: defaultGuardrailId(research), guardrail_ids: [] });
      expect(requested).toEqual(['POST /workspaces']);
    });

    it('lists and gets workspaces, each with its own default guardrail id', async () => {
      const listed = await sdk.workspaces.list();
      expect(listed.result.data.map((workspace) => [workspace.slug, workspace.defaultGuardrailId]).sort()).toEqual(
        [
          ['default', defaultGuardrailId(workspaceId)],
          ['research', defaultGuardrailId(research)],
        ].sort(),
      );
      expect(listed.result.totalCount).toBe(2);
      expect((await sdk.workspaces.get({ id: workspaceId })).data).toMatchObject({ id: workspaceId, name: 'Default', slug: 'default', defaultGuardrailId: defaultGuardrailId(workspaceId) });
      expect(requested).toEqual(['GET /workspaces', `GET /workspaces/${workspaceId}`]);
    });

    it('serves workspaces page by page, in the order of the whole list', async () => {
      const all = (await raw('/workspaces')).data.map((workspace: { id: string }) => workspace.id);
      const second = await raw('/workspaces?offset=1&limit=1');
      expect(second).toEqual({ data: [expect.objectContaining({ id: all[1] })], total_count: 2 });
      expect(await raw('/workspaces?offset=2')).toEqual({ data: [], total_count: 2 });
    });

    it('updates a workspace: name, slug and description, parsed; a taken slug is a 409', async () => {
      const updated = await sdk.workspaces.update({ id: research, updateWorkspaceRequest: { name: 'Research lab', slug: 'research-lab', description: null } });

      expect(updated.data).toMatchObject({ id: research, name: 'Research lab', slug: 'research-lab', description: null, defaultGuardrailId: defaultGuardrailId(research) });
      expect(Date.parse(updated.data.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(updated.data.createdAt));
      const taken = await service.call(`/workspaces/${research}`, { key: managementKey, method: 'PATCH', body: { slug: 'default' } });
      expect([taken.status, taken.body]).toEqual([409, { error: { code: 409, message: 'A workspace with slug "default" already exists' } }]);
      // The old slug is free again.
      const reused = await sdk.workspaces.create({ createWorkspaceRequest: { name: 'Research', slug: 'research' } });
      expect(await sdk.workspaces.delete({ id: reused.data.id })).toEqual({ deleted: true });
      expect(requested).toEqual([`PATCH /workspaces/${research}`, 'POST /workspaces', `DELETE /workspaces/${reused.data.id}`]);
    });

    it('names a workspace by its id or its slug in get, update and delete, each answer parsed', async () => {
      const created = await sdk.workspaces.create({ createWorkspaceRequest: { name: 'Platform', slug: 'platform' } });
      const id = created.data.id;

      expect((await sdk.workspaces.get({ id: 'platform' })).data).toEqual(created.data);
      const renamed = await sdk.workspaces.update({ id: 'platform', updateWorkspaceRequest: { slug: 'platform-team', description: 'Shared services' } });
      expect(renamed.data).toMatchObject({ id, slug: 'platform-team', description: 'Shared services' });
      expect((await sdk.workspaces.get({ id: 'platform-team' })).data.id).toBe(id);
      // The old slug names nothing once given back.
      const old = await sdk.workspaces.get({ id: 'platform' }).catch((error: unknown) => error);
      expect(old).toBeInstanceOf(NotFoundResponseError);
      expect((old as NotFoundResponseError).error).toEqual({ code: 404, message: 'Workspace platform not found' });

      // A slug may look like a UUID: the id of a workspace wins over another's slug.
      const lookalike = await sdk.workspaces.create({ createWorkspaceRequest: { name: 'Lookalike', slug: workspaceId } });
      expect((await sdk.workspaces.get({ id: workspaceId })).data.id).toBe(workspaceId);
      const unclaimedId = '00000000-0000-4000-8000-000000000001';
      await sdk.workspaces.update({ id: lookalike.data.id, updateWorkspaceRequest: { slug: unclaimedId } });
      expect((await sdk.workspaces.get({ id: unclaimedId })).data.id).toBe(lookalike.data.id);

      expect(await sdk.workspaces.delete({ id: 'platform-team' })).toEqual({ deleted: true });
      expect(await sdk.workspaces.delete({ id: unclaimedId })).toEqual({ deleted: true });
      await expect(sdk.workspaces.get({ id })).rejects.toBeInstanceOf(NotFoundResponseError);
      // Neither an id nor a slug: a 404 that does not repeat the value.
      const odd = await service.call('/workspaces/Not%20A%20Slug', { key: managementKey });
      expect([odd.status, odd.body]).toEqual([404, { error: { code: 404, message: 'Workspace not found' } }]);
      expect(requested).toEqual([
        'POST /workspaces',
        'GET /workspaces/platform',
        'PATCH /workspaces/platform',
        'GET /workspaces/platform-team',
        'GET /workspaces/platform',
        'POST /workspaces',
        `GET /workspaces/${workspaceId}`,
        `PATCH /workspaces/${lookalike.data.id}`,
        `GET /workspaces/${unclaimedId}`,
        'DELETE /workspaces/platform-team',
        `DELETE /workspaces/${unclaimedId}`,
        `GET /workspaces/${id}`,
      ]);
    });

    describe("the default guardrail: written by PATCH /guardrails/{id}, then on every key of the workspace", () => {
      const MODEL = 'openai/gpt-4o-mini';
      const catalogIds = async (key: string) => (await service.call('/models/user', { key })).body.data.map((model: { id: string }) => model.id) as string[];
      let before: { key: string; hash: string };

      it('does not exist before its first write: a 404 that says how to write it', async () => {
        const created = await sdk.apiKeys.create({ requestBody: { name: 'Research CI', workspaceId: research } });
        before = { key: created.key, hash: created.data.hash };
        expect(await catalogIds(before.key)).toContain(MODEL);

        const missing = await sdk.guardrails.get({ id: defaultGuardrailId(research) }).catch((error: unknown) => error);
        expect(missing).toBeInstanceOf(NotFoundResponseError);
        expect((missing as NotFoundResponseError).error).toEqual({
          code: 404,
          message: `Guardrail ${defaultGuardrailId(research)}, the default guardrail of workspace ${research}, has no configuration yet: PATCH it to write one`,
        });
        expect((await sdk.guardrails.list({ workspaceId: research })).result).toEqual({ data: [], totalCount: 0 });
      });

      it('is written by its first update, the answer parsed, and restricts every key of the workspace', async () => {
        const id = defaultGuardrailId(research);
        const written = await sdk.guardrails.update({ id, updateGuardrailRequest: { ignoredModels: [MODEL] } });

        expect(written.data).toEqual({
          id,
          name: 'Default guardrail',
          description: null,
          workspaceId: research,
          allowedModels: null,
          ignoredModels: [MODEL],
          allowedProviders: null,
          ignoredProviders: null,
          enforceZdr: false,
          limitUsd: null,
          resetInterval: null,
          includeByokInBudgets: false,
          createdAt: expect.any(String),
          updatedAt: null,
        });
        expect((await sdk.guardrails.get({ id })).data).toEqual(written.data);
        expect((await raw(`/workspaces/${research}`)).data.guardrail_ids).toEqual([id]);
        // A key from before and a key made after: both under it.
        const after = await sdk.apiKeys.create({ requestBody: { name: 'Research batch', workspaceId: research } });
        expect(await catalogIds(before.key)).not.toContain(MODEL);
        expect(await catalogIds(after.key)).not.toContain(MODEL);
        // Other workspaces are not.
        expect(await catalogIds(service.runtime.demo.keys.workspace)).toContain(MODEL);

        const renamed = await sdk.guardrails.update({ id, updateGuardrailRequest: { name: 'Research defaults' } });
        expect(renamed.data).toMatchObject({ id, name: 'Research defaults', ignoredModels: [MODEL], updatedAt: expect.any(String) });
      });

      it('refuses to delete a workspace that holds keys (400), and the default workspace (403)', async () => {
        const holding = await sdk.workspaces.delete({ id: research }).catch((error: unknown) => error);
        expect(holding).toBeInstanceOf(BadRequestResponseError);
        expect((holding as BadRequestResponseError).error).toEqual({ code: 400, message: `Workspace ${research} has 2 API keys; delete them first` });

        const fallback = await sdk.workspaces.delete({ id: workspaceId }).catch((error: unknown) => error);
        expect(fallback).toBeInstanceOf(ForbiddenResponseError);
        expect((fallback as ForbiddenResponseError).error).toEqual({ code: 403, message: "The organization's default workspace cannot be deleted" });
      });

      it('deletes an empty workspace with its guardrails; reading either afterwards is a 404', async () => {
        const keys = await sdk.apiKeys.list({ workspaceId: research, includeDisabled: true });
        for (const key of keys.data) await sdk.apiKeys.delete({ hash: key.hash });

        expect(await sdk.workspaces.delete({ id: research })).toEqual({ deleted: true });
        await expect(sdk.workspaces.get({ id: research })).rejects.toBeInstanceOf(NotFoundResponseError);
        await expect(sdk.guardrails.get({ id: defaultGuardrailId(research) })).rejects.toBeInstanceOf(NotFoundResponseError);
        expect((await sdk.workspaces.list()).result.data.map((workspace) => workspace.id)).toEqual([workspaceId]);
      });
    });
  });

  describe('API keys: every answer parsed', () => {
    let hash: string;

    it('creates a key, and gets and updates it', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000);
      const created = await sdk.apiKeys.create({ requestBody: { name: 'CI pipeline', workspaceId, expiresAt } });
      expect(created.key).toMatch(/^sk-mg-v1-/);
      expect(created.data).toMatchObject({ name: 'CI pipeline', workspaceId, disabled: false, externalUser: null, usage: 0, limit: null });
      expect(new Date(created.data.expiresAt!).toISOString()).toBe(expiresAt.toISOString());
      hash = created.data.hash;
      expect(hashApiKey(created.key)).toBe(hash);

      expect((await sdk.apiKeys.get({ hash })).data).toMatchObject({ hash, name: 'CI pipeline', workspaceId });
      const updated = await sdk.apiKeys.update({ hash, requestBody: { name: 'CI pipeline (paused)', disabled: true } });
      expect(updated.data).toMatchObject({ hash, name: 'CI pipeline (paused)', disabled: true });
      expect(updated.data.updatedAt).toEqual(expect.any(String));
      expect(requested).toEqual(['POST /keys', `GET /keys/${hash}`, `PATCH /keys/${hash}`]);
    });

    it('lists the keys of a workspace', async () => {
      const listed = await sdk.apiKeys.list({ workspaceId, includeDisabled: true });
      const hashes = listed.data.map((key) => key.hash);
      expect(hashes.sort()).toEqual([hash, hashApiKey(service.runtime.demo.keys.workspace), hashApiKey(service.runtime.demo.keys.personal)].sort());
      expect(requested).toEqual([`GET /keys?include_disabled=true&workspace_id=${workspaceId}`]);
    });

    it("lists the default workspace's keys without a filter, parsed; every key, management keys too, only on request", async () => {
      const elsewhere = (await sdk.workspaces.create({ createWorkspaceRequest: { name: 'Elsewhere', slug: 'elsewhere' } })).data.id;
      const other = (await sdk.apiKeys.create({ requestBody: { name: 'Elsewhere CI', workspaceId: elsewhere } })).data.hash;
      requested = [];

      const listed = await sdk.apiKeys.list();
      expect(listed.data.map((key) => key.hash).sort()).toEqual([hashApiKey(service.runtime.demo.keys.workspace), hashApiKey(service.runtime.demo.keys.personal)].sort());
      expect(listed.data.every((key) => key.workspaceId === workspaceId)).toBe(true);
      expect((await sdk.apiKeys.list({ workspaceId: elsewhere })).data.map((key) => [key.hash, key.workspaceId])).toEqual([[other, elsewhere]]);
      expect(requested).toEqual(['GET /keys', `GET /keys?workspace_id=${elsewhere}`]);

      // The disabled key is left out without include_disabled.
      const management = [service.runtime.demo.keys.managementReadWrite, service.runtime.demo.keys.managementReadOnly].map(hashApiKey);
      const everything = (await raw('/keys?include_disabled=true&include_management=true')).data as { hash: string; kind: string; workspace_id: string }[];
      expect(everything.filter((key) => key.kind === 'management').map((key) => [key.hash, key.workspace_id])).toEqual(
        expect.arrayContaining(management.map((managementHash) => [managementHash, workspaceId])),
      );
      expect(everything.map((key) => key.hash)).toEqual(expect.arrayContaining([hash, other]));

      await sdk.apiKeys.delete({ hash: other });
      await sdk.workspaces.delete({ id: elsewhere });
    });

    it('skips keys with offset, oldest first; a negative or non-integer offset is a 400', async () => {
      const all = (await sdk.apiKeys.list({ includeDisabled: true })).data;
      expect(all.length).toBeGreaterThanOrEqual(3);
      requested = [];

      expect((await sdk.apiKeys.list({ includeDisabled: true, offset: 1 })).data).toEqual(all.slice(1));
      expect((await sdk.apiKeys.list({ offset: all.length })).data).toEqual([]);
      expect((await sdk.apiKeys.list({ offset: 0, workspaceId })).data).toEqual(all.filter((key) => !key.disabled));
      expect(requested).toEqual(['GET /keys?include_disabled=true&offset=1', `GET /keys?offset=${all.length}`, `GET /keys?offset=0&workspace_id=${workspaceId}`]);

      const negative = await sdk.apiKeys.list({ offset: -1 }).catch((error: unknown) => error);
      expect(negative).toBeInstanceOf(BadRequestResponseError);
      expect((negative as BadRequestResponseError).error).toEqual({
        code: 400,
        message: `Invalid offset: must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`,
        metadata: { parameter: 'offset' },
      });
      for (const value of ['1.5', 'one', '']) {
        const refused = await service.call(`/keys?offset=${value}`, { key: managementKey });
        expect([refused.status, refused.body.error.metadata]).toEqual([400, { parameter: 'offset' }]);
      }
    });

    it("gets and updates a management key, parsed: its workspace_id names the default workspace, as the public shape requires one", async () => {
      const created = await service.call('/keys', { key: managementKey, method: 'POST', body: { name: 'Provisioning', kind: 'management', access_level: 'read-only' } });
      const managementHash = created.body.data.hash as string;
      expect(created.body.data).toMatchObject({ kind: 'management', workspace_id: workspaceId });

      const read = await sdk.apiKeys.get({ hash: managementHash });
      expect(read.data).toMatchObject({ hash: managementHash, name: 'Provisioning', workspaceId, disabled: false, externalUser: null });
      const updated = await sdk.apiKeys.update({ hash: managementHash, requestBody: { name: 'Provisioning (old)' } });
      expect(updated.data).toMatchObject({ hash: managementHash, name: 'Provisioning (old)', workspaceId });
      // Still not a key of the default workspace's list.
      expect((await sdk.apiKeys.list({ workspaceId })).data.map((key) => key.hash)).not.toContain(managementHash);
      expect(await sdk.apiKeys.delete({ hash: managementHash })).toEqual({ deleted: true });
      expect(requested).toEqual([`GET /keys/${managementHash}`, `PATCH /keys/${managementHash}`, `GET /keys?workspace_id=${workspaceId}`, `DELETE /keys/${managementHash}`]);
    });

    it('deletes it: that answer is parsed', async () => {
      expect(await sdk.apiKeys.delete({ hash })).toEqual({ deleted: true });
      const gone = await sdk.apiKeys.get({ hash }).catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(NotFoundResponseError);
    });
  });

  describe('spending limits (docs/limits.md): every answer parsed', () => {
    it("sets a key's limit on create and update, and reads it from get, list and the key's own metadata", async () => {
      const created = await sdk.apiKeys.create({ requestBody: { name: 'Capped', workspaceId, limit: 20, limitReset: 'monthly', includeByokInLimit: true } });
      const { hash } = created.data;
      const limits = { limit: 20, limitRemaining: 20, limitReset: 'monthly', includeByokInLimit: true };
      expect(created.data).toMatchObject(limits);
      expect((await sdk.apiKeys.get({ hash })).data).toMatchObject(limits);
      expect((await sdk.apiKeys.list({ workspaceId })).data.find((key) => key.hash === hash)).toMatchObject(limits);
      const own = new OpenRouter({ apiKey: created.key, serverURL: service.runtime.baseUrl, retryConfig: { strategy: 'none' } });
      expect((await own.apiKeys.getCurrentKeyMetadata()).data).toMatchObject(limits);

      const updated = await sdk.apiKeys.update({ hash, requestBody: { limit: 7.5, limitReset: 'daily', includeByokInLimit: false } });
      expect(updated.data).toMatchObject({ limit: 7.5, limitRemaining: 7.5, limitReset: 'daily', includeByokInLimit: false });
      const removed = await sdk.apiKeys.update({ hash, requestBody: { limit: null } });
      expect(removed.data).toMatchObject({ limit: null, limitRemaining: null, limitReset: null });

      const refused = await sdk.apiKeys.update({ hash, requestBody: { limitReset: 'weekly' } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestResponseError);
      expect((refused as BadRequestResponseError).error).toEqual({ code: 400, message: 'Invalid limit_reset: needs a limit: give limit with it', metadata: { parameter: 'limit_reset' } });
      expect(requested).toEqual(['POST /keys', `GET /keys/${hash}`, `GET /keys?workspace_id=${workspaceId}`, `PATCH /keys/${hash}`, `PATCH /keys/${hash}`, `PATCH /keys/${hash}`]);
      await sdk.apiKeys.delete({ hash });
    });

    it("sets a guardrail's budget on create and update, and removes it with both fields null", async () => {
      const created = await sdk.guardrails.create({ createGuardrailRequest: { name: 'Budgeted', limitUsd: 50, resetInterval: 'weekly', includeByokInBudgets: true } });
      const { id } = created.data;
      expect(created.data).toMatchObject({ limitUsd: 50, resetInterval: 'weekly', includeByokInBudgets: true });
      expect((await sdk.guardrails.get({ id })).data).toEqual(created.data);
      expect((await sdk.guardrails.list()).result.data).toContainEqual(created.data);

      const updated = await sdk.guardrails.update({ id, updateGuardrailRequest: { limitUsd: 60 } });
      expect(updated.data).toMatchObject({ limitUsd: 60, resetInterval: 'weekly' });
      const removed = await sdk.guardrails.update({ id, updateGuardrailRequest: { limitUsd: null, resetInterval: null } });
      expect(removed.data).toMatchObject({ limitUsd: null, resetInterval: null });

      const half = await sdk.guardrails.update({ id, updateGuardrailRequest: { resetInterval: 'daily' } }).catch((error: unknown) => error);
      expect(half).toBeInstanceOf(BadRequestResponseError);
      expect((half as BadRequestResponseError).error).toEqual({
        code: 400,
        message: 'Invalid limit_usd: is required with reset_interval: a guardrail budget has both',
        metadata: { parameter: 'limit_usd' },
      });
      await sdk.guardrails.delete({ id });
    });

    it("sets, reads, lists and deletes a workspace's budgets with the workspaces methods", async () => {
      const workspace = (await sdk.workspaces.create({ createWorkspaceRequest: { name: 'Budgets', slug: 'budgets' } })).data;
      requested = [];

      const monthly = await sdk.workspaces.setBudget({ workspaceRef: 'budgets', interval: 'monthly', upsertWorkspaceBudgetRequest: { limitUsd: 100, includeByokInBudgets: true } });
      expect(monthly).toEqual({
        data: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), workspaceId: workspace.id, limitUsd: 100, resetInterval: 'monthly', createdAt: expect.any(String), updatedAt: expect.any(String) },
        includeByokInBudgets: true,
      });
      const lifetime = await sdk.workspaces.setBudget({ workspaceRef: workspace.id, interval: 'lifetime', upsertWorkspaceBudgetRequest: { limitUsd: 500 } });
      expect(lifetime.data).toMatchObject({ limitUsd: 500, resetInterval: null });
      expect(await sdk.workspaces.getBudget({ workspaceRef: 'budgets', interval: 'monthly' })).toEqual(monthly);
      expect(await sdk.workspaces.listBudgets({ workspaceRef: 'budgets' })).toEqual({ data: [monthly.data, lifetime.data], includeByokInBudgets: true });
      expect((await sdk.workspaces.get({ id: 'budgets' })).data.includeByokInBudgets).toBe(true);

      const narrower = await sdk.workspaces.setBudget({ workspaceRef: 'budgets', interval: 'weekly', upsertWorkspaceBudgetRequest: { limitUsd: 100 } }).catch((error: unknown) => error);
      expect(narrower).toBeInstanceOf(BadRequestResponseError);
      expect((narrower as BadRequestResponseError).error.metadata).toEqual({ parameter: 'limit_usd' });

      expect(await sdk.workspaces.deleteBudget({ workspaceRef: 'budgets', interval: 'monthly' })).toEqual({ deleted: true });
      // Already gone: deleted all the same.
      expect(await sdk.workspaces.deleteBudget({ workspaceRef: 'budgets', interval: 'monthly' })).toEqual({ deleted: true });
      await expect(sdk.workspaces.getBudget({ workspaceRef: 'budgets', interval: 'monthly' })).rejects.toBeInstanceOf(NotFoundResponseError);
      expect(requested).toEqual([
        'PUT /workspaces/budgets/budgets/monthly',
        `PUT /workspaces/${workspace.id}/budgets/lifetime`,
        'GET /workspaces/budgets/budgets/monthly',
        'GET /workspaces/budgets/budgets',
        'GET /workspaces/budgets',
        'PUT /workspaces/budgets/budgets/weekly',
        'DELETE /workspaces/budgets/budgets/monthly',
        'DELETE /workspaces/budgets/budgets/monthly',
        'GET /workspaces/budgets/budgets/monthly',
      ]);
      expect(await sdk.workspaces.delete({ id: workspace.id })).toEqual({ deleted: true });
    });
  });
});
