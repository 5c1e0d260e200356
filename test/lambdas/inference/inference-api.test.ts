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

  it('streams the echo word by word to the openai client, ending the event stream with [DONE]', async () => {
    const client = new OpenAI({ apiKey: service.runtime.demo.keys.workspace, baseURL: service.runtime.baseUrl, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'streamed word by word' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let usage: unknown;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toEqual(['streamed', ' word', ' by', ' word']);
    expect(usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });

    const raw = await chat(service.runtime.demo.keys.workspace, { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'a b' }], stream: true });
    expect(raw.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(raw.text.split('\n\n').filter(Boolean)).toHaveLength(5);
    expect(raw.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it.each([
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 400, 'Invalid model: is required'],
    ['no messages', { model: 'openai/gpt-4o-mini', messages: [] }, 400, 'Invalid messages: must be a non-empty array'],
    ['a bad role', { model: 'openai/gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] }, 400, 'Invalid messages[0].role: must be one of system, user, assistant, tool, developer'],
    ['"stream": "true"', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: 'true' }, 400, 'Invalid stream: must be a boolean'],
    ['stream_options without a stream', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } }, 400, 'Invalid stream_options: is only allowed when stream is true'],
    ['a content that is a number', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 7 }] }, 400, 'Invalid messages[0].content: must be a string or an array of content parts'],
    ['max_tokens 0', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 400, 'Invalid max_tokens: must be an integer of at least 1'],
    ['an unknown model', { model: 'acme/none', messages: [{ role: 'user', content: 'x' }] }, 404, 'No endpoints found for model acme/none that your settings and guardrails allow'],
  ])('answers %s with a clear error', async (_name, body, status, message) => {
    const response = await chat(service.runtime.demo.keys.workspace, body);
    expect(response.status).toBe(status);
    expect(response.body.error).toMatchObject({ code: status, message });
  });
});
