import { BadRequestResponseError, ForbiddenResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { defaultGuardrailId } from '../../../lambdas/accounts/derived-ids';
import { useManagementSdk } from '../../support/management-sdk';

/**
 * The SDK parses every answer here. Workspaces used to be refused: they carried
 * `default_guardrail_id: null` where the public `Workspace` requires a uuid (now derived from
 * the workspace id, the default guardrail written on first PATCH).
 */
describe('the official SDK against the management API', () => {
  const api = useManagementSdk();
  const { raw } = api;

  describe('workspaces: every answer parsed, with a default guardrail id derived from the workspace', () => {
    let research: string;
    const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

    it('creates a workspace: the answer parses, default_guardrail_id a uuid derived from the workspace id', async () => {
      const created = await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Research', slug: 'research', description: 'Model evaluations' } });

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
      expect(api.requested).toEqual(['POST /workspaces']);
    });

    it('lists and gets workspaces, each with its own default guardrail id', async () => {
      const listed = await api.sdk.workspaces.list();
      expect(listed.result.data.map((workspace) => [workspace.slug, workspace.defaultGuardrailId]).sort()).toEqual(
        [
          ['default', defaultGuardrailId(api.workspaceId)],
          ['research', defaultGuardrailId(research)],
        ].sort(),
      );
      expect(listed.result.totalCount).toBe(2);
      expect((await api.sdk.workspaces.get({ id: api.workspaceId })).data).toMatchObject({ id: api.workspaceId, name: 'Default', slug: 'default', defaultGuardrailId: defaultGuardrailId(api.workspaceId) });
      expect(api.requested).toEqual(['GET /workspaces', `GET /workspaces/${api.workspaceId}`]);
    });

    it('serves workspaces page by page, in the order of the whole list', async () => {
      const all = (await raw('/workspaces')).data.map((workspace: { id: string }) => workspace.id);
      const second = await raw('/workspaces?offset=1&limit=1');
      expect(second).toEqual({ data: [expect.objectContaining({ id: all[1] })], total_count: 2 });
      expect(await raw('/workspaces?offset=2')).toEqual({ data: [], total_count: 2 });
    });

    it('updates a workspace: name, slug and description, parsed; a taken slug is a 409', async () => {
      const updated = await api.sdk.workspaces.update({ id: research, updateWorkspaceRequest: { name: 'Research lab', slug: 'research-lab', description: null } });

      expect(updated.data).toMatchObject({ id: research, name: 'Research lab', slug: 'research-lab', description: null, defaultGuardrailId: defaultGuardrailId(research) });
      expect(Date.parse(updated.data.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(updated.data.createdAt));
      const taken = await api.service.call(`/workspaces/${research}`, { key: api.managementKey, method: 'PATCH', body: { slug: 'default' } });
      expect([taken.status, taken.body]).toEqual([409, { error: { code: 409, message: 'A workspace with slug "default" already exists' } }]);
      // The old slug is free again.
      const reused = await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Research', slug: 'research' } });
      expect(await api.sdk.workspaces.delete({ id: reused.data.id })).toEqual({ deleted: true });
      expect(api.requested).toEqual([`PATCH /workspaces/${research}`, 'POST /workspaces', `DELETE /workspaces/${reused.data.id}`]);
    });

    it('names a workspace by its id or its slug in get, update and delete, each answer parsed', async () => {
      const created = await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Platform', slug: 'platform' } });
      const id = created.data.id;

      expect((await api.sdk.workspaces.get({ id: 'platform' })).data).toEqual(created.data);
      const renamed = await api.sdk.workspaces.update({ id: 'platform', updateWorkspaceRequest: { slug: 'platform-team', description: 'Shared services' } });
      expect(renamed.data).toMatchObject({ id, slug: 'platform-team', description: 'Shared services' });
      expect((await api.sdk.workspaces.get({ id: 'platform-team' })).data.id).toBe(id);
      // The old slug names nothing once given back.
      const old = await api.sdk.workspaces.get({ id: 'platform' }).catch((error: unknown) => error);
      expect(old).toBeInstanceOf(NotFoundResponseError);
      expect((old as NotFoundResponseError).error).toEqual({ code: 404, message: 'Workspace platform not found' });

      // A slug may look like a UUID: the id of a workspace wins over another's slug.
      const lookalike = await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Lookalike', slug: api.workspaceId } });
      expect((await api.sdk.workspaces.get({ id: api.workspaceId })).data.id).toBe(api.workspaceId);
      const unclaimedId = '00000000-0000-4000-8000-000000000001';
      await api.sdk.workspaces.update({ id: lookalike.data.id, updateWorkspaceRequest: { slug: unclaimedId } });
      expect((await api.sdk.workspaces.get({ id: unclaimedId })).data.id).toBe(lookalike.data.id);

      expect(await api.sdk.workspaces.delete({ id: 'platform-team' })).toEqual({ deleted: true });
      expect(await api.sdk.workspaces.delete({ id: unclaimedId })).toEqual({ deleted: true });
      await expect(api.sdk.workspaces.get({ id })).rejects.toBeInstanceOf(NotFoundResponseError);
      // Neither an id nor a slug: a 404 that does not repeat the value.
      const odd = await api.service.call('/workspaces/Not%20A%20Slug', { key: api.managementKey });
      expect([odd.status, odd.body]).toEqual([404, { error: { code: 404, message: 'Workspace not found' } }]);
      expect(api.requested).toEqual([
        'POST /workspaces',
        'GET /workspaces/platform',
        'PATCH /workspaces/platform',
        'GET /workspaces/platform-team',
        'GET /workspaces/platform',
        'POST /workspaces',
        `GET /workspaces/${api.workspaceId}`,
        `PATCH /workspaces/${lookalike.data.id}`,
        `GET /workspaces/${unclaimedId}`,
        'DELETE /workspaces/platform-team',
        `DELETE /workspaces/${unclaimedId}`,
        `GET /workspaces/${id}`,
      ]);
    });

    describe("the default guardrail: written by PATCH /guardrails/{id}, then on every key of the workspace", () => {
      const MODEL = 'openai/gpt-4o-mini';
      const catalogIds = async (key: string) => (await api.service.call('/models/user', { key })).body.data.map((model: { id: string }) => model.id) as string[];
      let before: { key: string; hash: string };

      it('does not exist before its first write: a 404 that says how to write it', async () => {
        const created = await api.sdk.apiKeys.create({ requestBody: { name: 'Research CI', workspaceId: research } });
        before = { key: created.key, hash: created.data.hash };
        expect(await catalogIds(before.key)).toContain(MODEL);

        const missing = await api.sdk.guardrails.get({ id: defaultGuardrailId(research) }).catch((error: unknown) => error);
        expect(missing).toBeInstanceOf(NotFoundResponseError);
        expect((missing as NotFoundResponseError).error).toEqual({
          code: 404,
          message: `Guardrail ${defaultGuardrailId(research)}, the default guardrail of workspace ${research}, has no configuration yet: PATCH it to write one`,
        });
        expect((await api.sdk.guardrails.list({ workspaceId: research })).result).toEqual({ data: [], totalCount: 0 });
      });

      it('is written by its first update, the answer parsed, and restricts every key of the workspace', async () => {
        const id = defaultGuardrailId(research);
        const written = await api.sdk.guardrails.update({ id, updateGuardrailRequest: { ignoredModels: [MODEL] } });

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
        expect((await api.sdk.guardrails.get({ id })).data).toEqual(written.data);
        expect((await raw(`/workspaces/${research}`)).data.guardrail_ids).toEqual([id]);
        // A key from before and a key made after: both under it.
        const after = await api.sdk.apiKeys.create({ requestBody: { name: 'Research batch', workspaceId: research } });
        expect(await catalogIds(before.key)).not.toContain(MODEL);
        expect(await catalogIds(after.key)).not.toContain(MODEL);
        // Other workspaces are not.
        expect(await catalogIds(api.service.runtime.demo.keys.workspace)).toContain(MODEL);

        const renamed = await api.sdk.guardrails.update({ id, updateGuardrailRequest: { name: 'Research defaults' } });
        expect(renamed.data).toMatchObject({ id, name: 'Research defaults', ignoredModels: [MODEL], updatedAt: expect.any(String) });
      });

      it('refuses to delete a workspace that holds keys (400), and the default workspace (403)', async () => {
        const holding = await api.sdk.workspaces.delete({ id: research }).catch((error: unknown) => error);
        expect(holding).toBeInstanceOf(BadRequestResponseError);
        expect((holding as BadRequestResponseError).error).toEqual({ code: 400, message: `Workspace ${research} has 2 API keys; delete them first` });

        const fallback = await api.sdk.workspaces.delete({ id: api.workspaceId }).catch((error: unknown) => error);
        expect(fallback).toBeInstanceOf(ForbiddenResponseError);
        expect((fallback as ForbiddenResponseError).error).toEqual({ code: 403, message: "The organization's default workspace cannot be deleted" });
      });

      it('deletes an empty workspace with its guardrails; reading either afterwards is a 404', async () => {
        const keys = await api.sdk.apiKeys.list({ workspaceId: research, includeDisabled: true });
        for (const key of keys.data) await api.sdk.apiKeys.delete({ hash: key.hash });

        expect(await api.sdk.workspaces.delete({ id: research })).toEqual({ deleted: true });
        await expect(api.sdk.workspaces.get({ id: research })).rejects.toBeInstanceOf(NotFoundResponseError);
        await expect(api.sdk.guardrails.get({ id: defaultGuardrailId(research) })).rejects.toBeInstanceOf(NotFoundResponseError);
        expect((await api.sdk.workspaces.list()).result.data.map((workspace) => workspace.id)).toEqual([api.workspaceId]);
      });
    });
  });
});
