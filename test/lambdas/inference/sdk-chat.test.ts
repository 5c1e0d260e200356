import { randomUUID } from 'node:crypto';
import { OpenRouter } from '@openrouter/sdk';
import type { ChatResult, ChatStreamChunk } from '@openrouter/sdk/models';
import OpenAI from 'openai';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { makeIssuer, makePolicy } from '../../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';
import { startScriptedUpstream, type ScriptedUpstream } from '../../support/scripted-upstream';
import { exchangeForm } from '../../../local/exchange-form';

const DEV_MODEL = 'openai/gpt-4o-mini';
/** Routed to the scripted upstream's `first` provider path (DeepSeek), as in upstream-proxy.test.ts. */
const UPSTREAM_MODEL = 'deepseek/deepseek-v4-flash';

/** The SDK's chat.send, non-streamed: the answer as its own zod schema parsed it. */
async function send(sdk: OpenRouter, model: string, content: string): Promise<ChatResult> {
  // The SDK types every answer of send as the union of both kinds; without stream it is a ChatResult.
  return (await sdk.chat.send({ chatRequest: { model, messages: [{ role: 'user', content }] } })) as ChatResult;
}

/** The SDK's chat.send, streamed: every chunk as its own zod schema parsed it. */
async function sendStreamed(sdk: OpenRouter, model: string, content: string, includeUsage = false): Promise<ChatStreamChunk[]> {
  const stream = (await sdk.chat.send({
    chatRequest: { model, messages: [{ role: 'user', content }], stream: true, ...(includeUsage ? { streamOptions: { includeUsage } } : {}) },
  })) as AsyncIterable<ChatStreamChunk>;
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const text = (chunks: readonly ChatStreamChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');

/** What a key has spent, in USD, as `GET /key` says. */
async function spent(service: TestService, key: string): Promise<number> {
  return (await service.call('/key', { key })).body.data.usage as number;
}

/**
 * The usage of an answer, as the SDK parsed it: these tokens, and a cost of exactly what the
 * key's spending grew by, split into its prompt and completion parts, never the caller's own key.
 */
function expectCharged(usage: ChatResult['usage'], tokens: { promptTokens: number; completionTokens: number }, grewBy: number): void {
  expect(usage).toEqual({
    ...tokens,
    totalTokens: tokens.promptTokens + tokens.completionTokens,
    cost: expect.any(Number),
    costDetails: { upstreamInferenceCost: null, upstreamInferencePromptCost: expect.any(Number), upstreamInferenceCompletionsCost: expect.any(Number) },
    isByok: false,
  });
  expect(usage!.cost).toBeCloseTo(grewBy, 15);
  expect(usage!.costDetails!.upstreamInferencePromptCost + usage!.costDetails!.upstreamInferenceCompletionsCost).toBeCloseTo(usage!.cost!, 15);
}

/**
 * The official SDK's `chat.send` parses every answer of `POST /chat/completions` with the
 * public `ChatResult` and `ChatStreamChunk` schemas: the gateway's answers follow them whatever
 * the provider sent (lambdas/inference/public-answer.ts). Before, a provider that left out
 * `system_fingerprint` (the development provider does) made the SDK refuse every answer.
 */
describe('the official SDK on POST /chat/completions', () => {
  describe('through the development provider, which sends no system_fingerprint', () => {
    let service: TestService;
    let stores: RuntimeStores;
    let idp: TestIdentityProvider;
    let accessToken: string;

    beforeAll(async () => {
      service = await startTestService();
      stores = connectToRuntime(service.runtime);
      idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
      const federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
      const organizationId = service.runtime.demo.organizationId;
      const issuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl });
      await federation.createIssuer(issuer);
      const policy = makePolicy({ organizationId, issuerId: issuer.id, subject: 'repo:acme/app', audience: 'https://modelgate.example', apiKeyHash: hashApiKey(service.runtime.demo.keys.workspace) });
      await federation.createPolicy(policy);
      const form = new URLSearchParams(exchangeForm(idp.sign({ sub: 'repo:acme/app', aud: 'https://modelgate.example', jti: randomUUID() }), policy.id));
      const exchanged = await service.call('/oauth/token', { method: 'POST', body: form.toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      expect(exchanged.status).toBe(200);
      accessToken = exchanged.body.access_token;
    });
    afterAll(async () => {
      await idp?.close();
      stores?.destroy();
      await service?.stop();
    });

    const sdkWith = (apiKey: string) => new OpenRouter({ apiKey, serverURL: service.runtime.baseUrl, retryConfig: { strategy: 'none' } });

    it.each([
      ['an API key', () => service.runtime.demo.keys.workspace],
      ['an access token', () => accessToken],
    ])('parses a non-streamed answer with %s: system_fingerprint null, the routed model, the cost charged', async (_name, credential) => {
      const before = await spent(service, service.runtime.demo.keys.workspace);
      const result = await send(sdkWith(credential()), DEV_MODEL, 'hello gateway world');
      const after = await spent(service, service.runtime.demo.keys.workspace);

      expect(result).toEqual({
        id: expect.stringMatching(/^gen-/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: DEV_MODEL,
        systemFingerprint: null,
        choices: [{ index: 0, message: { role: 'assistant', content: 'hello gateway world' }, finishReason: 'stop' }],
        usage: expect.anything(),
      });
      expect(after).toBeGreaterThan(before);
      expectCharged(result.usage, { promptTokens: 3, completionTokens: 3 }, after - before);
    });

    it.each([
      ['an API key', () => service.runtime.demo.keys.workspace],
      ['an access token', () => accessToken],
    ])('parses every chunk of a streamed answer with %s, ending with the usage and its cost unasked', async (_name, credential) => {
      const before = await spent(service, service.runtime.demo.keys.workspace);
      // No streamOptions: the public document says usage is always included.
      const chunks = await sendStreamed(sdkWith(credential()), DEV_MODEL, 'streamed word by word');
      const after = await spent(service, service.runtime.demo.keys.workspace);

      expect(text(chunks)).toBe('streamed word by word');
      expect(new Set(chunks.map((chunk) => chunk.model))).toEqual(new Set([DEV_MODEL]));
      expect(chunks.at(-1)!.choices).toEqual([]);
      expectCharged(chunks.at(-1)!.usage, { promptTokens: 4, completionTokens: 4 }, after - before);
      // One usage chunk, the last: no other chunk carries usage.
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined)).toBe(true);
    });

    it('sends the same usage chunk when the caller asks for it (stream_options.include_usage)', async () => {
      const chunks = await sendStreamed(sdkWith(service.runtime.demo.keys.workspace), DEV_MODEL, 'asked for usage', true);
      expect(chunks.filter((chunk) => chunk.usage)).toHaveLength(1);
      expect(chunks.at(-1)!.usage).toMatchObject({ promptTokens: 3, completionTokens: 3, isByok: false });
    });

    it("says which provider answered, as the public service's answers do", async () => {
      const response = await service.call('/chat/completions', { key: service.runtime.demo.keys.workspace, method: 'POST', body: { model: DEV_MODEL, messages: [{ role: 'user', content: 'x' }] } });

      expect(response.body).toMatchObject({ model: DEV_MODEL, provider: 'OpenAI', system_fingerprint: null });
    });
  });

  describe('through a provider that omits members, adds its own, or sends nulls the public schemas do not allow', () => {
    let upstream: ScriptedUpstream;
    let service: TestService;
    let sdk: OpenRouter;

    beforeAll(async () => {
      upstream = await startScriptedUpstream();
      service = await startTestService({ upstreamTimeoutSeconds: 1, inferenceUpstreams: { deepseek: upstream.baseUrl('first'), '*': upstream.baseUrl('rest') } });
      sdk = new OpenRouter({ apiKey: service.runtime.demo.keys.workspace, serverURL: service.runtime.baseUrl, retryConfig: { strategy: 'none' } });
    });
    afterAll(async () => {
      await service?.stop();
      await upstream?.stop();
    });
    beforeEach(() => upstream.reset());

    const raw = (body: Record<string, unknown>) =>
      service.call('/chat/completions', { key: service.runtime.demo.keys.workspace, method: 'POST', body: { model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'three small words' }], ...body } });

    it('fills in every required member of a bare answer: id, created, object, model, index, role, finish_reason, system_fingerprint', async () => {
      upstream.script('first', { kind: 'answer', shape: 'bare' }, { kind: 'answer', shape: 'bare' });

      const result = await send(sdk, UPSTREAM_MODEL, 'three small words');
      expect(result).toEqual({
        id: expect.stringMatching(/^gen-/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: UPSTREAM_MODEL,
        systemFingerprint: null,
        choices: [{ index: 0, message: { role: 'assistant', content: 'three small words' }, finishReason: null }],
        // A provider that reports no usage is charged the most the request could cost, and the answer says so.
        usage: {
          promptTokens: expect.any(Number),
          completionTokens: expect.any(Number),
          totalTokens: expect.any(Number),
          cost: expect.any(Number),
          costDetails: { upstreamInferenceCost: null, upstreamInferencePromptCost: expect.any(Number), upstreamInferenceCompletionsCost: expect.any(Number) },
          isByok: false,
        },
      });
      expect(result.usage!.promptTokens).toBeGreaterThan(0);
      expect(result.usage!.cost).toBeCloseTo(result.usage!.costDetails!.upstreamInferencePromptCost! + result.usage!.costDetails!.upstreamInferenceCompletionsCost!, 12);
      expect(Math.abs(result.created - Date.now() / 1000)).toBeLessThan(60);

      const response = await raw({});
      expect(response.body).toEqual({
        id: expect.stringMatching(/^gen-/),
        object: 'chat.completion',
        created: expect.any(Number),
        model: UPSTREAM_MODEL,
        provider: 'DeepSeek',
        system_fingerprint: null,
        choices: [{ index: 0, message: { role: 'assistant', content: 'three small words' }, finish_reason: null }],
        usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number), cost: expect.any(Number), cost_details: expect.any(Object), is_byok: false },
      });
      const generation = (await service.call(`/generation?id=${response.body.id}`, { key: service.runtime.demo.keys.workspace })).body.data;
      expect(generation).toMatchObject({ charge_basis: 'maximum_cost', total_cost: response.body.usage.cost });
    });

    it('fills in every chunk of a bare stream, all with one id', async () => {
      upstream.script('first', { kind: 'answer', shape: 'bare' }, { kind: 'answer', shape: 'bare' });

      const chunks = await sendStreamed(sdk, UPSTREAM_MODEL, 'three small words');
      expect(text(chunks)).toBe('three small words');
      expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
        { index: 0, delta: { content: 'three' }, finishReason: null },
        { index: 0, delta: { content: ' small' }, finishReason: null },
        { index: 0, delta: { content: ' words' }, finishReason: null },
      ]);
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === UPSTREAM_MODEL && Number.isInteger(chunk.created))).toBe(true);

      const response = await raw({ stream: true });
      const events = response.text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice(6)));
      expect(events[0]).toEqual({
        id: expect.stringMatching(/^gen-/),
        object: 'chat.completion.chunk',
        created: expect.any(Number),
        model: UPSTREAM_MODEL,
        provider: 'DeepSeek',
        choices: [{ index: 0, delta: { content: 'three' }, finish_reason: null }],
      });
    });

    it("keeps the provider's own members and leaves out the nulls the public schemas do not allow", async () => {
      upstream.script('first', { kind: 'answer', shape: 'extras' }, { kind: 'answer', shape: 'extras' });

      const result = await send(sdk, UPSTREAM_MODEL, 'three small words');
      expect(result.choices[0]!.message.content).toBe('three small words');
      const response = await raw({});
      // The provider's id (`up-2`) gives way to the generation id the answer's header names.
      expect(response.headers.get('x-generation-id')).toMatch(/^gen-/);
      expect(response.body).toEqual({
        id: response.headers.get('x-generation-id'),
        object: 'chat.completion',
        created: 1_700_000_000,
        model: UPSTREAM_MODEL,
        provider: 'DeepSeek',
        system_fingerprint: null,
        x_provider_trace: 'trace-1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'three small words', annotations: [] }, finish_reason: 'stop', native_finish_reason: 'end_turn' }],
        // The provider's own members stay; the cost is the gateway's.
        usage: {
          prompt_tokens: 11,
          completion_tokens: 3,
          total_tokens: 14,
          cost_in_credits: 3,
          cost: expect.any(Number),
          cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: expect.any(Number), upstream_inference_completions_cost: expect.any(Number) },
          is_byok: false,
        },
      });
      expect(response.body.usage.cost).toBeGreaterThan(0);
    });

    it('parses a stream whose every chunk has usage: null and system_fingerprint: null', async () => {
      upstream.script('first', { kind: 'answer', shape: 'extras' }, { kind: 'answer', shape: 'extras' });

      const chunks = await sendStreamed(sdk, UPSTREAM_MODEL, 'three small words', true);
      expect(text(chunks)).toBe('three small words');
      expect(chunks.at(-1)!.usage).toMatchObject({ promptTokens: 11, completionTokens: 3, totalTokens: 14, isByok: false });

      const response = await raw({ stream: true });
      const events = response.text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice(6)));
      expect(new Set(events.map((event) => event.id))).toEqual(new Set([response.headers.get('x-generation-id')]));
      expect(events[0]).toEqual({
        id: response.headers.get('x-generation-id'),
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: UPSTREAM_MODEL,
        provider: 'DeepSeek',
        obfuscation: 'k3',
        choices: [{ index: 0, delta: { content: 'three' }, finish_reason: null }],
      });
    });

    it("passes the provider's mid-stream error on as a chunk the SDK parses, with a numeric code", async () => {
      upstream.script('first', { kind: 'error-event', chunks: 1 });

      const chunks = await sendStreamed(sdk, UPSTREAM_MODEL, 'three small words');
      expect(chunks).toHaveLength(2);
      expect(chunks[1]).toEqual({
        id: expect.stringMatching(/^gen-/),
        object: 'chat.completion.chunk',
        created: expect.any(Number),
        model: UPSTREAM_MODEL,
        choices: [],
        error: { code: 502, message: 'The model is overloaded' },
      });
    });

    it("reports the gateway's own failure after the stream started as a last chunk the SDK and the openai client read", async () => {
      upstream.script('first', { kind: 'cut-off', chunks: 2 }, { kind: 'cut-off', chunks: 2 });

      const chunks = await sendStreamed(sdk, UPSTREAM_MODEL, 'three small words');
      expect(chunks.at(-1)).toEqual({
        id: expect.stringMatching(/^gen-/),
        object: 'chat.completion.chunk',
        created: expect.any(Number),
        model: UPSTREAM_MODEL,
        choices: [],
        error: { code: 502, message: 'Provider DeepSeek ended the stream early' },
      });
      const openai = new OpenAI({ apiKey: service.runtime.demo.keys.workspace, baseURL: service.runtime.baseUrl, maxRetries: 0 });
      await expect(
        (async () => {
          for await (const _chunk of await openai.chat.completions.create({ model: UPSTREAM_MODEL, messages: [{ role: 'user', content: 'x y' }], stream: true })) void _chunk;
        })(),
      ).rejects.toThrow('Provider DeepSeek ended the stream early');
    });
  });
});
