import OpenAI from 'openai';
import { startTestService, type TestService } from '../../support/local-service';

describe('POST /chat/completions on the local service (development provider)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.stop();
  });

  const chat = (key: string, body: unknown) => service.call('/chat/completions', { key, method: 'POST', body });

  it('routes a workspace or personal key to the development provider with usage counted', async () => {
    for (const key of [service.runtime.demo.keys.workspace, service.runtime.demo.keys.personal]) {
      const response = await chat(key, { model: 'openai/gpt-4o-mini', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello gateway world' }], max_tokens: 2 });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        object: 'chat.completion',
        model: 'openai/gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hello gateway' }, finish_reason: 'length' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      });
      expect(response.body.id).toMatch(/^gen-/);
      expect(response.body.provider).toBe('OpenAI');
    }
  });

  it('streams the echo word by word to the openai client, ending with the usage and what it cost, then [DONE]', async () => {
    const key = service.runtime.demo.keys.workspace;
    const spent = async () => (await service.call('/key', { key })).body.data.usage as number;
    const client = new OpenAI({ apiKey: key, baseURL: service.runtime.baseUrl, maxRetries: 0 });
    const before = await spent();
    // No stream_options: every stream ends with its usage, as the public API's do.
    const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'streamed word by word' }], stream: true });
    const deltas: string[] = [];
    let usage: (OpenAI.CompletionUsage & { cost?: number; is_byok?: boolean }) | undefined;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
      if (chunk.usage) usage = chunk.usage;
    }
    const after = await spent();
    expect(deltas).toEqual(['streamed', ' word', ' by', ' word']);
    expect(usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8, is_byok: false });
    expect(after).toBeGreaterThan(before);
    expect(usage!.cost).toBeCloseTo(after - before, 15);

    const json = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'not streamed' }] });
    expect((json.usage as { cost?: number } | undefined)?.cost).toBeCloseTo((await spent()) - after, 15);

    const raw = await chat(key, { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'a b' }], stream: true });
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const events = raw.text.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(6);
    expect(JSON.parse(events.at(-2)!.slice(6))).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4, is_byok: false } });
    expect(raw.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it.each([
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 400, 'Invalid model: is required'],
    ['no messages', { model: 'openai/gpt-4o-mini', messages: [] }, 400, 'Invalid messages: must be a non-empty array'],
    ['a bad role', { model: 'openai/gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] }, 400, 'Invalid messages[0].role: must be one of system, user, assistant, tool, developer'],
    ['"stream": "true"', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: 'true' }, 400, 'Invalid stream: must be a boolean'],
    ['stream_options without a stream', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } }, 400, 'Invalid stream_options: is only allowed when stream is true'],
    ['a content that is a number', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 7 }] }, 400, 'Invalid messages[0].content: must be a string or an array of content parts'],
    ['max_tokens 0', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 400, 'Invalid max_tokens: must be an integer from 1 to 9007199254740991'],
    ['a routing preference it does not know', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], provider: { prefer: ['x'] } }, 400, 'Invalid provider: has no field "prefer"'],
    ['a price ceiling below zero', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], provider: { max_price: { prompt: -1 } } }, 400, 'Invalid provider.max_price.prompt: must be a non-negative number of USD'],
    ['an empty list of models', { messages: [{ role: 'user', content: 'x' }], models: [] }, 400, 'Invalid models: must be a non-empty array'],
    ['an unknown model', { model: 'acme/none', messages: [{ role: 'user', content: 'x' }] }, 404, 'No endpoints found for model acme/none that your settings, guardrails and routing preferences allow'],
  ])('answers %s with a clear error', async (_name, body, status, message) => {
    const response = await chat(service.runtime.demo.keys.workspace, body);
    expect(response.status).toBe(status);
    expect(response.body.error).toMatchObject({ code: status, message });
  });
});
