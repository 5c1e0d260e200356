import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { generateText, Output, stepCountIs, streamText, tool as aiTool } from 'ai';
import { z } from 'zod';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';

const Forecast = z.object({
  city: z.string().min(1).describe('The city'),
  days: z.number().int().min(1).max(7),
  unit: z.enum(['celsius', 'fahrenheit']),
  alerts: z.array(z.object({ level: z.number().int().min(1), text: z.string() })).min(1),
});
const FORECAST = { city: 'a', days: 1, unit: 'celsius', alerts: [{ level: 1, text: '' }] };

/**
 * LangChain (`@langchain/openai`'s ChatOpenAI) and the AI SDK against the gateway, answered by
 * the development provider: structured output by each of LangChain's methods, tools bound and
 * called, streamed and not, and an agent loop that ends once the tool has answered. No request
 * leaves the machine: LangChain would fetch a tokenizer for token estimates, which these calls
 * never need, and the guard below fails the suite if one is tried.
 */
describe('LangChain and the AI SDK: tools and structured output through the development provider', () => {
  let service: TestService;
  let key: string;
  const realFetch = globalThis.fetch;
  const elsewhere: string[] = [];

  beforeAll(async () => {
    globalThis.fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
        elsewhere.push(url.href);
        return Promise.reject(new Error(`no request leaves the machine: ${url.href}`));
      }
      return realFetch(input, init);
    };
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await service?.stop();
    expect(elsewhere).toEqual([]);
  });

  const chat = () => new ChatOpenAI({ configuration: { baseURL: service.runtime.baseUrl }, apiKey: key, model: MODEL, maxRetries: 0 });

  describe('LangChain ChatOpenAI', () => {
    it.each([
      ['jsonSchema', (raw: AIMessage) => expect(JSON.parse(String(raw.content))).toEqual(FORECAST)],
      ['functionCalling', (raw: AIMessage) => expect(raw.tool_calls).toEqual([expect.objectContaining({ name: 'forecast', args: FORECAST })])],
    ] as const)('withStructuredOutput(zod, %s) returns a value of the schema', async (method, wire) => {
      const structured = chat().withStructuredOutput(Forecast, { name: 'forecast', method, includeRaw: true });
      const { raw, parsed } = await structured.invoke('the forecast for Paris');
      expect(Forecast.parse(parsed)).toEqual(FORECAST);
      wire(raw as AIMessage);
    });

    it('withStructuredOutput with its default method, invoked and streamed', async () => {
      const structured = chat().withStructuredOutput(Forecast);
      expect(await structured.invoke('the forecast for Paris')).toEqual(FORECAST);
      const outputs = [];
      for await (const output of await structured.stream('the forecast for Paris')) outputs.push(output);
      expect(outputs.at(-1)).toEqual(FORECAST);
    });

    it('withStructuredOutput in jsonMode: the echo object', async () => {
      const structured = chat().withStructuredOutput(z.object({ echo: z.string() }), { method: 'jsonMode' });
      expect(await structured.invoke('reply in JSON')).toEqual({ echo: 'reply in JSON' });
    });

    const getWeather = tool(async ({ city }: { city: string }) => `sunny in ${city || 'the city'}`, {
      name: 'get_weather',
      description: 'The weather in a city',
      schema: z.object({ city: z.string() }),
    });

    it('bindTools: a tool call with its arguments and the tokens used, streamed or not', async () => {
      const model = chat().bindTools([getWeather]);
      const message = await model.invoke('what is the weather');
      expect(message.tool_calls).toEqual([{ type: 'tool_call', id: expect.stringMatching(/^call_/), name: 'get_weather', args: { city: '' } }]);
      expect(message.usage_metadata).toMatchObject({ input_tokens: 4, output_tokens: 5, total_tokens: 9 });

      let streamed: AIMessageChunk | undefined;
      for await (const chunk of await model.stream('what is the weather')) streamed = streamed ? streamed.concat(chunk) : chunk;
      expect(streamed!.tool_call_chunks!.length).toBe(1);
      expect(streamed!.tool_calls).toEqual([{ type: 'tool_call', id: expect.stringMatching(/^call_/), name: 'get_weather', args: { city: '' } }]);
      expect(streamed!.usage_metadata).toMatchObject({ input_tokens: 4, output_tokens: 5 });
    });

    it('an agent loop calls the tool once and ends with the answer', async () => {
      const model = chat().bindTools([getWeather], { tool_choice: 'required' });
      const messages: BaseMessage[] = [new HumanMessage('weather in Paris')];
      let turns = 0;
      for (; turns < 5; turns++) {
        const reply = await model.invoke(messages);
        messages.push(reply);
        if (!reply.tool_calls?.length) break;
        for (const call of reply.tool_calls) messages.push(new ToolMessage({ tool_call_id: call.id!, content: String(await getWeather.invoke(call.args as { city: string })) }));
      }
      expect(turns).toBe(1);
      expect(messages.at(-1)!.content).toBe('sunny in the city');
    });
  });

  describe('the AI SDK with the public provider', () => {
    const provider = () => createOpenRouter({ apiKey: key, baseURL: service.runtime.baseUrl });
    const weather = aiTool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => 'light rain' });

    it('generateText with an object output returns a value of the schema', async () => {
      const { output } = await generateText({ model: provider()(MODEL), output: Output.object({ schema: Forecast }), prompt: 'the forecast for Paris' });
      expect(output).toEqual(FORECAST);
    });

    it('generateText with a tool: the call, its result, then the answer', async () => {
      const result = await generateText({ model: provider()(MODEL), tools: { weather }, stopWhen: stepCountIs(5), prompt: 'weather in Paris' });
      expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
      expect(result.steps[0]!.toolCalls).toEqual([expect.objectContaining({ toolName: 'weather', input: { city: '' } })]);
      expect(result.text).toContain('light rain');
    });

    it('streamText with a tool, the call streamed in pieces', async () => {
      const result = streamText({ model: provider()(MODEL), tools: { weather }, stopWhen: stepCountIs(5), prompt: 'weather in Paris' });
      expect(await result.text).toContain('light rain');
      expect((await result.steps)[0]!.toolCalls).toEqual([expect.objectContaining({ toolName: 'weather', input: { city: '' } })]);
    });
  });
});
