import { BadRequestResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { useManagementSdk } from '../../support/management-sdk';

describe('the official SDK against the management API', () => {
  const api = useManagementSdk();
  const { raw } = api;

  describe('guardrails: every answer parsed', () => {
    let guardrailId: string;
    const keyHashes = () => [hashApiKey(api.service.runtime.demo.keys.workspace), hashApiKey(api.service.runtime.demo.keys.personal)];

    it('creates a guardrail and reads it back from list and get', async () => {
      const created = await api.sdk.guardrails.create({
        createGuardrailRequest: {
          name: 'EU production',
          description: 'Only two providers, zero retention',
          allowedProviders: ['openai', 'anthropic'],
          ignoredModels: ['openai/gpt-4o'],
          enforceZdr: true,
          workspaceId: api.workspaceId,
        },
      });

      expect(created.data).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'EU production',
        description: 'Only two providers, zero retention',
        workspaceId: api.workspaceId,
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

      const page = await api.sdk.guardrails.list();
      expect(page.result).toEqual({ data: [created.data], totalCount: 1 });
      expect(await page.next()).toBeNull();
      expect((await api.sdk.guardrails.get({ id: guardrailId })).data).toEqual(created.data);
      expect(api.requested).toEqual(['POST /guardrails', 'GET /guardrails', `GET /guardrails/${guardrailId}`]);
    });

    it('updates it: changed fields only, and a new updatedAt', async () => {
      const before = (await api.sdk.guardrails.get({ id: guardrailId })).data;
      const updated = await api.sdk.guardrails.update({
        id: guardrailId,
        updateGuardrailRequest: { description: null, allowedProviders: ['openai'], enforceZdr: false },
      });

      expect(updated.data).toEqual({ ...before, description: null, allowedProviders: ['openai'], enforceZdr: false, updatedAt: expect.any(String) });
      expect(Date.parse(updated.data.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(before.createdAt));
    });

    it('assigns keys in bulk and removes them again, with the counts', async () => {
      const [workspaceHash, personalHash] = keyHashes();
      const assigned = await api.sdk.guardrails.bulkAssignKeys({ id: guardrailId, bulkAssignKeysRequest: { keyHashes: [workspaceHash!, personalHash!] } });
      expect(assigned).toEqual({ assignedCount: 2 });
      expect((await raw(`/keys/${workspaceHash}`)).data.guardrail_ids).toEqual([guardrailId]);
      // Already assigned: nothing new.
      expect(await api.sdk.guardrails.bulkAssignKeys({ id: guardrailId, bulkAssignKeysRequest: { keyHashes: [workspaceHash!] } })).toEqual({ assignedCount: 0 });

      const unassigned = await api.sdk.guardrails.bulkUnassignKeys({ id: guardrailId, bulkUnassignKeysRequest: { keyHashes: [workspaceHash!, personalHash!] } });
      expect(unassigned).toEqual({ unassignedCount: 2 });
      expect((await raw(`/keys/${personalHash}`)).data.guardrail_ids).toEqual([]);
      expect(api.requested.filter((line) => line.startsWith('POST'))).toEqual([
        `POST /guardrails/${guardrailId}/assignments/keys`,
        `POST /guardrails/${guardrailId}/assignments/keys`,
        `POST /guardrails/${guardrailId}/assignments/keys/remove`,
      ]);
    });

    it("parses modelgate's errors into the SDK's error classes", async () => {
      const tooLong = await api.sdk.guardrails.create({ createGuardrailRequest: { name: 'x'.repeat(201) } }).catch((error: unknown) => error);
      expect(tooLong).toBeInstanceOf(BadRequestResponseError);
      expect((tooLong as BadRequestResponseError).error).toEqual({ code: 400, message: 'Invalid name: must be at most 200 characters', metadata: { parameter: 'name' } });
    });

    it('deletes it; reading it afterwards is a NotFoundResponseError', async () => {
      expect(await api.sdk.guardrails.delete({ id: guardrailId })).toEqual({ deleted: true });

      const gone = await api.sdk.guardrails.get({ id: guardrailId }).catch((error: unknown) => error);
      expect(gone).toBeInstanceOf(NotFoundResponseError);
      expect((gone as NotFoundResponseError).statusCode).toBe(404);
      expect((gone as NotFoundResponseError).error).toEqual({ code: 404, message: expect.any(String) });
      expect((await api.sdk.guardrails.list()).result).toEqual({ data: [], totalCount: 0 });
    });
  });

  describe('guardrails: pages and the workspace filter', () => {
    let ids: string[];

    beforeAll(async () => {
      ids = [];
      for (const [name, scope] of [['first', api.workspaceId], ['second', undefined], ['third', api.workspaceId]] as const) {
        ids.push((await api.sdk.guardrails.create({ createGuardrailRequest: { name, ...(scope ? { workspaceId: scope } : {}) } })).data.id);
      }
    });
    afterAll(async () => {
      for (const id of ids) await api.sdk.guardrails.delete({ id });
    });

    it('pages through with the paginator: every guardrail once, and an end', async () => {
      const seen: string[] = [];
      for await (const page of await api.sdk.guardrails.list({ limit: 2 })) {
        expect(page.result.totalCount).toBe(3);
        seen.push(...page.result.data.map((guardrail) => guardrail.id));
      }

      expect(seen.sort()).toEqual([...ids].sort());
      expect(api.requested).toEqual(['GET /guardrails?limit=2&offset=0', 'GET /guardrails?limit=2&offset=2']);
    });

    it('lists the guardrails of one workspace only', async () => {
      const page = await api.sdk.guardrails.list({ workspaceId: api.workspaceId });

      expect(page.result.data.map((guardrail) => guardrail.name).sort()).toEqual(['first', 'third']);
      expect(page.result.totalCount).toBe(2);
      expect(api.requested).toEqual([`GET /guardrails?limit=50&offset=0&workspace_id=${api.workspaceId}`]);
    });

    it('refuses a page size over 100 with a 400 the SDK parses', async () => {
      const refused = await api.sdk.guardrails.list({ limit: 101 }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestResponseError);
      expect((refused as BadRequestResponseError).error).toEqual({ code: 400, message: 'Invalid limit: must be an integer from 1 to 100', metadata: { parameter: 'limit' } });
    });
  });

  describe('guardrails: key assignments listed, per guardrail and for all', () => {
    let first: string;
    let second: string;
    const workspaceHash = () => hashApiKey(api.service.runtime.demo.keys.workspace);
    const personalHash = () => hashApiKey(api.service.runtime.demo.keys.personal);

    beforeAll(async () => {
      first = (await api.sdk.guardrails.create({ createGuardrailRequest: { name: 'first' } })).data.id;
      second = (await api.sdk.guardrails.create({ createGuardrailRequest: { name: 'second' } })).data.id;
      await api.sdk.guardrails.bulkAssignKeys({ id: first, bulkAssignKeysRequest: { keyHashes: [workspaceHash(), personalHash()] } });
      await api.sdk.guardrails.bulkAssignKeys({ id: second, bulkAssignKeysRequest: { keyHashes: [workspaceHash()] } });
    });
    afterAll(async () => {
      for (const id of [first, second]) await api.sdk.guardrails.delete({ id });
    });

    it("lists one guardrail's assignments: the answer parsed, each with its key's name and label", async () => {
      const page = await api.sdk.guardrails.listGuardrailKeyAssignments({ id: first });

      const keys = (await raw('/keys')).data as { hash: string; name: string; label: string }[];
      const expected = [workspaceHash(), personalHash()].map((hash) => {
        const key = keys.find((k) => k.hash === hash)!;
        return { id: expect.stringMatching(/^[0-9a-f-]{36}$/), keyHash: hash, guardrailId: first, keyName: key.name, keyLabel: key.label, assignedBy: null, createdAt: expect.any(String) };
      });
      expect(page.result.data).toEqual(expect.arrayContaining(expected));
      expect(page.result.totalCount).toBe(2);
      expect(new Set(page.result.data.map((assignment) => assignment.id)).size).toBe(2);
      // A request is given (the id), so the SDK sends its default page.
      expect(api.requested).toEqual([`GET /guardrails/${first}/assignments/keys?limit=50&offset=0`]);
    });

    it('lists every assignment of the organization, page by page with the paginator', async () => {
      const all = await api.sdk.guardrails.listKeyAssignments();
      expect(all.result.data.map((assignment) => `${assignment.guardrailId} ${assignment.keyHash}`).sort()).toEqual(
        [`${first} ${workspaceHash()}`, `${first} ${personalHash()}`, `${second} ${workspaceHash()}`].sort(),
      );

      api.requested = [];
      const seen: string[] = [];
      for await (const page of await api.sdk.guardrails.listKeyAssignments({ limit: 2 })) seen.push(...page.result.data.map((assignment) => assignment.id));
      expect(seen.sort()).toEqual(all.result.data.map((assignment) => assignment.id).sort());
      expect(api.requested).toEqual(['GET /guardrails/assignments/keys?limit=2&offset=0', 'GET /guardrails/assignments/keys?limit=2&offset=2']);
    });

    it('keeps an assignment id across reads, and drops an assignment once it is removed', async () => {
      const before = (await api.sdk.guardrails.listGuardrailKeyAssignments({ id: first })).result.data;
      await api.sdk.guardrails.bulkUnassignKeys({ id: first, bulkUnassignKeysRequest: { keyHashes: [personalHash()] } });

      const after = (await api.sdk.guardrails.listGuardrailKeyAssignments({ id: first })).result.data;
      expect(after).toEqual(before.filter((assignment) => assignment.keyHash !== personalHash()));
    });

    it('answers an unknown guardrail with a 404', async () => {
      const missing = await api.service.call('/guardrails/00000000-0000-4000-8000-000000000000/assignments/keys', { key: api.managementKey });
      expect([missing.status, missing.body]).toEqual([404, { error: { code: 404, message: 'Guardrail 00000000-0000-4000-8000-000000000000 not found' } }]);
    });
  });
});
