import { createOpenAI } from '@ai-sdk/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';

/**
 * The libraries agents are built on, pointed at the gateway as their users do: `@ai-sdk/openai`,
 * whose default provider speaks the Responses API, and LangChain's ChatAnthropic, which speaks
 * the Messages API. Each completes text, a stream and a tool turn, charged to the key.
 */
describe('agent libraries on /responses and /messages', () => {
  let service: TestService;
  let key: string;
  const spent = async () => (await service.call('/key', { key })).body.data.usage as number;
  const weatherSchema = { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] };

  beforeAll(async () => {
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
  });
  afterAll(() => service?.stop());

  it("@ai-sdk/openai's default provider: text, a stream, and a tool loop through /responses", async () => {
    const requests: string[] = [];
    const openai = createOpenAI({
      apiKey: key,
      baseURL: service.runtime.baseUrl,
      fetch: (input, init) => {
        requests.push(new URL(String(input instanceof Request ? input.url : input)).pathname);
        return fetch(input, init);
      },
    });
    const before = await spent();
    const text = await generateText({ model: openai(MODEL), prompt: 'one two three' });
    expect(text.text).toBe('one two three');
    expect(text.usage).toMatchObject({ inputTokens: expect.any(Number), outputTokens: 3 });

    const stream = streamText({ model: openai(MODEL), prompt: 'streamed words here' });
    let streamed = '';
    for await (const piece of stream.textStream) streamed += piece;
    expect(streamed).toBe('streamed words here');

    const weather = tool({ description: 'Weather in a city', inputSchema: jsonSchema<{ city: string }>(weatherSchema), execute: async ({ city }) => `sunny in ${city || 'the city'}` });
    const loop = await generateText({ model: openai(MODEL), prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(loop.steps[0]!.toolCalls.map((call) => call.toolName)).toEqual(['weather']);
    expect(loop.text).toContain('sunny');
    expect(requests.every((path) => path.endsWith('/responses'))).toBe(true);
    expect(await spent()).toBeGreaterThan(before);
  });

  it("LangChain's ChatAnthropic: text, a stream, and a tool call answered through /messages", async () => {
    const chat = new ChatAnthropic({ model: MODEL, apiKey: key, anthropicApiUrl: service.runtime.baseUrl.replace(/\/v1$/, ''), maxTokens: 100, maxRetries: 0 });
    const before = await spent();
    const answer = await chat.invoke('one two three');
    expect(answer.content).toBe('one two three');
    expect(answer.usage_metadata).toMatchObject({ output_tokens: 3 });

    let streamed = '';
    for await (const chunk of await chat.stream('streamed words here')) streamed += typeof chunk.content === 'string' ? chunk.content : '';
    expect(streamed).toBe('streamed words here');

    const withTools = chat.bindTools([{ name: 'weather', description: 'Weather in a city', input_schema: weatherSchema }]);
    const asked = new HumanMessage('Weather in Paris?');
    const called = await withTools.invoke([asked]);
    expect(called.tool_calls?.map((call) => call.name)).toEqual(['weather']);
    const result = new ToolMessage({ content: 'sunny', tool_call_id: called.tool_calls![0]!.id! });
    const final = await withTools.invoke([asked, new AIMessage(called), result]);
    expect(final.text).toBe('sunny');
    expect(await spent()).toBeGreaterThan(before);
  });
});
