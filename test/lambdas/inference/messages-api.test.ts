import Anthropic from '@anthropic-ai/sdk';
import { startTestService, type TestService } from '../../support/local-service';
import { CLAUDE, startProviderApis, type ProviderApis } from '../../support/provider-apis';

const MODEL = 'openai/gpt-4o-mini';
const weather = { name: 'weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

/** What a key has spent, in USD, as `GET /key` says. */
const spent = async (service: TestService, key: string) => (await service.call('/key', { key })).body.data.usage as number;

/**
 * `POST /messages`, Anthropic's Messages API, driven by Anthropic's own client: the same
 * admission, routing, limits and accounting as chat completions, in Anthropic's shapes.
 */
describe('POST /messages with the Anthropic client', () => {
  let service: TestService;
  let client: Anthropic;

  beforeAll(async () => {
    service = await startTestService();
    // Anthropic's clients send the key as x-api-key (`apiKey`) or as a bearer token (`authToken`).
    client = new Anthropic({ apiKey: service.runtime.demo.keys.workspace, baseURL: `${service.runtime.baseUrl.replace(/\/v1$/, '')}`, maxRetries: 0 });
  });
  afterAll(() => service?.stop());

  it('answers a message, its usage charged to the key as a chat completion is', async () => {
    const before = await spent(service, service.runtime.demo.keys.workspace);
    const message = await client.messages.create({ model: MODEL, max_tokens: 50, system: 'Be brief.', messages: [{ role: 'user', content: 'one two three' }] });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn', content: [{ type: 'text', text: 'one two three' }] });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 3, cache_read_input_tokens: 0 });
    const cost = (message.usage as unknown as { cost: number }).cost;
    expect(cost).toBeGreaterThan(0);
    expect((await spent(service, service.runtime.demo.keys.workspace)) - before).toBeCloseTo(cost, 12);
  });

  it('streams a tool call as a tool_use block, and takes its result back, with the key as a bearer token', async () => {
    const bearer = new Anthropic({ authToken: service.runtime.demo.keys.workspace, apiKey: null, baseURL: service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    const asked = { model: MODEL, max_tokens: 200, tools: [weather], tool_choice: { type: 'any' as const }, messages: [{ role: 'user' as const, content: 'Weather in Paris?' }] };
    const final = await bearer.messages.stream(asked).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const call = final.content.find((block) => block.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'weather', id: expect.any(String), input: expect.any(Object) });
    const answer = await bearer.messages.create({
      ...asked,
      tool_choice: { type: 'auto' },
      messages: [...asked.messages, { role: 'assistant', content: final.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.type === 'tool_use' ? call!.id : '', content: 'sunny' }] }],
    });
    expect(answer.content.find((block) => block.type === 'text')).toBeDefined();
  });

  it('counts the input tokens of a request it would admit, asking no provider and charging nothing', async () => {
    const before = await spent(service, service.runtime.demo.keys.workspace);
    const short = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'one two three' }] });
    const long = await client.messages.countTokens({ model: MODEL, system: 'Be brief.', tools: [weather], messages: [{ role: 'user', content: 'one two three '.repeat(100) }] });
    expect(short.input_tokens).toBeGreaterThan(0);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 300);
    expect(await spent(service, service.runtime.demo.keys.workspace)).toBe(before);
    await expect(client.messages.countTokens({ model: 'acme/none', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(new Anthropic({ apiKey: 'sk-mg-v1-nope', baseURL: service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 }).messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it("refuses in Anthropic's shapes, so the client raises its typed errors", async () => {
    await expect(new Anthropic({ apiKey: 'sk-mg-v1-nope', baseURL: service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 }).messages.create({ model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(client.messages.create({ model: 'acme/none', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const refused = await service.call('/messages', { method: 'POST', key: service.runtime.demo.keys.workspace, body: { model: MODEL, messages: [{ role: 'user', content: 'x' }] } });
    expect(refused).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'Invalid max_tokens: is required' } } });
    const two = await service.call('/messages', { method: 'POST', key: service.runtime.demo.keys.workspace, headers: { 'x-api-key': 'sk-mg-v1-other' }, body: { model: MODEL, max_tokens: 5, messages: [{ role: 'user', content: 'x' }] } });
    expect(two).toMatchObject({ status: 401, body: { type: 'error', error: { type: 'authentication_error' } } });
  });
});

describe('POST /messages routed to a provider API', () => {
  let apis: ProviderApis;
  beforeAll(async () => {
    apis = await startProviderApis();
  });
  afterAll(() => apis?.stop());

  it("reaches Anthropic and Bedrock in their own APIs, thinking and cache counts coming back in Anthropic's shape", async () => {
    const client = new Anthropic({ apiKey: apis.service.runtime.demo.keys.workspace, baseURL: apis.service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    apis.anthropic.script({ kind: 'thinking', thinking: 'Colours first.', text: 'red', usage: { input: 10, output: 5, cacheRead: 100, cacheWrite: 20 } });
    const message = await client.messages.create({ model: CLAUDE, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'a colour' }], provider: { only: ['anthropic'] } } as never);
    expect(message.content).toEqual([{ type: 'thinking', thinking: 'Colours first.', signature: expect.any(String) }, { type: 'text', text: 'red' }]);
    expect(message.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 });
    expect(apis.anthropic.received[0]!.body).toMatchObject({ model: 'claude-sonnet-5', thinking: { type: 'enabled', budget_tokens: 1024 } });
    apis.bedrock.script({ kind: 'tools', calls: [{ name: 'weather', input: { city: 'Oslo' } }, { name: 'weather', input: { city: 'Lima' } }] });
    const stream = client.messages.stream({ model: CLAUDE, max_tokens: 100, tools: [weather], messages: [{ role: 'user', content: 'Weather?' }], provider: { only: ['amazon-bedrock'] } } as never);
    const final = await stream.finalMessage();
    expect(final.content.filter((block) => block.type === 'tool_use').map((block) => (block.type === 'tool_use' ? block.input : null))).toEqual([{ city: 'Oslo' }, { city: 'Lima' }]);
    expect(final.stop_reason).toBe('tool_use');
  });

  it.each([['anthropic'], ['amazon-bedrock']])('sends %s the request as its client wrote it: redacted thinking, cache points and error flags kept, beta members and server tools left out', async (provider) => {
    const client = new Anthropic({ apiKey: apis.service.runtime.demo.keys.workspace, baseURL: apis.service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    const cached = { type: 'ephemeral' as const };
    const asked = {
      model: CLAUDE,
      max_tokens: 3000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ ...weather, cache_control: cached, defer_loading: true }, { type: 'web_search_20250305', name: 'web_search' }],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'EuoBCoYBGAIi' }, { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' }, caller: { type: 'direct' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'no data' }], is_error: true, cache_control: cached }] },
      ],
      provider: { only: [provider] },
    };
    const message = await client.messages.create(asked as never);
    expect(message.type).toBe('message');
    // Bedrock takes Anthropic's body through InvokeModel for Anthropic's models.
    const received = provider === 'anthropic' ? apis.anthropic.received.at(-1)! : apis.bedrock.received.at(-1)!;
    if (provider === 'amazon-bedrock') expect(received).toMatchObject({ path: expect.stringMatching(/\/invoke$/), body: { anthropic_version: 'bedrock-2023-05-31' } });
    const sent = received.body as { tools: unknown[]; messages: unknown[] };
    expect(sent.tools).toEqual([{ name: 'weather', description: weather.description, input_schema: weather.input_schema, cache_control: cached }]);
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'EuoBCoYBGAIi' }, { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'no data' }], is_error: true, cache_control: cached }] },
    ]);
    expect(received.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 }, ...(provider === 'anthropic' ? { model: 'claude-sonnet-5' } : {}) });
  });

  it("passes Anthropic's redacted thinking on as Anthropic's block, streamed and not", async () => {
    const client = new Anthropic({ apiKey: apis.service.runtime.demo.keys.workspace, baseURL: apis.service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    const asked = { model: CLAUDE, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'think' }], provider: { only: ['anthropic'] } };
    apis.anthropic.script({ kind: 'thinking', thinking: 'Open.', redacted: 'c2VjcmV0', text: 'ok' }, { kind: 'thinking', thinking: 'Open.', redacted: 'c2VjcmV0', text: 'ok' });
    const whole = await client.messages.create(asked as never);
    const streamed = await client.messages.stream(asked as never).finalMessage();
    for (const message of [whole, streamed]) expect(message.content.map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'text']);
    expect(streamed.content[1]).toEqual({ type: 'redacted_thinking', data: 'c2VjcmV0' });
  });

  it("takes what newer clients send: adaptive thinking at the request's effort, and a system turn within the conversation", async () => {
    const client = new Anthropic({ apiKey: apis.service.runtime.demo.keys.workspace, baseURL: apis.service.runtime.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    apis.anthropic.script({ kind: 'thinking', thinking: 'Hmm.', text: 'ok' });
    const asked = {
      model: CLAUDE,
      max_tokens: 10_000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'text', text: 'Tools changed.' }] }],
      provider: { only: ['anthropic'] },
    };
    const message = await client.messages.create(asked as never);
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    const sent = apis.anthropic.received.at(-1)!.body as { thinking: { type: string; budget_tokens: number }; system: unknown; context_management?: unknown };
    // High effort: most of the completion for thinking; the system turn joins the system prompt; the beta field is not sent.
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(JSON.stringify(sent.system)).toContain('Tools changed.');
    expect(sent.context_management).toBeUndefined();
  });
});
