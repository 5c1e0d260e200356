import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import OpenAI from 'openai';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { utcDate } from '../../../lambdas/usage/usage';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * Usage attribution (docs/reference.md#keys-and-credentials) through the real HTTP path: completions by the development
 * provider, read back with the official SDK (`apiKeys.getCurrentKeyMetadata`,
 * `analytics.getUserActivity`) and the management API, and fed to the catalog's usage sorts.
 *
 * openai/gpt-4o-mini routes to OpenAI at 0.00000015 per prompt and 0.0000006 per completion
 * token; the development provider counts one token per word.
 */
describe('usage attribution', () => {
  let service: TestService;
  let workspaceKey: string;
  /** The service's clock: the system's, moved ahead by the test where it would otherwise wait. */
  let ahead = 0;
  const clock = { now: () => new Date(Date.now() + ahead) };
  let workspaceHash: string;
  const sdk = (key: string) =>
    new OpenRouter({ apiKey: key, serverURL: service.runtime.baseUrl, httpClient: new HTTPClient(), retryConfig: { strategy: 'none' } });

  beforeAll(async () => {
    service = await startTestService({ clock });
    workspaceKey = service.runtime.demo.keys.workspace;
    workspaceHash = hashApiKey(workspaceKey);
  });
  afterAll(async () => {
    await service?.stop();
  });

  const complete = (model: string, content: string, stream = false, key = workspaceKey) =>
    new OpenAI({ apiKey: key, baseURL: service.runtime.baseUrl, maxRetries: 0 }).chat.completions
      .create({ model, messages: [{ role: 'user', content }], stream })
      .then(async (result) => {
        if (stream) for await (const _chunk of result as AsyncIterable<unknown>) void _chunk;
      });

  it('counts every request of concurrent completions, streamed or not, against the key, priced per docs/reference.md#pricing-and-cost', async () => {
    // 3 prompt + 3 completion tokens: 3 × 0.00000015 + 3 × 0.0000006 = 0.00000225 each.
    await Promise.all(Array.from({ length: 20 }, (_, i) => complete('openai/gpt-4o-mini', 'one two three', i % 2 === 0)));

    // A completion is counted before its answer is complete, and GET /key reads the key's
    // own items consistently: no waiting.
    const current = await sdk(workspaceKey).apiKeys.getCurrentKeyMetadata();
    expect(current.data.usage).toBeCloseTo(20 * 0.00000225, 15);
    expect(current.data.usageDaily).toBeCloseTo(current.data.usage, 15);
    expect(current.data.usageWeekly).toBeCloseTo(current.data.usage, 15);
    expect(current.data.usageMonthly).toBeCloseTo(current.data.usage, 15);
    expect(current.data).toMatchObject({ isManagementKey: false, workspaceId: service.runtime.demo.workspaceId, organizationId: service.runtime.demo.organizationId });

    const key = await service.call(`/keys/${workspaceHash}`, { key: service.runtime.demo.keys.managementReadOnly });
    expect(key.status).toBe(200);
    expect(key.body.data.usage).toBe(current.data.usage);
    const listed = await service.call('/keys', { key: service.runtime.demo.keys.managementReadOnly });
    const personal = listed.body.data.find((k: { hash: string }) => k.hash === hashApiKey(service.runtime.demo.keys.personal));
    expect(personal).toMatchObject({ usage: 0, usage_daily: 0, usage_weekly: 0, usage_monthly: 0 });
  });

  it('lists per-day activity rows by model for management credentials, filtered by date and key', async () => {
    // Recorded before the completion is answered: the activity shows it at once.
    await complete('openai/gpt-4o-mini', 'four five', false, service.runtime.demo.keys.personal);
    const activity = await sdk(service.runtime.demo.keys.managementReadOnly).analytics.getUserActivity({ date: utcDate(new Date()) });
    expect(activity.data).toEqual([
      {
        date: utcDate(new Date()),
        model: 'openai/gpt-4o-mini',
        modelPermaslug: expect.any(String),
        endpointId: 'openai/gpt-4o-mini:openai',
        providerName: 'OpenAI',
        requests: 21,
        promptTokens: 62,
        completionTokens: 62,
        reasoningTokens: 0,
        usage: expect.closeTo(20 * 0.00000225 + 2 * 0.00000015 + 2 * 0.0000006, 15),
        byokUsageInference: 0,
      },
    ]);
    const onlyPersonal = await service.call(`/activity?api_key_hash=${hashApiKey(service.runtime.demo.keys.personal)}`, {
      key: service.runtime.demo.keys.managementReadWrite,
    });
    expect(onlyPersonal.body.data).toEqual([
      expect.objectContaining({ requests: 1, prompt_tokens: 2, completion_tokens: 2, requests_via_api_key: 1, requests_via_federation_policy: {} }),
    ]);
  });

  it.each([
    ['a workspace key', () => workspaceKey, '', 403, 'Operation reserved for management keys'],
    ['a malformed date', () => service.runtime.demo.keys.managementReadOnly, '?date=2026-13-45', 400, null],
    ['a date beyond 30 days', () => service.runtime.demo.keys.managementReadOnly, '?date=2020-01-01', 400, null],
    ['another organization\'s key', () => service.runtime.demo.keys.managementReadOnly, `?api_key_hash=${'f'.repeat(64)}`, 404, `API key ${'f'.repeat(64)} not found`],
  ])('refuses activity for %s', async (_name, key, query, status, message) => {
    const response = await service.call(`/activity${query}`, { key: key() });
    expect(response.status).toBe(status);
    expect(response.body.error.code).toBe(status);
    if (message) expect(response.body.error.message).toBe(message);
  });

  it('answers GET /key for every key kind, a management key included', async () => {
    const management = await service.call('/key', { key: service.runtime.demo.keys.managementReadOnly });
    expect(management.status).toBe(200);
    expect(management.body.data).toMatchObject({ is_management_key: true, workspace_id: null, usage: 0 });
    expect((await service.call('/key', {})).status).toBe(401);
  });

  it('feeds the most-popular and top-weekly sorts with the gateway\'s own traffic, folded once its day is over', async () => {
    // Both have no imported usage; in default order Gemini comes first.
    const order = async (sort: string) => {
      const response = await service.call(`/models/user?sort=${sort}`, { key: workspaceKey });
      const ids = response.body.data.map((m: { id: string }) => m.id);
      return ids.indexOf('bytedance-seed/seed-2.0-code') < ids.indexOf('google/gemini-3.7-flash') ? 'seed first' : 'gemini first';
    };
    expect(await order('most-popular')).toBe('gemini first');
    expect(await order('top-weekly')).toBe('gemini first');
    await complete('bytedance-seed/seed-2.0-code', 'a b c d e f');
    await complete('bytedance-seed/seed-2.0-code', 'a b c d e f');
    await complete('google/gemini-3.7-flash', 'a');
    // Today's traffic counts once its day is over and folded, as the hourly rollup does.
    ahead += 2_500;
    expect(await order('most-popular')).toBe('gemini first');
    ahead += 24 * 3600_000 + 31 * 60_000;
    expect(await service.runtime.rollUpUsage()).toMatchObject({ days: 1, models: expect.any(Number) });
    // The local runtime reads the figures as often as it checks the catalog (every 2 s of its clock,
    // spread over ±20%: past 2.4 s).
    ahead += 2_500;
    expect(await order('most-popular')).toBe('seed first');
    expect(await order('top-weekly')).toBe('seed first');
  });

  it('counts a completion written into a day that a fold under a clock ahead had folded, once the rollup runs on the clock stepped back', async () => {
    const key = service.runtime.demo.keys.personal;
    const usageOf = async () => (await sdk(key).apiKeys.getCurrentKeyMetadata()).data;
    const back = ahead;
    // 40 days ahead: a completion, and the rollup that folds its day (and, with it, every day before).
    ahead = back + 40 * 86_400_000;
    await complete('openai/gpt-4o-mini', 'one two three', false, key);
    ahead += 86_400_000;
    await service.runtime.rollUpUsage();
    const folded = (await usageOf()).usage;
    expect(folded).toBeGreaterThan(0);
    // The clock back: today's completion lands in a day already folded, which GET /key reads from the totals alone.
    ahead = back;
    await complete('openai/gpt-4o-mini', 'one two three', false, key);
    expect(await usageOf()).toMatchObject({ usage: folded, usageDaily: 0 });
    // The rollup on this clock reopens the days folded ahead of it: both completions count, each once.
    await service.runtime.rollUpUsage();
    const reopened = await usageOf();
    expect(reopened.usageDaily).toBeGreaterThan(0);
    expect(reopened.usage).toBeCloseTo(folded + reopened.usageDaily, 15);
    await service.runtime.rollUpUsage();
    expect(await usageOf()).toEqual(reopened);
  });
});
