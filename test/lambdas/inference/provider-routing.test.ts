import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAUDE, CLAUDE_ON_BEDROCK, GPT, useProviderApis } from '../../support/provider-apis';
import { opsProcessArgs } from '../../support/ops-harness';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * The public API's request routing (`provider`, `models`) and the providers' failures, against
 * the provider APIs' stand-ins (docs/providers.md, "Routing a request" and "Failures").
 */
describe('routing a request across provider APIs', () => {
  const apis = useProviderApis();

  const messages = [{ role: 'user' as const, content: 'name three colours' }];
  const chat = (body: Record<string, unknown>) => apis().service.call('/chat/completions', { method: 'POST', key: apis().service.runtime.demo.keys.workspace, body: { messages, ...body } });
  const generation = async (id: string) => (await apis().service.call(`/generation?id=${id}`, { key: apis().service.runtime.demo.keys.workspace })).body.data;

  it('gives way to Bedrock when Anthropic is overloaded (529), and says who served in the answer and the generation', async () => {
    apis().anthropic.script({ kind: 'status', status: 529, errorType: 'overloaded_error', message: 'Overloaded' });
    const answer = await chat({ model: CLAUDE });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ model: CLAUDE, provider: 'Amazon Bedrock' });
    expect([apis().anthropic.received.length, apis().bedrock.received.length]).toEqual([1, 1]);
    await apis().service.runtime.idle();
    expect(await generation(answer.body.id)).toMatchObject({ model: CLAUDE, provider_name: 'Amazon Bedrock' });
  });

  it('keeps to the ordered provider without fallbacks: its failure is the answer', async () => {
    apis().anthropic.script({ kind: 'status', status: 529, errorType: 'overloaded_error', message: 'Overloaded' });
    const answer = await chat({ model: CLAUDE, provider: { order: ['anthropic'], allow_fallbacks: false } });
    expect(answer.status).toBe(502);
    expect(answer.body.error.message).toBe('Provider Anthropic failed (HTTP 529)');
    expect(apis().bedrock.received).toHaveLength(0);
  });

  it('tries the next model of `models` when every endpoint of one fails, without `model` at all', async () => {
    apis().openai.script({ kind: 'status', status: 503, errorType: 'server_error', message: 'down' });
    const answer = await chat({ models: [GPT, CLAUDE] });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ model: CLAUDE, provider: 'Anthropic' });
    // Azure, GPT's second endpoint, has no upstream: skipped.
    expect([apis().openai.received.length, apis().anthropic.received.length]).toEqual([1, 1]);
    expect(apis().anthropic.received[0]!.body).not.toHaveProperty('models');
  });

  it('skips an endpoint whose API cannot carry a parameter under require_parameters, and drops it otherwise', async () => {
    const reasoning = { model: CLAUDE, reasoning: { effort: 'low' }, provider: { order: ['amazon-bedrock', 'anthropic'] } };
    const dropped = await chat(reasoning);
    expect(dropped.body.provider).toBe('Amazon Bedrock');
    const required = await chat({ ...reasoning, provider: { ...reasoning.provider, require_parameters: true } });
    expect(required.body.provider).toBe('Anthropic');
    expect(apis().anthropic.received[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: expect.any(Number) });
  });

  it('narrows with only and ignore, and answers 404 when nothing is left', async () => {
    expect((await chat({ model: CLAUDE, provider: { ignore: ['Anthropic'] } })).body.provider).toBe('Amazon Bedrock');
    expect((await chat({ model: CLAUDE, provider: { only: ['anthropic'] } })).body.provider).toBe('Anthropic');
    const none = await chat({ model: CLAUDE, provider: { only: ['azure'] } });
    expect(none.status).toBe(404);
    expect(none.body.error.message).toBe(`No endpoints found for model ${CLAUDE} that your settings, guardrails and routing preferences allow`);
  });

  it('relays a provider\'s 400 with its message, and never a provider\'s words about keys', async () => {
    const refused = await chat({ model: CLAUDE, messages: [{ role: 'assistant', content: 'I start' }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('Invalid messages: must begin, after any system messages, with a user or tool message for this provider');
    apis().anthropic.script({ kind: 'status', status: 400, errorType: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' });
    const tooLong = await chat({ model: CLAUDE, provider: { only: ['anthropic'] } });
    expect(tooLong.body.error).toEqual({ code: 400, message: 'Provider Anthropic refused the request: prompt is too long: 250000 tokens > 200000 maximum' });
    apis().anthropic.script({ kind: 'status', status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' });
    const keys = await chat({ model: CLAUDE, provider: { only: ['anthropic'] } });
    expect(keys.body.error).toEqual({ code: 502, message: 'Provider Anthropic refused the gateway (HTTP 401)' });
  });

  it('relays a 429 with Retry-After when no other endpoint may serve', async () => {
    apis().anthropic.script({ kind: 'status', status: 429, errorType: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit', headers: { 'retry-after': '17' } });
    const limited = await chat({ model: CLAUDE, provider: { only: ['anthropic'] } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('17');
    apis().bedrock.script({ kind: 'status', status: 429, errorType: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' });
    const throttled = await chat({ model: CLAUDE, provider: { order: ['amazon-bedrock'] } });
    expect(throttled.body.provider).toBe('Anthropic');
  });

  it('ends a stream Anthropic broke off with the error chunk, charging the prompt and what was generated', async () => {
    apis().anthropic.script({ kind: 'stream-error', afterDeltas: 2, errorType: 'overloaded_error', message: 'Overloaded' });
    const answer = await chat({ model: CLAUDE, stream: true, provider: { only: ['anthropic'] } });
    expect(answer.status).toBe(200);
    const events = answer.text.split('\n\n').filter((event) => event.startsWith('data: ')).map((event) => JSON.parse(event.slice(6)));
    expect(events.at(-1)).toMatchObject({ choices: [], error: { code: 502, message: expect.stringContaining('overloaded_error') } });
    expect(answer.text).not.toContain('[DONE]');
    await apis().service.runtime.idle();
    const record = await generation(answer.headers.get('x-generation-id')!);
    expect(record).toMatchObject({ charge_basis: 'provider_usage', tokens_prompt: expect.any(Number) });
    expect(record.tokens_completion).toBeGreaterThan(0);
    expect(record.total_cost).toBeGreaterThan(0);
  });

  it('ends a stream on a Bedrock exception frame with the error chunk, charged the most it could cost', async () => {
    apis().bedrock.script({ kind: 'stream-error', afterDeltas: 2, errorType: 'modelStreamErrorException', message: 'Model failed' });
    const answer = await chat({ model: CLAUDE, stream: true, max_tokens: 100, provider: { only: ['amazon-bedrock'] } });
    const events = answer.text.split('\n\n').filter((event) => event.startsWith('data: ')).map((event) => JSON.parse(event.slice(6)));
    expect(events.at(-1)).toMatchObject({ error: { code: 502, message: expect.stringContaining('ModelStreamErrorException') } });
    await apis().service.runtime.idle();
    expect(await generation(answer.headers.get('x-generation-id')!)).toMatchObject({ charge_basis: 'maximum_cost', tokens_completion: 100 });
  });

  it('refuses an image by address for Bedrock, which takes bytes only', async () => {
    const image = { role: 'user', content: [{ type: 'text', text: 'what is this' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] };
    const refused = await chat({ model: CLAUDE, messages: [image], provider: { only: ['amazon-bedrock'] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('Invalid messages: Amazon Bedrock takes images as data URLs only, not by address');
    expect(apis().bedrock.received).toHaveLength(0);
    expect((await chat({ model: CLAUDE, messages: [image], provider: { only: ['anthropic'] } })).status).toBe(200);
    expect(apis().anthropic.received[0]!.body.messages[0].content[1]).toEqual({ type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } });
  });

  it('lists what is routable with the operator CLI, as it runs, and probes each upstream with one token', async () => {
    // The CLI signs Bedrock's probe from the shell's credentials, and trusts the stand-in's CA as the shell would.
    const caFile = join(apis().service.dataDir, 'bedrock-ca.pem');
    writeFileSync(caFile, apis().bedrock.caPem);
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: caFile, AWS_ACCESS_KEY_ID: 'AKIASTANDIN000000001', AWS_SECRET_ACCESS_KEY: 'stand-in-secret-access-key-0000000000000' };
    const cli = (...args: string[]) =>
      new Promise<{ stdout: string; code: number }>((resolve) => {
        execFile(process.execPath, opsProcessArgs(['upstreams', 'check', '--json', '--data-dir', apis().service.dataDir, ...args]), { cwd: ROOT, env }, (error, out) =>
          resolve({ stdout: out, code: error ? Number(error.code ?? 1) : 0 }),
        );
      });
    const [all, probed] = await Promise.all([cli(), cli('--probe', '--model', `${CLAUDE},${GPT}`)]);
    expect([all.code, probed.code]).toEqual([0, 0]);
    const report = JSON.parse(all.stdout);
    const row = (model: string, tag: string) => report.data.find((candidate: { model: string; tag: string }) => candidate.model === model && candidate.tag === tag);
    expect(row(CLAUDE, 'anthropic')).toMatchObject({ entry: 'anthropic', api: 'anthropic', modelId: 'claude-sonnet-5', problem: null });
    expect(row(CLAUDE, 'amazon-bedrock')).toMatchObject({ entry: 'amazon-bedrock', api: 'bedrock', modelId: CLAUDE_ON_BEDROCK, problem: null });
    expect(row('anthropic/claude-opus-5-fast', 'amazon-bedrock')).toMatchObject({ problem: 'no model id' });
    expect(row(GPT, 'azure')).toMatchObject({ entry: null, problem: 'no upstream' });
    expect(report.routable).toBeLessThan(report.total_count);
    expect(report.probes).toBeUndefined();
    const { probes } = JSON.parse(probed.stdout);
    expect(probes.map((probe: { entry: string; model: string; status: number }) => [probe.entry, probe.model, probe.status]).sort()).toEqual([
      ['amazon-bedrock', CLAUDE, 200],
      ['anthropic', CLAUDE, 200],
      ['openai', GPT, 200],
    ]);
    expect(apis().anthropic.received.at(-1)!.body.max_tokens).toBe(1);
  }, 120_000);
});
