import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startOpenAIStandIn, type OpenAIStandIn } from '../support/providers/openai-stand-in';

/** The stand-in as OpenAI's own SDK sees it: each answer and refusal must parse as the real API's. */
const API_KEY = 'sk-test-stand-in-0123456789';
const MODEL = 'gpt-4.1-mini';
const TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
];

let standIn: OpenAIStandIn;
let client: OpenAI;

beforeAll(async () => {
  standIn = await startOpenAIStandIn({ apiKey: API_KEY, models: [MODEL, 'gpt-4o'] });
  client = new OpenAI({ apiKey: API_KEY, baseURL: standIn.baseUrl, maxRetries: 0 });
});
afterEach(() => standIn.reset());
afterAll(() => standIn.stop());

const ask = (text: string): { model: string; messages: ChatCompletionMessageParam[] } => ({ model: MODEL, messages: [{ role: 'user', content: text }] });

/** The API error a request is refused with. */
async function refusal(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
  return error;
}

describe('OpenAI Chat Completions stand-in', () => {
  it('answers with an echo of the last user message and counts words as tokens', async () => {
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
      ],
    });

    expect(completion).toMatchObject({ object: 'chat.completion', model: MODEL, system_fingerprint: expect.stringMatching(/^fp_/) });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'echo: hello there', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' },
    ]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, prompt_tokens_details: { cached_tokens: 0 } });
    expect(standIn.received[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('reports scripted usage with cached tokens counted in the prompt tokens', async () => {
    standIn.script({ kind: 'text', text: 'Cut short', finishReason: 'length', usage: { input: 10, output: 2, cacheRead: 90, cacheWrite: 5 } });

    const completion = await client.chat.completions.create(ask('a long story please'));

    expect(completion.choices[0]).toMatchObject({ message: { content: 'Cut short' }, finish_reason: 'length' });
    expect(completion.usage).toMatchObject({
      prompt_tokens: 100,
      completion_tokens: 2,
      total_tokens: 102,
      prompt_tokens_details: { cached_tokens: 90 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('streams two parallel tool calls that the SDK reassembles, with usage last', async () => {
    standIn.script({ kind: 'tools', calls: [{ name: 'get_weather', input: { city: 'Paris' } }, { name: 'get_time', input: { zone: 'Europe/Paris' } }] });

    const stream = client.chat.completions.stream({ ...ask('weather and time in Paris?'), tools: TOOLS, stream_options: { include_usage: true } });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const completion = await stream.finalChatCompletion();

    const calls = completion.choices[0]!.message.tool_calls!.map((call) => call.type === 'function' && { id: call.id, ...call.function });
    expect(calls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: expect.stringMatching(/^call_/), name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
    ]);
    expect(calls[0] && calls[1] && calls[0].id !== calls[1].id).toBe(true);
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: null } });
    expect(completion.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });

    const pieces = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(pieces[0]).toMatchObject({ index: 0, id: calls[0] && calls[0].id, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(pieces.filter((piece) => piece.index === 0 && !piece.id).length).toBeGreaterThanOrEqual(2);
    expect(pieces.filter((piece) => piece.index === 1 && !piece.id).length).toBeGreaterThanOrEqual(2);
    expect(pieces.findIndex((piece) => piece.index === 1)).toBeGreaterThan(pieces.findLastIndex((piece) => piece.index === 0));
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 7 } });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
  });

  it('streams text in several deltas, and no usage unless asked', async () => {
    const stream = await client.chat.completions.create({ ...ask('one two three'), stream: true });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant', content: '' });
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(2);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('echo: one two three');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && !('usage' in chunk))).toBe(true);
  });

  it('accepts a turn that answers each tool call with a tool message', async () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ];

    const completion = await client.chat.completions.create({ model: MODEL, messages, tools: TOOLS, tool_choice: 'auto' });

    expect(completion.choices[0]!.message.content).toBe('echo: weather in Paris?');
    expect(standIn.received[0]!.body.messages).toEqual(messages);
  });

  it('refuses a tool message that answers no tool call', async () => {
    const error = await refusal(client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_9', content: 'x' }] }));

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toEqual({
      message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      type: 'invalid_request_error',
      param: 'messages.[1].role',
      code: null,
    });
  });

  it('refuses an argument the API does not know, with the real message, and records it', async () => {
    const error = await refusal(client.chat.completions.create({ ...ask('hi'), provider: { order: ['x'] } } as ChatCompletionCreateParamsNonStreaming));

    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toBe('400 Unrecognized request argument supplied: provider');
    expect(error.requestID).toMatch(/^req_/);
    expect(standIn.received.map((request) => request.body.provider)).toEqual([{ order: ['x'] }]);
  });

  it('refuses what the reference forbids: stream options without a stream, a bad tool choice, a mistyped field', async () => {
    const cases: [Promise<unknown>, string][] = [
      [client.chat.completions.create({ ...ask('hi'), stream_options: { include_usage: true } }), "The 'stream_options' parameter is only allowed when 'stream' is enabled."],
      [client.chat.completions.create({ ...ask('hi'), tools: TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } } }), "Invalid value for 'tool_choice'"],
      [client.chat.completions.create({ ...ask('hi'), temperature: '1' as unknown as number }), "Invalid type for 'temperature': expected a decimal, but got a string instead."],
      [client.chat.completions.create({ model: MODEL, messages: [] }), "Invalid 'messages': empty array."],
    ];
    for (const [request, message] of cases) {
      const error = await refusal(request);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.message).toContain(message);
    }
  });

  it('refuses a wrong key and an unknown model as OpenAI does', async () => {
    const wrongKey = new OpenAI({ apiKey: 'sk-wrong-key-000000', baseURL: standIn.baseUrl, maxRetries: 0 });
    const unauthorized = await refusal(wrongKey.chat.completions.create(ask('hi')));
    expect(unauthorized).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthorized).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error' });
    expect(unauthorized.message).toContain('Incorrect API key provided');

    const unknown = await refusal(client.chat.completions.create({ ...ask('hi'), model: 'gpt-9' }));
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ code: 'model_not_found', message: '404 The model `gpt-9` does not exist or you do not have access to it.' });
  });

  it('answers a scripted 429 with its retry-after header', async () => {
    standIn.script({ kind: 'status', status: 429, errorType: 'requests', message: 'Rate limit reached for requests', headers: { 'retry-after': '7' } });

    const error = await refusal(client.chat.completions.create(ask('hi')));

    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(error.headers?.get('retry-after')).toBe('7');
  });

  it('breaks a stream off with an error event that the SDK throws', async () => {
    standIn.script({ kind: 'stream-error', afterDeltas: 2, errorType: 'server_error', message: 'The server had an error while processing your request.' });

    const stream = await client.chat.completions.create({ ...ask('tell me more'), stream: true });
    const contents: string[] = [];
    const consume = async () => {
      for await (const chunk of stream) contents.push(chunk.choices[0]?.delta.content ?? '');
    };

    const error = await refusal(consume());
    expect(error.message).toBe('The server had an error while processing your request.');
    expect(error.type).toBe('server_error');
    expect(contents).toEqual(['', 'echo:']);
  });

  it('answers 404 on any other path, in OpenAI error shape', async () => {
    const response = await fetch(`${standIn.baseUrl}/completions`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` }, body: '{}' });

    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { message: 'Invalid URL (POST /v1/completions)', type: 'invalid_request_error', param: null, code: null } });
    expect(standIn.received).toHaveLength(1);
  });
});
