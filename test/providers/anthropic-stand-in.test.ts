import Anthropic from '@anthropic-ai/sdk';
import { startAnthropicStandIn, type AnthropicStandIn } from '../support/providers/anthropic-stand-in';

/** The stand-in as Anthropic's own SDK sees it: each answer and refusal must parse as the real API's. */
const API_KEY = 'sk-ant-test-stand-in-0123456789';
const MODEL = 'claude-sonnet-4-6';
const TOOLS: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
  { name: 'get_time', input_schema: { type: 'object', properties: { zone: { type: 'string' } } } },
];

let standIn: AnthropicStandIn;
let client: Anthropic;

beforeAll(async () => {
  standIn = await startAnthropicStandIn({ apiKey: API_KEY, models: [MODEL, 'claude-haiku-4-5'] });
  client = new Anthropic({ apiKey: API_KEY, baseURL: standIn.sdkBaseUrl, maxRetries: 0 });
});
afterEach(() => standIn.reset());
afterAll(() => standIn.stop());

const ask = (text: string): Anthropic.MessageCreateParamsNonStreaming => ({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: text }] });

/** The API error a request is refused with. */
async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof Anthropic.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
  return error;
}

/** Posts a body as curl would, with `x-api-key` and `anthropic-version` (but the header named by `without`). */
async function post(body: unknown, without?: string): Promise<{ status: number; body: { error?: { type: string; message: string } } & Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' };
  if (without) delete headers[without];
  const response = await fetch(`${standIn.baseUrl}/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('Anthropic Messages stand-in', () => {
  it('answers with an echo of the last user message, counting words as tokens, and takes the SDK headers', async () => {
    const message = await client.messages.create({ ...ask('hello there'), system: 'Be brief.' });

    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_01\w{22}$/);
    expect(message.content).toEqual([{ type: 'text', text: 'echo: hello there' }]);
    expect(message.usage).toMatchObject({ input_tokens: 4, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const { headers } = standIn.received[0]!;
    expect(headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('reports scripted cache usage and stop reason', async () => {
    standIn.script({ kind: 'text', text: 'Cut short', stopReason: 'max_tokens', usage: { input: 12, cacheRead: 900, cacheWrite: 40 } });

    const message = await client.messages.create({
      ...ask('a long story please'),
      system: [{ type: 'text', text: 'You tell stories.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
    });

    expect(message.content).toEqual([{ type: 'text', text: 'Cut short' }]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 2, cache_read_input_tokens: 900, cache_creation_input_tokens: 40 });
  });

  it('accepts x-api-key and refuses a request without anthropic-version', async () => {
    expect(await post(ask('with a key header'))).toMatchObject({ status: 200, body: { content: [{ type: 'text', text: 'echo: with a key header' }] } });

    const missing = await post(ask('no version'), 'anthropic-version');
    expect(missing).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } } });
    expect(await post(ask('no key'), 'x-api-key')).toMatchObject({ status: 401, body: { error: { type: 'authentication_error' } } });
  });

  it('streams two parallel tool calls that the SDK assembles into tool_use blocks', async () => {
    standIn.script({ kind: 'tools', text: 'Let me check.', calls: [{ name: 'get_weather', input: { city: 'Paris' } }, { name: 'get_time', input: { zone: 'Europe/Paris' } }] });

    const stream = client.messages.stream({ ...ask('weather and time in Paris?'), tools: TOOLS });
    const message = await stream.finalMessage();

    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_01/), name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_01/), name: 'get_time', input: { zone: 'Europe/Paris' } },
    ]);
    const [, first, second] = message.content as Anthropic.ToolUseBlock[];
    expect(first!.id).not.toBe(second!.id);
    expect(standIn.received[0]!.body.stream).toBe(true);
  });

  it('sends the events of the real wire, each block with its own index and JSON input in pieces', async () => {
    standIn.script({ kind: 'tools', calls: [{ name: 'get_weather', input: { city: 'Oslo' } }, { name: 'get_time', input: {} }] });

    const response = await fetch(`${standIn.baseUrl}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': API_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...ask('weather and time in Oslo?'), tools: TOOLS, stream: true }),
    });
    const frames = (await response.text()).trim().split('\n\n');
    const events = frames.map((frame) => {
      const [, name, data] = /^event: (\w+)\ndata: (.+)$/.exec(frame)!;
      const event = JSON.parse(data!) as { type: string; index?: number; delta?: { type: string; partial_json?: string } };
      expect(event.type).toBe(name);
      return event;
    });

    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    expect([...new Set(events.map((event) => event.type))]).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events.filter((event) => event.type === 'content_block_start').map((event) => event.index)).toEqual([0, 1]);
    const pieces = (index: number) => events.filter((event) => event.index === index && event.delta?.partial_json).map((event) => event.delta!.partial_json);
    expect(pieces(0).length).toBeGreaterThanOrEqual(2);
    expect(pieces(0).join('')).toBe('{"city":"Oslo"}');
    expect(pieces(1).join('')).toBe('{}');
    expect(events.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: expect.any(Number) } });
  });

  it('returns thinking with its signature, in a whole answer and in a stream', async () => {
    const thinkingAsk = { ...ask('what is 925 / 5?'), max_tokens: 4096, thinking: { type: 'enabled' as const, budget_tokens: 2048 } };
    standIn.script({ kind: 'thinking', thinking: '925 divided by 5 is 185.', text: '185' }, { kind: 'thinking', thinking: 'Five into 925 goes 185 times.', text: '185' });

    const whole = await client.messages.create(thinkingAsk);
    const streamed = await client.messages.stream(thinkingAsk).finalMessage();

    expect(whole.content).toEqual([
      { type: 'thinking', thinking: '925 divided by 5 is 185.', signature: expect.stringMatching(/^[A-Za-z0-9+/=]{40,}$/) },
      { type: 'text', text: '185' },
    ]);
    expect(streamed.content).toEqual([
      { type: 'thinking', thinking: 'Five into 925 goes 185 times.', signature: expect.stringMatching(/^[A-Za-z0-9+/=]{40,}$/) },
      { type: 'text', text: '185' },
    ]);
  });

  it('answers a scripted 529 and 429 as the SDK errors, with their headers', async () => {
    standIn.script(
      { kind: 'status', status: 529, errorType: 'overloaded_error', message: 'Overloaded' },
      { kind: 'status', status: 429, errorType: 'rate_limit_error', message: 'Slow down', headers: { 'retry-after': '7' } },
    );

    const overloaded = await refusal(client.messages.create(ask('busy?')));
    const limited = await refusal(client.messages.create(ask('busy?')));

    expect(overloaded).toMatchObject({ status: 529, type: 'overloaded_error', apiMessage: 'Overloaded', requestID: expect.stringMatching(/^req_/) });
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.headers?.get('retry-after')).toBe('7');
  });

  it('ends a stream with an error event after the scripted deltas, which the SDK throws', async () => {
    standIn.script({ kind: 'stream-error', afterDeltas: 2, errorType: 'overloaded_error', message: 'Overloaded' });
    const texts: string[] = [];

    const stream = client.messages.stream(ask('tell me a long story')).on('text', (text) => texts.push(text));
    const error = await refusal(stream.finalMessage());

    expect(error.type).toBe('overloaded_error');
    expect(error.message).toContain('Overloaded');
    expect(texts).toHaveLength(2);
  });

  it('refuses a wrong key, an unknown model and another path in the API error shape', async () => {
    const wrongKey = new Anthropic({ apiKey: 'sk-ant-wrong', baseURL: standIn.sdkBaseUrl, maxRetries: 0 });

    expect(await refusal(wrongKey.messages.create(ask('hi')))).toBeInstanceOf(Anthropic.AuthenticationError);
    const unknown = await refusal(client.messages.create({ ...ask('hi'), model: 'claude-unknown-1' }));
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(unknown).toMatchObject({ status: 404, type: 'not_found_error', apiMessage: 'model: claude-unknown-1' });
    expect(await refusal(client.models.list())).toBeInstanceOf(Anthropic.NotFoundError);
    expect(standIn.received).toHaveLength(3);
  });

  it('refuses an unknown top-level field and a conversation whose roles do not alternate', async () => {
    const extra = await post({ ...ask('hi'), frequency_penalty: 0.5 });
    expect(extra).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'frequency_penalty: Extra inputs are not permitted' } } });

    const twice = await refusal(client.messages.create({ ...ask('hi'), messages: [{ role: 'user', content: 'one' }, { role: 'user', content: 'two' }] }));
    expect(twice).toBeInstanceOf(Anthropic.BadRequestError);
    expect(twice.apiMessage).toMatch(/roles must alternate/);
    expect(standIn.received.map((request) => request.body.messages.length)).toEqual([1, 2]);
  });

  it('takes a tool conversation whose results answer the previous turn and refuses one that does not', async () => {
    const call: Anthropic.MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } }] };
    const answered = await client.messages.create({
      ...ask('weather?'),
      tools: TOOLS,
      messages: [{ role: 'user', content: 'weather in Paris?' }, call, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: 'sunny' }] }],
    });
    expect(answered.content).toEqual([{ type: 'text', text: 'echo: sunny' }]);

    const stray = await refusal(
      client.messages.create({
        ...ask('weather?'),
        tools: TOOLS,
        messages: [{ role: 'user', content: 'weather in Paris?' }, call, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01B', content: 'sunny' }] }],
      }),
    );
    expect(stray).toBeInstanceOf(Anthropic.BadRequestError);
    expect(stray.apiMessage).toMatch(/^messages\.2\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01B/);
  });

  it('refuses what the API refuses, with a message naming the problem', async () => {
    const cases: [name: string, body: unknown, message: string][] = [
      ['no max_tokens', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, 'max_tokens: Field required'],
      ['an empty text block', { ...ask('hi'), messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] }, 'text content blocks must be non-empty'],
      ['an unknown block type', { ...ask('hi'), messages: [{ role: 'user', content: [{ type: 'audio', data: 'x' }] }] }, 'messages.0.content.0.type: Input should be'],
      ['an extra block member', { ...ask('hi'), messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', lang: 'en' }] }] }, 'messages.0.content.0.lang: Extra inputs are not permitted'],
      ['a first assistant turn', { ...ask('hi'), messages: [{ role: 'assistant', content: 'hi' }] }, 'first message must use the "user" role'],
      ['a tool_use in a user turn', { ...ask('hi'), messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'get_time', input: {} }] }] }, 'assistant messages'],
      ['a tool name with a space', { ...ask('hi'), tools: [{ name: 'get weather', input_schema: { type: 'object' } }] }, 'tools.0.name: String should match pattern'],
      ['a tool_choice naming no tool', { ...ask('hi'), tools: TOOLS, tool_choice: { type: 'tool', name: 'get_news' } }, "Tool 'get_news' not found"],
      ['a small thinking budget', { ...ask('hi'), thinking: { type: 'enabled', budget_tokens: 512 } }, 'greater than or equal to 1024'],
      ['a budget over max_tokens', { ...ask('hi'), thinking: { type: 'enabled', budget_tokens: 2048 } }, '`max_tokens` must be greater than `thinking.budget_tokens`'],
      ['temperature with thinking', { ...ask('hi'), max_tokens: 4096, temperature: 0.5, thinking: { type: 'enabled', budget_tokens: 2048 } }, 'temperature'],
      ['a temperature over 1', { ...ask('hi'), temperature: 1.5 }, 'temperature: Input should be less than or equal to 1'],
    ];

    const outcomes = await Promise.all(cases.map(async ([name, body]) => ({ name, ...(await post(body)) })));

    expect(outcomes).toEqual(
      cases.map(([name, , message]) => ({ name, status: 400, body: expect.objectContaining({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(message) } }) })),
    );
  });
});
