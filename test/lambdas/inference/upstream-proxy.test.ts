import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { PROVIDER_CREDENTIALS_FILE } from '../../../local/function-wiring';
import { startScriptedUpstream, type ScriptedUpstream } from '../../support/scripted-upstream';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'deepseek/deepseek-v4-flash';
const PROMPT = 'confidential prompt words';
const FIRST_CREDENTIAL = 'sk-upstream-first-0123456789';
const DEFAULT_CREDENTIAL = 'sk-upstream-default-9876543210';

/**
 * The gateway in front of a real local HTTP upstream: routing order and fallback, the
 * OpenAI-compatible wire format with the `openai` client, streaming, timeouts and
 * disconnects. The model's endpoints route to deepseek, then gmicloud/fp8, then alibaba.
 */
describe('POST /chat/completions through a provider upstream', () => {
  let upstream: ScriptedUpstream;
  let service: TestService;
  let client: OpenAI;
  const logged: string[] = [];
  const original = { error: console.error, log: console.log, warn: console.warn, write: process.stderr.write.bind(process.stderr) };

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    service = await startTestService({
      // Everything the service logs, at its most detailed level, to check that no credential or prompt leaks.
      logLevel: 'DEBUG',
      log: (line) => void logged.push(line),
      upstreamTimeoutSeconds: 1,
      inferenceUpstreams: {
        deepseek: upstream.baseUrl('first'),
        'gmicloud/fp8': upstream.baseUrl('second'),
        alibaba: upstream.baseUrl('third'),
        '*': upstream.baseUrl('rest'),
      },
    });
    writeFileSync(join(service.dataDir, PROVIDER_CREDENTIALS_FILE), JSON.stringify({ deepseek: FIRST_CREDENTIAL, '*': DEFAULT_CREDENTIAL }));
    client = new OpenAI({ apiKey: service.runtime.demo.keys.workspace, baseURL: service.runtime.baseUrl, maxRetries: 0 });
    // And whatever reaches the console.
    for (const name of ['error', 'log', 'warn'] as const) console[name] = (...args: unknown[]) => void logged.push(args.map(String).join(' '));
    process.stderr.write = ((chunk: string | Uint8Array) => (logged.push(String(chunk)), true)) as typeof process.stderr.write;
  });
  afterAll(async () => {
    Object.assign(console, { error: original.error, log: original.log, warn: original.warn });
    process.stderr.write = original.write;
    await service?.stop();
    await upstream?.stop();
  });
  beforeEach(() => upstream.reset());

  const raw = (body: unknown, key = service.runtime.demo.keys.workspace) => service.call('/chat/completions', { key, method: 'POST', body });
  const messages = [{ role: 'user' as const, content: PROMPT }];

  it('answers through the openai client from the first endpoint, with the provider credential and model id', async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages });
    expect(completion.choices[0]!.message.content).toBe(PROMPT);
    expect(completion.model).toBe(MODEL);
    expect(completion.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3 });
    expect((completion as unknown as { provider: string }).provider).toBe('DeepSeek');
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]).toMatchObject({ provider: 'first', body: { model: MODEL, messages } });
    expect(upstream.received[0]!.headers.authorization).toBe(`Bearer ${FIRST_CREDENTIAL}`);
  });

  it('streams through the openai client chunk by chunk, asking the upstream for usage', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
    const pieces: string[] = [];
    for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');
    expect(pieces.filter(Boolean)).toEqual(['confidential', ' prompt', ' words']);
    expect(upstream.received[0]!.body.stream_options).toEqual({ include_usage: true });
  });

  it('ends the event stream with the usage chunk, asked for or not, then data: [DONE]', async () => {
    for (const body of [{ model: MODEL, messages, stream: true }, { model: MODEL, messages, stream: true, stream_options: { include_usage: true } }]) {
      const streamed = await raw(body);
      expect(streamed.status).toBe(200);
      expect(streamed.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(streamed.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(streamed.text).toContain(': processing\n\n');
      const events = streamed.text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
      expect(events.filter((event) => 'usage' in event)).toHaveLength(1);
      expect(events.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14, is_byok: false } });
    }
  });

  it.each([
    ['a 5xx', { kind: 'status', status: 503 } as const],
    ['a dropped connection', { kind: 'hang-up' } as const],
  ])('falls back to the next endpoint after %s', async (_name, behaviour) => {
    upstream.script('first', behaviour);
    const response = await raw({ model: MODEL, messages });
    expect(response.status).toBe(200);
    expect(response.body.provider).toBe('GMICloud');
    expect(upstream.received.map((r) => r.provider)).toEqual(['first', 'second']);
    expect(upstream.received[1]!.headers.authorization).toBe(`Bearer ${DEFAULT_CREDENTIAL}`);
  });

  it('answers 502 when every endpoint fails', async () => {
    upstream.script('first', { kind: 'status', status: 500 });
    upstream.script('second', { kind: 'hang-up' });
    upstream.script('third', { kind: 'status', status: 502 });
    upstream.script('rest', { kind: 'status', status: 500 }, { kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    const response = await raw({ model: MODEL, messages, stream: true });
    expect(response.status).toBe(502);
    expect(response.body).toEqual({ error: { code: 502, message: 'Provider Novita failed (HTTP 500)' } });
    expect(upstream.received).toHaveLength(6);
  });

  it('gives way to the next endpoint when one is rate limited, and relays the 429 when none other may serve', async () => {
    upstream.script('first', { kind: 'status', status: 429, message: 'slow down' });
    const served = await raw({ model: MODEL, messages });
    expect(served.status).toBe(200);
    expect(upstream.received.map((r) => r.provider)).toEqual(['first', 'second']);
    upstream.reset();
    const only = await raw({ model: MODEL, messages, provider: { order: ['deepseek'], allow_fallbacks: false } });
    expect(only.status).toBe(200);
    upstream.reset();
    upstream.script('first', { kind: 'status', status: 429, message: 'slow down' });
    const refused = await raw({ model: MODEL, messages, provider: { order: ['deepseek'], allow_fallbacks: false } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: { code: 429, message: 'Provider DeepSeek refused the request: slow down' } });
    expect(upstream.received.map((r) => r.provider)).toEqual(['first']);
    expect(upstream.received[0]!.body).not.toHaveProperty('provider');
  });

  it.each([
    [{ kind: 'status', status: 400, message: 'max_tokens too large' } as const, 400, 'Provider DeepSeek refused the request: max_tokens too large'],
    [{ kind: 'status', status: 401, message: 'bad key' } as const, 502, 'Provider DeepSeek refused the gateway (HTTP 401)'],
    [{ kind: 'garbage' } as const, 502, 'Provider DeepSeek sent an answer that is not JSON'],
    [{ kind: 'stall' } as const, 504, 'Provider DeepSeek did not answer in time'],
  ])('maps upstream %j to %i without trying further endpoints', async (behaviour, status, message) => {
    upstream.script('first', behaviour);
    const response = await raw({ model: MODEL, messages });
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ error: { code: status, message } });
    expect(upstream.received).toHaveLength(1);
  });

  it.each([
    [{ kind: 'stall-after', chunks: 2 } as const, { code: 504, message: 'Provider DeepSeek stopped answering' }],
    [{ kind: 'cut-off', chunks: 2 } as const, { code: 502, message: 'Provider DeepSeek ended the stream early' }],
  ])('reports a stream that fails after it started (%j) as a last chunk carrying the error, without [DONE]', async (behaviour, error) => {
    upstream.script('first', behaviour, behaviour);
    const response = await raw({ model: MODEL, messages, stream: true });
    expect(response.status).toBe(200);
    const events = response.text.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[2]!.slice(6))).toEqual({
      id: expect.stringMatching(/^gen-/),
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model: MODEL,
      provider: 'DeepSeek',
      choices: [],
      error,
    });
    expect(response.text).not.toContain('[DONE]');
    await expect(
      (async () => {
        for await (const _chunk of await client.chat.completions.create({ model: MODEL, messages, stream: true })) void _chunk;
      })(),
    ).rejects.toThrow(error.message);
  });

  it('reads the upstream answer to its end when the client disconnects mid-stream: the provider bills it all the same', async () => {
    upstream.script('first', { kind: 'answer', delayMs: 20 });
    const controller = new AbortController();
    const response = await fetch(`${service.runtime.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.runtime.demo.keys.workspace}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten' }] }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    expect(upstream.received).toHaveLength(1);
    await upstream.received[0]!.closed;
    expect(upstream.received[0]!.abortedByGateway).toBe(false);
  });

  it('refuses a model the caller cannot see, and a management key, before any upstream call', async () => {
    const hidden = await raw({ model: 'acme/none', messages });
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ error: { code: 404, message: 'No endpoints found for model acme/none that your settings, guardrails and routing preferences allow' } });
    const management = await raw({ model: MODEL, messages }, service.runtime.demo.keys.managementReadWrite);
    expect(management.status).toBe(403);
    expect(management.body).toEqual({ error: { code: 403, message: 'Management keys cannot be used for inference' } });
    expect(upstream.received).toHaveLength(0);
  });

  it('has logged neither a provider credential, a caller key nor a prompt', () => {
    const text = logged.join('\n');
    // There is something to search: a line for each completion served, with its route and status.
    expect(logged.filter((line) => line.includes('/chat/completions')).length).toBeGreaterThanOrEqual(5);
    for (const secret of [FIRST_CREDENTIAL, DEFAULT_CREDENTIAL, service.runtime.demo.keys.workspace, PROMPT, 'confidential']) {
      expect(text).not.toContain(secret);
    }
  });
});
