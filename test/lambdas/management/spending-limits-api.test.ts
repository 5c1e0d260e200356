import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { defaultGuardrailId } from '../../../lambdas/accounts/derived-ids';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { FixedClock } from '../../support/fixed-clock';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * Spending limits on the management wire (docs/limits.md), as the public API has them: a key's
 * `limit`, a guardrail's `limit_usd` and `reset_interval`, a workspace's budgets. Every answer is
 * held to the OpenAPI document by the test service; the stored caps are read back to pin when
 * each window starts (`since`).
 */
describe('spending limits on the management API', () => {
  const START = '2026-11-25T10:00:00.000Z';
  const clock = new FixedClock(new Date(START));
  let service: TestService;
  let stores: RuntimeStores;
  let admin: string;
  let readOnly: string;
  let workspaceId: string;

  beforeAll(async () => {
    service = await startTestService({ clock });
    stores = connectToRuntime(service.runtime);
    admin = service.runtime.demo.keys.managementReadWrite;
    readOnly = service.runtime.demo.keys.managementReadOnly;
    workspaceId = service.runtime.demo.workspaceId;
  });
  afterAll(async () => {
    stores?.destroy();
    await service?.stop();
  });

  const call = (path: string, method = 'GET', body?: unknown, key = admin) => service.call(path, { key, method, body });
  const refusal = (parameter: string, message: string) => ({ error: { code: 400, message, metadata: { parameter } } });
  const later = (minutes: number) => {
    clock.advance(minutes * 60_000);
    return clock.now().toISOString();
  };

  describe('a key limit', () => {
    let hash: string;
    let secret: string;
    const limitOf = async () => (await stores.accounts.getApiKey(service.runtime.demo.organizationId, hash)).limit;

    it('is set on create and shown on every answer: the whole limit remains before any spend', async () => {
      const created = await call('/keys', 'POST', { name: 'Capped', workspace_id: workspaceId, limit: 25.5, limit_reset: 'weekly', include_byok_in_limit: true });

      expect(created.status).toBe(201);
      const limitFields = { limit: 25.5, limit_remaining: 25.5, limit_reset: 'weekly', include_byok_in_limit: true };
      expect(created.body.data).toMatchObject(limitFields);
      ({ hash } = created.body.data);
      secret = created.body.key;
      expect(await limitOf()).toEqual({ amountUsd: '25.5', reset: 'weekly', since: START });
      expect((await call(`/keys/${hash}`)).body.data).toMatchObject(limitFields);
      expect((await call('/keys')).body.data.find((key: { hash: string }) => key.hash === hash)).toMatchObject(limitFields);
      expect((await call('/key', 'GET', undefined, secret)).body.data).toMatchObject(limitFields);
    });

    it('keeps its window when only the amount changes, and leaves what a patch does not name', async () => {
      const at = later(60);
      const updated = await call(`/keys/${hash}`, 'PATCH', { limit: 30 });

      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ limit: 30, limit_remaining: 30, limit_reset: 'weekly', include_byok_in_limit: true, updated_at: at });
      // The amount changed within the window: the ledger's items this week and next were capped, nothing held yet to refuse.
      expect(await limitOf()).toEqual({ amountUsd: '30', reset: 'weekly', since: START, heldAtChange: { fit: true, periods: ['w2026-11-23', 'w2026-11-30'] } });
      const renamed = await call(`/keys/${hash}`, 'PATCH', { name: 'Capped CI', include_byok_in_limit: false });
      expect(renamed.body.data).toMatchObject({ name: 'Capped CI', limit: 30, limit_reset: 'weekly', include_byok_in_limit: false });
    });

    it('starts a new window when the reset interval changes, and none (all time) for a null one', async () => {
      const daily = later(60);
      expect((await call(`/keys/${hash}`, 'PATCH', { limit_reset: 'daily' })).body.data).toMatchObject({ limit: 30, limit_reset: 'daily' });
      expect(await limitOf()).toEqual({ amountUsd: '30', reset: 'daily', since: daily });

      const lifetime = later(1);
      expect((await call(`/keys/${hash}`, 'PATCH', { limit: 12.345678, limit_reset: null })).body.data).toMatchObject({ limit: 12.345678, limit_remaining: 12.345678, limit_reset: null });
      expect(await limitOf()).toEqual({ amountUsd: '12.345678', reset: null, since: lifetime });
    });

    it('is removed by limit: null, with its reset interval', async () => {
      const removed = await call(`/keys/${hash}`, 'PATCH', { limit: null });

      expect(removed.status).toBe(200);
      expect(removed.body.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null });
      expect(await limitOf()).toBeNull();
      expect((await call('/key', 'GET', undefined, secret)).body.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null });
    });

    it('refuses a reset interval without a limit, stored or given', async () => {
      expect(await call(`/keys/${hash}`, 'PATCH', { limit_reset: 'monthly' })).toMatchObject({ status: 400, body: refusal('limit_reset', 'Invalid limit_reset: needs a limit: give limit with it') });
      expect(await call('/keys', 'POST', { name: 'x', limit_reset: 'daily' })).toMatchObject({ status: 400, body: refusal('limit_reset', 'Invalid limit_reset: needs a limit: give limit with it') });
      expect(await call(`/keys/${hash}`, 'PATCH', { limit: null, limit_reset: 'daily' })).toMatchObject({ status: 400, body: refusal('limit_reset', 'Invalid limit_reset: needs a limit: give limit with it') });
      // A null interval without a limit says nothing wrong: no limit, nothing to reset.
      expect((await call(`/keys/${hash}`, 'PATCH', { limit: null, limit_reset: null })).status).toBe(200);
    });

    it.each([
      ['more than six decimals', '{"limit": 0.0000001}', 'Invalid limit: must have at most 6 decimal places'],
      ['1e-9', '{"limit": 1e-9}', 'Invalid limit: must have at most 6 decimal places'],
      ['1e308', '{"limit": 1e308}', 'Invalid limit: must be a number from 0 to 1000000000, or null'],
      ['a number JSON parses to Infinity', '{"limit": 1e400}', 'Invalid limit: must be a number from 0 to 1000000000, or null'],
      ['a negative amount', '{"limit": -0.01}', 'Invalid limit: must be a number from 0 to 1000000000, or null'],
      ['a numeric string', '{"limit": "5"}', 'Invalid limit: must be a number from 0 to 1000000000, or null'],
      ['a huge string', JSON.stringify({ limit: '9'.repeat(20_000) }), 'Invalid limit: must be a number from 0 to 1000000000, or null'],
      ['an unknown interval', '{"limit": 5, "limit_reset": "yearly"}', 'Invalid limit_reset: must be one of daily, weekly, monthly'],
    ])('refuses %s with a 400 naming the field', async (_case, body, message) => {
      const refused = await call(`/keys/${hash}`, 'PATCH', body);
      expect([refused.status, refused.body]).toEqual([400, refusal(message.slice('Invalid '.length).split(':')[0]!, message)]);
    });

    it('takes -0 as a limit of 0: the key may spend nothing', async () => {
      const zero = await call(`/keys/${hash}`, 'PATCH', '{"limit": -0}');
      expect(zero.body.data).toMatchObject({ limit: 0, limit_remaining: 0, limit_reset: null });
      expect(Object.is(zero.body.data.limit, 0)).toBe(true);
    });

    it('is read by a read-only management key and set only by one that may write', async () => {
      expect((await call(`/keys/${hash}`, 'GET', undefined, readOnly)).body.data.limit).toBe(0);
      const refused = await call(`/keys/${hash}`, 'PATCH', { limit: 5 }, readOnly);
      expect([refused.status, refused.body]).toEqual([403, { error: { code: 403, message: 'This management key is read-only' } }]);
      expect(await call(`/keys/${hash}`, 'DELETE')).toMatchObject({ status: 200 });
    });
  });

  describe('a guardrail budget', () => {
    let id: string;
    const budgetOf = async () => (await stores.accounts.getGuardrail(service.runtime.demo.organizationId, id)).budget;

    it('is set on create with its reset interval and shown on every answer', async () => {
      const at = later(5);
      const created = await call('/guardrails', 'POST', { name: 'Budgeted', limit_usd: 50, reset_interval: 'monthly', include_byok_in_budgets: true });

      expect(created.status).toBe(201);
      id = created.body.data.id;
      const guardrail = {
        id,
        name: 'Budgeted',
        description: null,
        workspace_id: null,
        allowed_models: null,
        ignored_models: null,
        allowed_providers: null,
        ignored_providers: null,
        enforce_zdr: false,
        limit_usd: 50,
        reset_interval: 'monthly',
        include_byok_in_budgets: true,
        created_at: at,
        updated_at: null,
      };
      expect(created.body.data).toEqual(guardrail);
      expect(await budgetOf()).toEqual({ amountUsd: '50', reset: 'monthly', since: at });
      expect((await call(`/guardrails/${id}`)).body.data).toEqual(guardrail);
      expect((await call('/guardrails')).body.data).toContainEqual(guardrail);
    });

    it('keeps its window for a new amount, starts one for a new interval, and leaves it for other changes', async () => {
      const since = (await budgetOf())!.since;
      expect((await call(`/guardrails/${id}`, 'PATCH', { limit_usd: 75.25 })).body.data).toMatchObject({ limit_usd: 75.25, reset_interval: 'monthly' });
      expect(await budgetOf()).toEqual({ amountUsd: '75.25', reset: 'monthly', since });

      const weekly = later(5);
      expect((await call(`/guardrails/${id}`, 'PATCH', { reset_interval: 'weekly' })).body.data).toMatchObject({ limit_usd: 75.25, reset_interval: 'weekly' });
      expect(await budgetOf()).toEqual({ amountUsd: '75.25', reset: 'weekly', since: weekly });

      const renamed = await call(`/guardrails/${id}`, 'PATCH', { description: 'Per key', include_byok_in_budgets: false });
      expect(renamed.body.data).toMatchObject({ description: 'Per key', limit_usd: 75.25, reset_interval: 'weekly', include_byok_in_budgets: false });
    });

    it.each([
      ['a null amount alone', { limit_usd: null }, 'reset_interval', 'Invalid reset_interval: must be null with a null limit_usd: both null remove the budget'],
      ['a null interval alone', { reset_interval: null }, 'limit_usd', 'Invalid limit_usd: must be null with a null reset_interval: both null remove the budget'],
      ['an amount with a null interval', { limit_usd: 5, reset_interval: null }, 'limit_usd', 'Invalid limit_usd: must be null with a null reset_interval: both null remove the budget'],
      ['an amount of 0', { limit_usd: 0 }, 'limit_usd', 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000, or null'],
      ['an amount with too many decimals', { limit_usd: 1.0000001 }, 'limit_usd', 'Invalid limit_usd: must have at most 6 decimal places'],
    ])('refuses %s, which would leave half a budget or a bad one', async (_case, body, parameter, message) => {
      const refused = await call(`/guardrails/${id}`, 'PATCH', body);
      expect([refused.status, refused.body]).toEqual([400, refusal(parameter, message)]);
    });

    it('is removed by both fields null', async () => {
      const removed = await call(`/guardrails/${id}`, 'PATCH', { limit_usd: null, reset_interval: null });

      expect(removed.body.data).toMatchObject({ limit_usd: null, reset_interval: null });
      expect(await budgetOf()).toBeNull();
    });

    it('refuses one field without the other where no budget is stored to complete it', async () => {
      const amountOnly = await call(`/guardrails/${id}`, 'PATCH', { limit_usd: 10 });
      expect([amountOnly.status, amountOnly.body]).toEqual([400, refusal('reset_interval', 'Invalid reset_interval: is required with limit_usd: a guardrail budget has both')]);
      const intervalOnly = await call('/guardrails', 'POST', { name: 'x', reset_interval: 'daily' });
      expect([intervalOnly.status, intervalOnly.body]).toEqual([400, refusal('limit_usd', 'Invalid limit_usd: is required with reset_interval: a guardrail budget has both')]);
      expect(await call(`/guardrails/${id}`, 'DELETE')).toMatchObject({ status: 200 });
    });

    it("is written with a workspace's default guardrail on its first update", async () => {
      const workspace = (await call('/workspaces', 'POST', { name: 'Budgeted defaults' })).body.data.id;
      const written = await call(`/guardrails/${defaultGuardrailId(workspace)}`, 'PATCH', { limit_usd: 3, reset_interval: 'daily' });

      expect(written.status).toBe(200);
      expect(written.body.data).toMatchObject({ id: defaultGuardrailId(workspace), limit_usd: 3, reset_interval: 'daily', include_byok_in_budgets: false });
      expect(await call(`/workspaces/${workspace}`, 'DELETE')).toMatchObject({ status: 200 });
    });
  });

  describe("a workspace's budgets", () => {
    let id: string;
    const budget = (interval: string, limit: number, at: string, budgetId: string | RegExp = expect.stringMatching(/^[0-9a-f-]{36}$/)) => ({
      id: budgetId,
      workspace_id: id,
      limit_usd: limit,
      reset_interval: interval === 'lifetime' ? null : interval,
      created_at: at,
      updated_at: at,
    });

    beforeAll(async () => {
      id = (await call('/workspaces', 'POST', { name: 'Research', slug: 'research' })).body.data.id;
    });

    it('are none at first', async () => {
      const listed = await call('/workspaces/research/budgets', 'GET', undefined, readOnly);
      expect([listed.status, listed.body]).toEqual([200, { data: [], include_byok_in_budgets: false }]);
      const missing = await call('/workspaces/research/budgets/monthly');
      expect([missing.status, missing.body]).toEqual([404, { error: { code: 404, message: `Workspace ${id} has no monthly budget` } }]);
    });

    it('are created by PUT, named by the workspace id or slug, and read back by interval', async () => {
      const at = later(5);
      const monthly = await call('/workspaces/research/budgets/monthly', 'PUT', { limit_usd: 100 });

      expect([monthly.status, monthly.body]).toEqual([200, { data: budget('monthly', 100, at), include_byok_in_budgets: false }]);
      const lifetime = await call(`/workspaces/${id}/budgets/lifetime`, 'PUT', { limit_usd: 1000, include_byok_in_budgets: true });
      expect(lifetime.body).toEqual({ data: budget('lifetime', 1000, at), include_byok_in_budgets: true });
      expect((await call(`/workspaces/${id}/budgets/monthly`, 'GET', undefined, readOnly)).body).toEqual({ data: monthly.body.data, include_byok_in_budgets: true });
      expect((await call('/workspaces/research/budgets')).body).toEqual({ data: [monthly.body.data, lifetime.body.data], include_byok_in_budgets: true });
      // The flag is the workspace's: its own answers show it.
      expect((await call('/workspaces/research')).body.data.include_byok_in_budgets).toBe(true);
    });

    it('keep their id and creation time when a PUT changes the amount', async () => {
      const before = (await call('/workspaces/research/budgets/monthly')).body.data;
      const at = later(5);
      const changed = await call('/workspaces/research/budgets/monthly', 'PUT', { limit_usd: 120.5, include_byok_in_budgets: false });

      expect(changed.body).toEqual({ data: { ...before, limit_usd: 120.5, updated_at: at }, include_byok_in_budgets: false });
      const stored = (await stores.accounts.getWorkspace(service.runtime.demo.organizationId, id)).budgets;
      expect(stored?.monthly).toEqual({ id: before.id, amountUsd: '120.5', createdAt: before.created_at, updatedAt: at, heldAtChange: { fit: true, periods: ['m2026-11', 'm2026-12'] } });
    });

    it.each([
      ['daily', 500, 'Invalid limit_usd: must be less than the monthly budget (120.5): lifetime > monthly > weekly > daily'],
      ['weekly', 120.5, 'Invalid limit_usd: must be less than the monthly budget (120.5): lifetime > monthly > weekly > daily'],
      ['monthly', 1000, 'Invalid limit_usd: must be less than the lifetime budget (1000): lifetime > monthly > weekly > daily'],
      ['lifetime', 100, 'Invalid limit_usd: must be more than the monthly budget (120.5): lifetime > monthly > weekly > daily'],
    ])('keep a wider interval larger: a %s budget of %s is refused', async (interval, limit, message) => {
      const refused = await call(`/workspaces/research/budgets/${interval}`, 'PUT', { limit_usd: limit });
      expect([refused.status, refused.body]).toEqual([400, refusal('limit_usd', message)]);
    });

    it.each([
      ['an amount of 0', '{"limit_usd": 0}', 'limit_usd', 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000'],
      ['-0', '{"limit_usd": -0}', 'limit_usd', 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000'],
      ['1e308', '{"limit_usd": 1e308}', 'limit_usd', 'Invalid limit_usd: must be a number greater than 0 and at most 1000000000'],
      ['1e-9', '{"limit_usd": 1e-9}', 'limit_usd', 'Invalid limit_usd: must have at most 6 decimal places'],
      ['no amount', '{"include_byok_in_budgets": true}', 'limit_usd', 'Invalid limit_usd: is required'],
      ['an unknown field', '{"limit_usd": 5, "reset_interval": "daily"}', 'reset_interval', 'Invalid reset_interval: is not a known field'],
    ])('refuse %s with a 400 naming the field', async (_case, body, parameter, message) => {
      const refused = await call('/workspaces/research/budgets/daily', 'PUT', body);
      expect([refused.status, refused.body]).toEqual([400, refusal(parameter, message)]);
    });

    it('refuse an interval that is none, an unknown workspace, and a read-only key', async () => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const refused = await call('/workspaces/research/budgets/yearly', method, method === 'PUT' ? { limit_usd: 1 } : undefined);
        expect([method, refused.status, refused.body]).toEqual([method, 400, refusal('interval', 'Invalid interval: must be one of daily, weekly, monthly, lifetime')]);
      }
      const unknown = await call('/workspaces/nowhere/budgets/daily', 'PUT', { limit_usd: 1 });
      expect([unknown.status, unknown.body]).toEqual([404, { error: { code: 404, message: 'Workspace nowhere not found' } }]);
      const readOnlyPut = await call('/workspaces/research/budgets/daily', 'PUT', { limit_usd: 1 }, readOnly);
      expect([readOnlyPut.status, readOnlyPut.body]).toEqual([403, { error: { code: 403, message: 'This management key is read-only' } }]);
    });

    it('are removed by DELETE, which answers deleted also for a budget that is not there', async () => {
      const workspaceBefore = (await call('/workspaces/research')).body.data;
      expect(await call('/workspaces/research/budgets/weekly', 'DELETE')).toMatchObject({ status: 200, body: { deleted: true } });
      // Nothing to remove: the workspace is not written.
      expect((await call('/workspaces/research')).body.data.updated_at).toBe(workspaceBefore.updated_at);

      later(5);
      expect(await call(`/workspaces/${id}/budgets/lifetime`, 'DELETE')).toMatchObject({ status: 200, body: { deleted: true } });
      expect((await call('/workspaces/research/budgets/lifetime')).status).toBe(404);
      expect((await call('/workspaces/research/budgets')).body.data.map((each: { reset_interval: string }) => each.reset_interval)).toEqual(['monthly']);
      const gone = await call('/workspaces/00000000-0000-4000-8000-000000000000/budgets/daily', 'DELETE');
      expect(gone.status).toBe(404);
    });

    it('all land when PUTs of different intervals run at once', async () => {
      await call('/workspaces/research/budgets/monthly', 'DELETE');
      const at = later(5);
      const answers = await Promise.all(
        (
          [
            ['daily', 1],
            ['weekly', 5],
            ['monthly', 20],
            ['lifetime', 100],
          ] as const
        ).map(([interval, limit]) => call(`/workspaces/research/budgets/${interval}`, 'PUT', { limit_usd: limit })),
      );

      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      const listed = (await call('/workspaces/research/budgets')).body;
      expect(listed).toEqual({
        data: [budget('daily', 1, at), budget('weekly', 5, at), budget('monthly', 20, at), budget('lifetime', 100, at)],
        include_byok_in_budgets: false,
      });
      expect(new Set(listed.data.map((each: { id: string }) => each.id)).size).toBe(4);
    });

    it("shows the workspace's keys unchanged: a workspace budget is not a key's limit", async () => {
      const created = await call('/keys', 'POST', { name: 'In research', workspace_id: id });
      expect(created.body.data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null, include_byok_in_limit: false });
      await call(`/keys/${hashApiKey(created.body.key)}`, 'DELETE');
    });
  });
});
