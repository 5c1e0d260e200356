import OpenAI from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { z } from 'zod';
import { startTestService, type TestService } from '../../support/local-service';
import { weatherTool } from '../../support/chat-tools';

const MODEL = 'openai/gpt-4o-mini';

const WEATHER: ChatCompletionTool = weatherTool(1);
const WEATHER_ARGUMENTS = '{"city":"a","unit":"celsius","days":1}';

const Review = z.object({
  title: z.string(),
  rating: z.number().int().min(1).max(5),
  tags: z.array(z.enum(['fun', 'long'])).min(1),
  author: z.object({ name: z.string(), email: z.string().nullable() }),
});

/**
 * The `openai` client's tool calling and structured output against the gateway, answered by the
 * development provider: its tool calls, streamed and not, its helpers that assemble a streamed
 * call (`stream`, `runTools`) and that parse with zod (`parse`, `zodResponseFormat`,
 * `zodFunction`), and the gateway's own range checks as the client reports them.
 */
describe('the openai client: tools and structured output through the development provider', () => {
  let service: TestService;
  let client: OpenAI;
  let key: string;

  beforeAll(async () => {
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
    client = new OpenAI({ apiKey: key, baseURL: service.runtime.baseUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await service?.stop();
  });

  const spent = async () => (await service.call('/key', { key })).body.data.usage as number;
  const ask = (content: string): ChatCompletionMessageParam[] => [{ role: 'user', content }];

  it('answers tools with a tool call whose arguments fit the parameters, charged as a text answer is', async () => {
    const before = await spent();
    const completion = await client.chat.completions.create({ model: MODEL, messages: ask('weather in Paris'), tools: [WEATHER] });
    const after = await spent();

    const [choice] = completion.choices;
    expect(choice!.finish_reason).toBe('tool_calls');
    expect(choice!.message.content).toBeNull();
    expect(choice!.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: WEATHER_ARGUMENTS } }]);
    expect(completion.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 13, total_tokens: 16 });
    expect((completion.usage as unknown as { cost: number }).cost).toBeCloseTo(after - before, 15);
    expect(after).toBeGreaterThan(before);
  });

  it('ends a manual agent loop: the tool result is answered with text', async () => {
    const messages = ask('weather in Paris');
    const first = await client.chat.completions.create({ model: MODEL, messages, tools: [WEATHER], tool_choice: 'required' });
    const call = first.choices[0]!.message.tool_calls![0]!;
    messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'sunny and 21 degrees' });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools: [WEATHER], tool_choice: 'required' });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'sunny and 21 degrees' } });
  });

  it('streams a tool call in delta.tool_calls chunks that the client assembles into the same call', async () => {
    const chunks = [];
    for await (const chunk of await client.chat.completions.create({ model: MODEL, messages: ask('weather'), tools: [WEATHER], stream: true })) chunks.push(chunk);
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.tool_calls?.[0])).filter((call) => call !== undefined);
    expect(deltas[0]).toEqual({ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas.slice(1).every((delta) => delta.index === 0 && delta.id === undefined && typeof delta.function?.arguments === 'string')).toBe(true);
    expect(deltas.map((delta) => delta.function!.arguments).join('')).toBe(WEATHER_ARGUMENTS);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 13 });

    const assembled = await client.chat.completions.stream({ model: MODEL, messages: ask('weather'), tools: [WEATHER] }).finalChatCompletion();
    expect(assembled.choices[0]!.finish_reason).toBe('tool_calls');
    expect(assembled.choices[0]!.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: WEATHER_ARGUMENTS } }]);
  });

  it.each([false, true])('runTools calls the function and finishes with its result (streamed: %s)', async (streamed) => {
    const calls: unknown[] = [];
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: WEATHER.function.parameters!,
          parse: (text: string) => JSON.parse(text) as Record<string, unknown>,
          function: (args: Record<string, unknown>) => {
            calls.push(args);
            return 'rain all week';
          },
        },
      },
    ];
    const content = streamed
      ? await client.chat.completions.runTools({ model: MODEL, messages: ask('weather'), tools, stream: true }).finalContent()
      : await client.chat.completions.runTools({ model: MODEL, messages: ask('weather'), tools }).finalContent();
    expect(content).toBe('rain all week');
    expect(calls).toEqual([JSON.parse(WEATHER_ARGUMENTS)]);
  });

  it('parse with zodResponseFormat: the content parses to the schema, streamed and not', async () => {
    const expected = { title: '', rating: 1, tags: ['fun'], author: { name: '', email: '' } };
    const parsed = await client.chat.completions.parse({ model: MODEL, messages: ask('review this'), response_format: zodResponseFormat(Review, 'review') });
    expect(parsed.choices[0]!.message.parsed).toEqual(expected);
    expect(Review.parse(JSON.parse(parsed.choices[0]!.message.content!))).toEqual(expected);

    const contents: string[] = [];
    const stream = client.chat.completions.stream({ model: MODEL, messages: ask('review this'), response_format: zodResponseFormat(Review, 'review') });
    stream.on('content.delta', ({ delta }) => contents.push(delta));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.parsed).toEqual(expected);
    expect(contents.length).toBeGreaterThan(10);
  });

  it('parse with zodFunction: the call arguments parse to the schema', async () => {
    const completion = await client.chat.completions.parse({
      model: MODEL,
      messages: ask('file a review'),
      tools: [zodFunction({ name: 'file_review', parameters: Review })],
      tool_choice: { type: 'function', function: { name: 'file_review' } },
    });
    expect(completion.choices[0]!.message.tool_calls![0]).toMatchObject({ function: { name: 'file_review', parsed_arguments: { title: '', rating: 1, tags: ['fun'], author: { name: '', email: '' } } } });
  });

  it('json_object: a JSON object of the echoed text', async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: ask('give me json'), response_format: { type: 'json_object' } });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ echo: 'give me json' });
  });

  it('relays a call the provider refuses (an unknown tool named) as a 400', async () => {
    const refused = await client.chat.completions.create({ model: MODEL, messages: ask('x'), tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'missing' } } }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/refused the request: tool_choice names the function "missing"/);
  });

  it.each([
    [{ temperature: 1e308 }, 'Invalid temperature: must be a number from 0 to 2'],
    [{ n: 1000 }, 'Invalid n: must be an integer from 1 to 128'],
    [{ max_tokens: 1e308 }, 'Invalid max_tokens: must be an integer from 1 to 9007199254740991'],
    [{ top_logprobs: 21, logprobs: true }, 'Invalid top_logprobs: must be an integer from 0 to 20'],
  ])('refuses %j before any provider, naming the field', async (extra, message) => {
    const refused = await client.chat.completions.create({ model: MODEL, messages: ask('x'), ...extra }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 400, message, metadata: { parameter: Object.keys(extra)[0] } });
  });
});
