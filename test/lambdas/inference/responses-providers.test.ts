import OpenAI from 'openai';
import { CLAUDE, GPT, useProviderApis } from '../../support/provider-apis';

const weather = { type: 'function' as const, name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };

/**
 * The Responses API routed to the provider APIs' stand-ins: a tool conversation with Claude's
 * thinking continued by id, its signed thinking sent back as Anthropic asks for it, and the
 * same through OpenAI's own API.
 */
describe('the Responses API on the provider APIs', () => {
  const apis = useProviderApis();
  const client = () => new OpenAI({ apiKey: apis().service.runtime.demo.keys.workspace, baseURL: apis().service.runtime.baseUrl, maxRetries: 0 });

  it.each([['anthropic'], ['amazon-bedrock']])("continues Claude's second tool turn with thinking (%s), its signed thinking sent back first", async (provider) => {
    const standIn = provider === 'anthropic' ? apis().anthropic : apis().bedrock;
    standIn.script({ kind: 'tools', thinking: 'Paris first.', calls: [{ name: 'weather', input: { city: 'Paris' } }] });
    const asked = { model: CLAUDE, tools: [weather], max_output_tokens: 3000, reasoning: { max_tokens: 1024 }, provider: { only: [provider] } } as const;
    const first = await client().responses.stream({ ...asked, input: 'Weather in Paris?' } as never).finalResponse();
    const [reasoning, call] = first.output;
    expect(reasoning).toMatchObject({ type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Paris first.' }], encrypted_content: expect.any(String) });
    expect(call).toMatchObject({ type: 'function_call', name: 'weather', arguments: JSON.stringify({ city: 'Paris' }) });
    standIn.script({ kind: 'text', text: 'Sunny in Paris.' });
    const second = await client().responses.create({ ...asked, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: (call as { call_id: string }).call_id, output: 'sunny' }] } as never);
    expect(second.output_text).toBe('Sunny in Paris.');
    // The assistant turn went back as each API takes it: the thinking first, with its signature.
    const signature = (reasoning as { encrypted_content: string }).encrypted_content;
    const sent = standIn.received.at(-1)!.body as { messages: { role: string; content: Record<string, any>[] }[] };
    const assistant = sent.messages.find((message) => message.role === 'assistant')!.content;
    if (provider === 'anthropic') expect(assistant).toEqual([{ type: 'thinking', thinking: 'Paris first.', signature }, expect.objectContaining({ type: 'tool_use', input: { city: 'Paris' } })]);
    else expect(assistant).toEqual([{ reasoningContent: { reasoningText: { text: 'Paris first.', signature } } }, { toolUse: expect.objectContaining({ input: { city: 'Paris' } }) }]);
  });

  it.each([[false], [true]])("passes Anthropic's redacted thinking on as encrypted reasoning and sends it back when continued (streamed: %s)", async (stream) => {
    apis().anthropic.script({ kind: 'thinking', thinking: 'Open part.', redacted: 'RW5jcnlwdGVkIHBhcnQ=', text: 'ok' });
    const asked = { model: CLAUDE, max_output_tokens: 3000, reasoning: { max_tokens: 1024 }, provider: { only: ['anthropic'] } };
    const first = stream ? await client().responses.stream({ ...asked, input: 'think' } as never).finalResponse() : await client().responses.create({ ...asked, input: 'think' } as never);
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect(first.output[1]).toMatchObject({ type: 'reasoning', content: [], encrypted_content: 'RW5jcnlwdGVkIHBhcnQ=' });
    await client().responses.create({ ...asked, previous_response_id: first.id, input: 'again' } as never);
    const assistant = (apis().anthropic.received.at(-1)!.body as { messages: { role: string; content: { type: string; data?: string }[] }[] }).messages[1]!;
    expect(assistant.content.map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'text']);
    expect(assistant.content[1]!.data).toBe('RW5jcnlwdGVkIHBhcnQ=');
  });

  it('ends a stream the provider broke off with an error event, which the client raises', async () => {
    apis().anthropic.script({ kind: 'stream-error', afterDeltas: 2, errorType: 'overloaded_error', message: 'Overloaded' });
    const stream = client().responses.stream({ model: CLAUDE, input: 'one two three four five', provider: { only: ['anthropic'] } } as never);
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    // The client rejects with the error event itself.
    await expect(stream.finalResponse()).rejects.toMatchObject({ type: 'error', code: 'server_error', message: expect.stringContaining('overloaded_error') });
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types).toContain('response.output_text.delta');
    expect(types).not.toContain('response.completed');
  });

  it("reaches OpenAI's API, and a client sending the whole conversation back with store false keeps nothing", async () => {
    const answer = await client().responses.create({ model: GPT, input: [{ role: 'user', content: [{ type: 'input_text', text: 'a colour' }] }], store: false, provider: { only: ['openai'] } } as never);
    expect(answer).toMatchObject({ status: 'completed', store: false });
    expect(answer.output_text.length).toBeGreaterThan(0);
    expect(apis().openai.received.at(-1)!.body).toMatchObject({ model: 'gpt-5.6-luna', messages: [{ role: 'user', content: [{ type: 'text', text: 'a colour' }] }] });
    await expect(client().responses.retrieve(answer.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
