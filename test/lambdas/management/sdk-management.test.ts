import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { BadRequestResponseError, NotFoundResponseError, ResponseValidationError } from '@openrouter/sdk/models/errors';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
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
 * Where the SDK refuses an answer, the test holds the refusal to its exact zod issues: zod
 * reports every field it refuses, so nothing else in the answer differs from the SDK's types.
 * The refusals come from two sources:
 * - `default_guardrail_id`: the SDK (like the public document) types it as a string;
 *   modelgate's workspaces have no default guardrail and send null (schemas.ts ADAPTED.Workspace);
 * - management keys in an unfiltered key list: the SDK's `workspace_id` is a plain string,
 *   while a management key belongs to no workspace and has `workspace_id: null` (KEY_ADAPTATION).
 *   (Keys carry `external_user: null`, which the SDK requires: its document is newer than the
 *   copy in test/fixtures.)
 */
describe('the official SDK against the management API', () => {
  let service: TestService;
  let sdk: OpenRouter;
  let managementKey: string;
  let workspaceId: string;
  /** `METHOD path?query` of every request the SDK sent, in order. */
  let requested: string[];

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

  /** The SDK's refusal of an answer: its zod issues as `path: message`, and the body as sent. */
  async function refusal(call: Promise<unknown>): Promise<{ issues: string[]; status: number; body: any }> {
    const error = await call.then(
      () => new Error('the SDK accepted the answer'),
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ResponseValidationError);
    const refused = error as ResponseValidationError;
    const { issues } = refused.cause as { issues: { path: PropertyKey[]; message: string }[] };
    return { issues: issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).sort(), status: refused.statusCode, body: JSON.parse(refused.body) };
  }
  const NULL_STRING = 'Invalid input: expected string, received null';

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

  describe('workspaces: refused only for default_guardrail_id null', () => {
    it('creates a workspace; the SDK refuses the answer for default_guardrail_id alone', async () => {
      const { issues, status, body } = await refusal(
        sdk.workspaces.create({ createWorkspaceRequest: { name: 'Research', slug: 'research', description: 'Model evaluations' } }),
      );

      expect(issues).toEqual([`data.default_guardrail_id: ${NULL_STRING}`]);
      expect(status).toBe(201);
      expect(body.data).toMatchObject({ name: 'Research', slug: 'research', description: 'Model evaluations', default_guardrail_id: null, guardrail_ids: [] });
      expect((await raw(`/workspaces/${body.data.id}`)).data).toEqual(body.data);
      expect(requested).toEqual(['POST /workspaces']);
    });

    it('lists and gets workspaces with the same single refusal per workspace', async () => {
      const listed = await refusal(sdk.workspaces.list());
      expect(listed.body.data.map((workspace: { slug: string }) => workspace.slug).sort()).toEqual(['default', 'research']);
      expect(listed.issues).toEqual([0, 1].map((i) => `Result.data.${i}.default_guardrail_id: ${NULL_STRING}`));

      const one = await refusal(sdk.workspaces.get({ id: workspaceId }));
      expect(one.issues).toEqual([`data.default_guardrail_id: ${NULL_STRING}`]);
      expect(one.body.data).toMatchObject({ id: workspaceId, name: 'Default', slug: 'default' });
      expect(requested).toEqual(['GET /workspaces', `GET /workspaces/${workspaceId}`]);
    });

    it('serves workspaces page by page, in the order of the whole list', async () => {
      const all = (await raw('/workspaces')).data.map((workspace: { id: string }) => workspace.id);
      const second = await raw('/workspaces?offset=1&limit=1');
      expect(second).toEqual({ data: [expect.objectContaining({ id: all[1] })], total_count: 2 });
      expect(await raw('/workspaces?offset=2')).toEqual({ data: [], total_count: 2 });
    });
  });

  describe('API keys: every answer parsed, but a list holding management keys', () => {
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

    it('lists all keys: refused for the management keys\' null workspace_id alone', async () => {
      const { issues, body } = await refusal(sdk.apiKeys.list());

      const management = [service.runtime.demo.keys.managementReadWrite, service.runtime.demo.keys.managementReadOnly].map(hashApiKey);
      const expected = body.data.flatMap((key: { workspace_id: string | null }, i: number) => (key.workspace_id === null ? [`data.${i}.workspace_id: ${NULL_STRING}`] : []));
      expect(body.data.filter((key: { workspace_id: string | null }) => key.workspace_id === null).map((key: { hash: string }) => key.hash).sort()).toEqual(management.sort());
      expect(issues).toEqual(expected.sort());
      // The disabled key is left out without include_disabled.
      expect(body.data.map((key: { hash: string }) => key.hash)).not.toContain(hash);
    });

    it('deletes it: that answer is parsed', async () => {
      expect(await sdk.apiKeys.delete({ hash })).toEqual({ deleted: true });
      const gone = await sdk.apiKeys.get({ hash }).catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(NotFoundResponseError);
    });
  });
});
