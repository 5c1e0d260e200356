import { OpenRouter } from '@openrouter/sdk';
import { BadRequestResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { useManagementSdk } from '../../support/management-sdk';

describe('the official SDK against the management API', () => {
  const api = useManagementSdk();

  describe('spending limits (docs/limits.md): every answer parsed', () => {
    it("sets a key's limit on create and update, and reads it from get, list and the key's own metadata", async () => {
      const created = await api.sdk.apiKeys.create({ requestBody: { name: 'Capped', workspaceId: api.workspaceId, limit: 20, limitReset: 'monthly', includeByokInLimit: true } });
      const { hash } = created.data;
      const limits = { limit: 20, limitRemaining: 20, limitReset: 'monthly', includeByokInLimit: true };
      expect(created.data).toMatchObject(limits);
      expect((await api.sdk.apiKeys.get({ hash })).data).toMatchObject(limits);
      expect((await api.sdk.apiKeys.list({ workspaceId: api.workspaceId })).data.find((key) => key.hash === hash)).toMatchObject(limits);
      const own = new OpenRouter({ apiKey: created.key, serverURL: api.service.runtime.baseUrl, retryConfig: { strategy: 'none' } });
      expect((await own.apiKeys.getCurrentKeyMetadata()).data).toMatchObject(limits);

      const updated = await api.sdk.apiKeys.update({ hash, requestBody: { limit: 7.5, limitReset: 'daily', includeByokInLimit: false } });
      expect(updated.data).toMatchObject({ limit: 7.5, limitRemaining: 7.5, limitReset: 'daily', includeByokInLimit: false });
      const removed = await api.sdk.apiKeys.update({ hash, requestBody: { limit: null } });
      expect(removed.data).toMatchObject({ limit: null, limitRemaining: null, limitReset: null });

      const refused = await api.sdk.apiKeys.update({ hash, requestBody: { limitReset: 'weekly' } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestResponseError);
      expect((refused as BadRequestResponseError).error).toEqual({ code: 400, message: 'Invalid limit_reset: needs a limit: give limit with it', metadata: { parameter: 'limit_reset' } });
      expect(api.requested).toEqual(['POST /keys', `GET /keys/${hash}`, `GET /keys?workspace_id=${api.workspaceId}`, `PATCH /keys/${hash}`, `PATCH /keys/${hash}`, `PATCH /keys/${hash}`]);
      await api.sdk.apiKeys.delete({ hash });
    });

    it("sets a guardrail's budget on create and update, and removes it with both fields null", async () => {
      const created = await api.sdk.guardrails.create({ createGuardrailRequest: { name: 'Budgeted', limitUsd: 50, resetInterval: 'weekly', includeByokInBudgets: true } });
      const { id } = created.data;
      expect(created.data).toMatchObject({ limitUsd: 50, resetInterval: 'weekly', includeByokInBudgets: true });
      expect((await api.sdk.guardrails.get({ id })).data).toEqual(created.data);
      expect((await api.sdk.guardrails.list()).result.data).toContainEqual(created.data);

      const updated = await api.sdk.guardrails.update({ id, updateGuardrailRequest: { limitUsd: 60 } });
      expect(updated.data).toMatchObject({ limitUsd: 60, resetInterval: 'weekly' });
      const removed = await api.sdk.guardrails.update({ id, updateGuardrailRequest: { limitUsd: null, resetInterval: null } });
      expect(removed.data).toMatchObject({ limitUsd: null, resetInterval: null });

      const half = await api.sdk.guardrails.update({ id, updateGuardrailRequest: { resetInterval: 'daily' } }).catch((error: unknown) => error);
      expect(half).toBeInstanceOf(BadRequestResponseError);
      expect((half as BadRequestResponseError).error).toEqual({
        code: 400,
        message: 'Invalid limit_usd: is required with reset_interval: a guardrail budget has both',
        metadata: { parameter: 'limit_usd' },
      });
      await api.sdk.guardrails.delete({ id });
    });

    it("sets, reads, lists and deletes a workspace's budgets with the workspaces methods", async () => {
      const workspace = (await api.sdk.workspaces.create({ createWorkspaceRequest: { name: 'Budgets', slug: 'budgets' } })).data;
      api.requested = [];

      const monthly = await api.sdk.workspaces.setBudget({ workspaceRef: 'budgets', interval: 'monthly', upsertWorkspaceBudgetRequest: { limitUsd: 100, includeByokInBudgets: true } });
      expect(monthly).toEqual({
        data: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), workspaceId: workspace.id, limitUsd: 100, resetInterval: 'monthly', createdAt: expect.any(String), updatedAt: expect.any(String) },
        includeByokInBudgets: true,
      });
      const lifetime = await api.sdk.workspaces.setBudget({ workspaceRef: workspace.id, interval: 'lifetime', upsertWorkspaceBudgetRequest: { limitUsd: 500 } });
      expect(lifetime.data).toMatchObject({ limitUsd: 500, resetInterval: null });
      expect(await api.sdk.workspaces.getBudget({ workspaceRef: 'budgets', interval: 'monthly' })).toEqual(monthly);
      expect(await api.sdk.workspaces.listBudgets({ workspaceRef: 'budgets' })).toEqual({ data: [monthly.data, lifetime.data], includeByokInBudgets: true });
      expect((await api.sdk.workspaces.get({ id: 'budgets' })).data.includeByokInBudgets).toBe(true);

      const narrower = await api.sdk.workspaces.setBudget({ workspaceRef: 'budgets', interval: 'weekly', upsertWorkspaceBudgetRequest: { limitUsd: 100 } }).catch((error: unknown) => error);
      expect(narrower).toBeInstanceOf(BadRequestResponseError);
      expect((narrower as BadRequestResponseError).error.metadata).toEqual({ parameter: 'limit_usd' });

      expect(await api.sdk.workspaces.deleteBudget({ workspaceRef: 'budgets', interval: 'monthly' })).toEqual({ deleted: true });
      // Already gone: deleted all the same.
      expect(await api.sdk.workspaces.deleteBudget({ workspaceRef: 'budgets', interval: 'monthly' })).toEqual({ deleted: true });
      await expect(api.sdk.workspaces.getBudget({ workspaceRef: 'budgets', interval: 'monthly' })).rejects.toBeInstanceOf(NotFoundResponseError);
      expect(api.requested).toEqual([
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
      expect(await api.sdk.workspaces.delete({ id: workspace.id })).toEqual({ deleted: true });
    });
  });
});
