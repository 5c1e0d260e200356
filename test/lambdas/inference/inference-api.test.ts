import { startTestService, type TestService } from '../../support/local-service';

describe('POST /chat/completions on the local service', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.stop();
  });

  const chat = (key: string, body: unknown) => service.call('/chat/completions', { key, method: 'POST', body });

  it('routes a workspace or personal key to the echo provider with usage counted', async () => {
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
    }
  });

  it.each([
    ['no model', { messages: [{ role: 'user', content: 'x' }] }, 400, 'Invalid model: is required'],
    ['no messages', { model: 'openai/gpt-4o-mini', messages: [] }, 400, 'Invalid messages: must be a non-empty array'],
    ['a bad role', { model: 'openai/gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] }, 400, 'Invalid messages[0].role: must be one of system, user, assistant, tool, developer'],
    ['streaming', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], stream: true }, 400, 'Invalid stream: streaming is not supported by this gateway'],
    ['an unknown model', { model: 'acme/none', messages: [{ role: 'user', content: 'x' }] }, 404, 'No endpoints found for model acme/none that your settings and guardrails allow'],
  ])('answers %s with a clear error', async (_name, body, status, message) => {
    const response = await chat(service.runtime.demo.keys.workspace, body);
    expect(response.status).toBe(status);
    expect(response.body.error).toMatchObject({ code: status, message });
  });
});
