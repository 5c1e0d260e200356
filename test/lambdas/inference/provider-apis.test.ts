import { OpenRouter } from '@openrouter/sdk';
import type { ChatResult, ChatStreamChunk } from '@openrouter/sdk/models';
import { CLAUDE, CLAUDE_ON_BEDROCK, GPT, KEYS, useProviderApis } from '../../support/provider-apis';

/**
 * Completions through each provider's own API (docs/providers.md): the gateway speaks OpenAI's,
 * Anthropic's and Bedrock's wire to strict stand-ins, each proven by the provider's SDK
 * (test/providers/), and every client sees the public chat shape with exact usage and cost.
 */
describe('completions in each provider API', () => {
  const apis = useProviderApis();

  const messages = [{ role: 'user' as const, content: 'name three colours' }];
  const weather = { type: 'function' as const, function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };

  it('sends OpenAI its own model id with its key, and no gateway field', async () => {
    apis().openai.script({ kind: 'text', text: 'red green blue', usage: { input: 40, output: 3, cacheRead: 1000 } });
    const answer = await apis().client.chat.completions.create({ model: GPT, messages, max_tokens: 50, provider: { order: ['openai'] } } as never);
    const sent = apis().openai.received[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${KEYS.openai}`);
    expect(sent.body).toEqual({ model: 'gpt-5.6-luna', messages, max_completion_tokens: 50 });
    expect(answer).toMatchObject({ model: GPT, provider: 'OpenAI', choices: [{ message: { content: 'red green blue' }, finish_reason: 'stop' }] });
    // 1,040 prompt tokens of which 1,000 read from the cache, at the cache-read price.
    expect(answer.usage).toMatchObject({ prompt_tokens: 1040, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 1000 } });
    expect((answer.usage as unknown as { cost: number }).cost).toBeCloseTo(40 * 0.0000002 + 1000 * 0.00000002 + 3 * 0.0000012, 15);
  });

  it('speaks the Messages API to Anthropic: system lifted out, max_tokens always, cache reads and writes priced apart', async () => {
    apis().anthropic.script({ kind: 'text', text: 'red green blue', usage: { input: 100, output: 20, cacheRead: 1000, cacheWrite: 50 } });
    const answer = await apis().client.chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } } as never] }, ...messages],
      temperature: 0.3,
      stop: ['END'],
    });
    const sent = apis().anthropic.received[0]!;
    expect(sent.headers['x-api-key']).toBe(KEYS.anthropic);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toEqual({
      model: 'claude-sonnet-5',
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'name three colours' }] }],
      // The endpoint's completion limit, as the client sent none.
      max_tokens: 128000,
      temperature: 0.3,
      stop_sequences: ['END'],
    });
    expect(answer).toMatchObject({ model: CLAUDE, provider: 'Anthropic', choices: [{ message: { role: 'assistant', content: 'red green blue' }, finish_reason: 'stop' }] });
    expect(answer.usage).toMatchObject({ prompt_tokens: 1150, completion_tokens: 20, total_tokens: 1170, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 50 } });
    const cost = 100 * 0.000002 + 1000 * 0.0000002 + 50 * 0.0000025 + 20 * 0.00001;
    expect((answer.usage as unknown as { cost: number }).cost).toBeCloseTo(cost, 15);
  });

  it('streams parallel tool calls from Anthropic, each with its own index and id, ending tool_calls', async () => {
    apis().anthropic.script({ kind: 'tools', text: 'Checking both.', calls: [{ name: 'weather', input: { city: 'Paris' } }, { name: 'weather', input: { city: 'Oslo' } }] });
    const stream = apis().client.chat.completions.stream({ model: CLAUDE, messages, tools: [weather], tool_choice: 'required', stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    const [choice] = final.choices;
    expect(choice!.finish_reason).toBe('tool_calls');
    expect(choice!.message.content).toBe('Checking both.');
    const calls = choice!.message.tool_calls!.map((call) => ({ id: call.id, name: call.type === 'function' ? call.function.name : '', input: call.type === 'function' ? JSON.parse(call.function.arguments) : null }));
    expect(calls).toEqual([
      { id: expect.stringMatching(/^toolu_/), name: 'weather', input: { city: 'Paris' } },
      { id: expect.stringMatching(/^toolu_/), name: 'weather', input: { city: 'Oslo' } },
    ]);
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
    expect(apis().anthropic.received[0]!.body.tool_choice).toEqual({ type: 'any' });
    expect(apis().anthropic.received[0]!.body.tools).toEqual([{ name: 'weather', description: 'Weather in a city', input_schema: weather.function.parameters }]);
  });

  it('sends tool calls and their results back as tool_use and one user turn of tool_result blocks', async () => {
    const history = [
      ...messages,
      { role: 'assistant' as const, content: null, tool_calls: [
        { id: 'toolu_1', type: 'function' as const, function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function' as const, function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      ] },
      { role: 'tool' as const, tool_call_id: 'toolu_1', content: 'sunny' },
      { role: 'tool' as const, tool_call_id: 'toolu_2', content: 'snow' },
    ];
    for (const [api, model] of [['anthropic', CLAUDE], ['bedrock', CLAUDE]] as const) {
      const answer = await apis().client.chat.completions.create({ model, messages: history, tools: [weather], provider: { order: [api === 'bedrock' ? 'amazon-bedrock' : 'anthropic'] } } as never);
      expect(answer.choices[0]!.message.content).toContain('echo');
    }
    expect(apis().anthropic.received[0]!.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }, { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] }, { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'snow' }] }] },
    ]);
    expect(apis().bedrock.received[0]!.body.messages.slice(1)).toEqual([
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'toolu_1', name: 'weather', input: { city: 'Paris' } } }, { toolUse: { toolUseId: 'toolu_2', name: 'weather', input: { city: 'Oslo' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'sunny' }] } }, { toolResult: { toolUseId: 'toolu_2', content: [{ text: 'snow' }] } }] },
    ]);
  });

  it('calls Bedrock with the configured model id over HTTP/2, signed, and streams its tool calls and cache usage back', async () => {
    apis().bedrock.script({ kind: 'tools', calls: [{ name: 'weather', input: { city: 'Lima' } }, { name: 'weather', input: { city: 'Kyiv' } }], usage: { input: 30, output: 12, cacheRead: 500, cacheWrite: 0 } });
    const stream = apis().client.chat.completions.stream({ model: CLAUDE, messages, tools: [weather], provider: { order: ['amazon-bedrock'] } } as never);
    const final = await stream.finalChatCompletion();
    const sent = apis().bedrock.received[0]!;
    expect(sent).toMatchObject({ modelId: CLAUDE_ON_BEDROCK, httpVersion: '2.0', path: `/model/${encodeURIComponent(CLAUDE_ON_BEDROCK)}/converse-stream` });
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASTANDIN000000001\/\d{8}\/us-west-2\/bedrock\/aws4_request/);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls!.map((call) => (call.type === 'function' ? JSON.parse(call.function.arguments) : null))).toEqual([{ city: 'Lima' }, { city: 'Kyiv' }]);
    expect((final as unknown as { provider: string }).provider).toBe('Amazon Bedrock');
    expect(final.usage).toMatchObject({ prompt_tokens: 530, completion_tokens: 12, prompt_tokens_details: { cached_tokens: 500 } });
  });

  it('answers a JSON schema through a forced tool, as text content', async () => {
    const schema = { type: 'object', properties: { colours: { type: 'array', items: { type: 'string' } } }, required: ['colours'] };
    apis().anthropic.script({ kind: 'tools', calls: [{ name: 'palette', input: { colours: ['red', 'green'] } }] });
    const answer = await apis().client.chat.completions.create({ model: CLAUDE, messages, response_format: { type: 'json_schema', json_schema: { name: 'palette', schema } } });
    expect(JSON.parse(answer.choices[0]!.message.content!)).toEqual({ colours: ['red', 'green'] });
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    expect(answer.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(apis().anthropic.received[0]!.body.tool_choice).toEqual({ type: 'tool', name: 'palette' });
  });

  it('turns reasoning into Anthropic thinking and its blocks back into reasoning and reasoning_details', async () => {
    apis().anthropic.script({ kind: 'thinking', thinking: 'Primary colours first.', text: 'red green blue' });
    const answer = await apis().client.chat.completions.create({ model: CLAUDE, messages, max_tokens: 4000, reasoning: { max_tokens: 2000 } } as never);
    expect(apis().anthropic.received[0]!.body).toMatchObject({ max_tokens: 6000, thinking: { type: 'enabled', budget_tokens: 2000 } });
    const message = answer.choices[0]!.message as unknown as { content: string; reasoning: string; reasoning_details: { type: string; text: string; signature: string }[] };
    expect(message.content).toBe('red green blue');
    expect(message.reasoning).toBe('Primary colours first.');
    expect(message.reasoning_details).toEqual([expect.objectContaining({ type: 'reasoning.text', text: 'Primary colours first.', signature: expect.any(String) })]);
  });

  it.each([
    ['end_turn', 'stop'],
    ['max_tokens', 'length'],
    ['stop_sequence', 'stop'],
    ['refusal', 'content_filter'],
  ] as const)('maps Anthropic stop reason %s to %s', async (stopReason, finish) => {
    apis().anthropic.script({ kind: 'text', stopReason });
    const answer = await apis().client.chat.completions.create({ model: CLAUDE, messages });
    expect(answer.choices[0]!.finish_reason).toBe(finish);
  });

  it('marks the public cache_control as Bedrock cache points after the parts it closes', async () => {
    const cached = { type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral' } };
    await apis().client.chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'system', content: [cached] }, { role: 'user', content: [cached, { type: 'text', text: 'Summarize it.' }] }],
      provider: { only: ['amazon-bedrock'] },
    } as never);
    const sent = apis().bedrock.received[0]!.body;
    expect(sent.system).toEqual([{ text: 'A long document.' }, { cachePoint: { type: 'default' } }]);
    expect(sent.messages[0].content).toEqual([{ text: 'A long document.' }, { cachePoint: { type: 'default' } }, { text: 'Summarize it.' }]);
  });

  it('maps a Bedrock guardrail intervention to content_filter', async () => {
    apis().bedrock.script({ kind: 'text', text: 'blocked', stopReason: 'guardrail_intervened' });
    const answer = await apis().client.chat.completions.create({ model: CLAUDE, messages, provider: { only: ['amazon-bedrock'] } } as never);
    expect(answer.choices[0]!.finish_reason).toBe('content_filter');
  });

  it('routes the official SDK\'s `provider` and `models` and parses every answer with its own schemas', async () => {
    const sdk = new OpenRouter({ apiKey: apis().service.runtime.demo.keys.workspace, serverURL: apis().service.runtime.baseUrl });
    apis().bedrock.script({ kind: 'text', text: 'from bedrock', usage: { input: 10, output: 2, cacheRead: 90 } });
    const answer = (await sdk.chat.send({
      chatRequest: { model: GPT, models: [CLAUDE], messages, provider: { order: ['amazon-bedrock'], allowFallbacks: false } },
    })) as ChatResult;
    expect(answer).toMatchObject({ model: CLAUDE, choices: [{ message: { content: 'from bedrock' } }] });
    // GPT has no Bedrock endpoint: the routing leaves it none, and the next model of `models` serves.
    expect([apis().openai.received.length, apis().anthropic.received.length, apis().bedrock.received.length]).toEqual([0, 0, 1]);
    expect(answer.usage).toMatchObject({ promptTokens: 100, completionTokens: 2, promptTokensDetails: { cachedTokens: 90 } });
    // The SDK's names became the wire's, and none reached a provider.
    expect(apis().bedrock.received[0]!.body).not.toHaveProperty('provider');
    apis().anthropic.script({ kind: 'tools', calls: [{ name: 'weather', input: { city: 'Rome' } }, { name: 'weather', input: { city: 'Baku' } }] });
    const stream = (await sdk.chat.send({ chatRequest: { model: CLAUDE, messages, tools: [weather], stream: true, provider: { only: ['anthropic'] } } })) as AsyncIterable<ChatStreamChunk>;
    const chunks: ChatStreamChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.toolCalls ?? []);
    expect(new Set(calls.map((call) => call.index))).toEqual(new Set([0, 1]));
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finishReason)).filter(Boolean)).toEqual(['tool_calls']);
    expect(chunks.at(-1)!.usage).toMatchObject({ promptTokens: expect.any(Number), cost: expect.any(Number) });
  });
});
