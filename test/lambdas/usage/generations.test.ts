import { HTTPClient, OpenRouter } from '@openrouter/sdk';
import { NotFoundResponseError } from '@openrouter/sdk/models/errors';
import OpenAI from 'openai';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { connectToRuntime } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * Generations: one id per completion, on every chunk and in `X-Generation-Id`, and its stats at
 * `GET /generation?id=` for the key that made it and its organization's management keys, read
 * with the `openai` client and the official SDK as their users do. And `X-Request-Id` on every
 * answer, which the `openai` client reports as `_request_id`.
 *
 * openai/gpt-4o-mini routes to OpenAI at 0.00000015 per prompt and 0.0000006 per completion
 * token; the development provider counts one token per word.
 */
describe('generations and request ids', () => {
  let service: TestService;
  let demo: TestService['runtime']['demo'];
  const sdk = (key: string) =>
    new OpenRouter({ apiKey: key, serverURL: service.runtime.baseUrl, httpClient: new HTTPClient(), retryConfig: { strategy: 'none' } });
  const openai = (key = demo.keys.workspace) => new OpenAI({ apiKey: key, baseURL: service.runtime.baseUrl, maxRetries: 0 });
  const REQUEST = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'one two three' }], user: 'user-7' };

  beforeAll(async () => {
    service = await startTestService();
    demo = service.runtime.demo;
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('names one id in the answer, its header and the stats, with the request id the openai client reports', async () => {
    const { data: completion, response, request_id } = await openai().chat.completions.create(REQUEST).withResponse();
    expect(completion.id).toMatch(/^gen-/);
    expect(response.headers.get('x-generation-id')).toBe(completion.id);
    expect(request_id).toEqual(expect.any(String));
    expect((completion as { _request_id?: string | null })._request_id).toBe(request_id);

    const { data: generation } = await sdk(demo.keys.workspace).generations.getGeneration({ id: completion.id });
    expect(generation).toMatchObject({
      id: completion.id,
      requestId: request_id,
      model: 'openai/gpt-4o-mini',
      providerName: 'OpenAI',
      streamed: false,
      cancelled: false,
      finishReason: 'stop',
      tokensPrompt: 3,
      tokensCompletion: 3,
      isByok: false,
      apiType: 'completions',
      externalUser: 'user-7',
      workspaceId: demo.workspaceId,
    });
    // What the answer said the key was charged, to the last digit.
    expect(generation.totalCost).toBe((completion.usage as { cost?: number }).cost);
    expect(generation.usage).toBe(generation.totalCost);
    expect(generation.latency).toEqual(expect.any(Number));
    expect(Date.parse(generation.createdAt)).not.toBeNaN();
  });

  it('gives every chunk of a stream, the usage chunk included, the one id its header names', async () => {
    const { data: stream, response } = await openai().chat.completions.create({ ...REQUEST, stream: true }).withResponse();
    const ids = new Set<string>();
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      ids.add(chunk.id);
      usage = chunk.usage ?? usage;
    }
    const id = response.headers.get('x-generation-id')!;
    expect([...ids]).toEqual([id]);
    const raw = await service.call(`/generation?id=${id}`, { key: demo.keys.workspace });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(raw.body.data).toMatchObject({ id, streamed: true, tokens_completion: 3, total_cost: (usage as { cost?: number }).cost, api_key_hash: hashApiKey(demo.keys.workspace) });
  });

  it("shows a generation to its key and the organization's management keys, and to no other key", async () => {
    const completion = await openai().chat.completions.create(REQUEST);
    const status = async (key: string) => (await service.call(`/generation?id=${completion.id}`, { key })).status;
    expect(await status(demo.keys.managementReadOnly)).toBe(200);
    expect(await status(demo.keys.managementReadWrite)).toBe(200);
    // The personal key is another key of the same organization: as absent as an id that never was.
    expect(await status(demo.keys.personal)).toBe(404);
    await expect(sdk(demo.keys.personal).generations.getGeneration({ id: completion.id })).rejects.toBeInstanceOf(NotFoundResponseError);
    // Another organization's management key: its generations are its own only.
    const stores = connectToRuntime(service.runtime);
    try {
      const { organization } = await stores.accounts.createOrganization({ name: `Other ${completion.id.slice(-8)}`, plan: 'business' });
      const { secret } = await stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
      expect(await status(secret)).toBe(404);
    } finally {
      stores.destroy();
    }
  });

  it('answers 404 for an id that never was, and 400 without one', async () => {
    for (const id of ['gen-00000000-0000-4000-8000-000000000000', 'chatcmpl-1', 'x'.repeat(256)]) {
      const answer = await service.call(`/generation?id=${encodeURIComponent(id)}`, { key: demo.keys.workspace });
      expect([id, answer.status, answer.body.error.code]).toEqual([id, 404, 404]);
    }
    const missing = await service.call('/generation', { key: demo.keys.workspace });
    expect([missing.status, missing.body.error.message]).toEqual([400, expect.stringContaining('id')]);
  });

  it('carries X-Request-Id on every answer: success, refusal, unknown path, documents', async () => {
    const answers = await Promise.all([
      service.call('/models/user?limit=1', { key: demo.keys.workspace }),
      service.call('/key', { key: 'sk-not-a-key' }),
      service.call('/keys', { key: demo.keys.managementReadOnly }),
      service.call('/oauth/jwks'),
      service.call('/openapi.json'),
      service.call('/no/such/route'),
      service.call('/chat/completions', { key: demo.keys.workspace, method: 'POST', body: { model: 'no/such-model', messages: [] } }),
    ]);
    const ids = answers.map((answer) => answer.headers.get('x-request-id'));
    expect(answers.map((answer, i) => [answer.status, typeof ids[i]])).toEqual([
      [200, 'string'],
      [401, 'string'],
      [200, 'string'],
      [200, 'string'],
      [200, 'string'],
      [404, 'string'],
      [400, 'string'],
    ]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
