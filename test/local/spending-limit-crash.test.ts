import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalProcess, type LocalProcess } from '../support/local-process';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream';
import { eventually } from '../support/eventually';

const MODEL = 'openai/gpt-4o-mini';
const PROVIDER = 'slow';

/**
 * `kill -9` of `npm start` while completions hold a key's whole limit: the next start folds what
 * they held at once (its holds are its own, by its start) and charges each its estimate, written
 * ahead before its provider was asked, since the provider billed them; its rollup records them as
 * that, and a key's without a limit at the most they could cost; no burst overruns the limit.
 */
describe('a spending limit after kill -9', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-limit-crash-'));
  let upstream: ScriptedUpstream;
  let service: LocalProcess | undefined;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
  });
  afterAll(async () => {
    await service?.killHard();
    await upstream.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('charges the completions of a killed process their estimates when the next one starts, and never overruns', async () => {
    const env = { MODELGATE_INFERENCE_UPSTREAMS: JSON.stringify({ '*': upstream.baseUrl(PROVIDER) }) };
    service = await startLocalProcess(dataDir, env);
    const manage = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${service!.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${service!.keys.managementReadWrite}`, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: (await response.json()) as any };
    };
    const created = await manage('POST', '/keys', { name: 'limited', limit: 0 });
    expect(created.status).toBe(201);
    const { key, data } = created.json as { key: string; data: { hash: string } };
    const unlimited = (await manage('POST', '/keys', { name: 'unlimited' })).json as { key: string; data: { hash: string } };
    const complete = (stream: boolean, signal?: AbortSignal, secret = key) =>
      fetch(`${service!.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: MODEL, stream, max_tokens: 20, messages: [{ role: 'user', content: 'one two three' }] }),
        ...(signal ? { signal } : {}),
      });

    // A limit of 0 refuses at once, saying what a (streamed) request may cost: five of them make the limit.
    const refused = await complete(true);
    expect(refused.status).toBe(402);
    const estimate = ((await refused.json()) as any).error.metadata.request_max_cost_usd as number;
    const limit = Math.ceil(estimate * 5 * 1e6) / 1e6;
    expect((await manage('PATCH', `/keys/${data.hash}`, { limit })).status).toBe(200);

    // Five completions start and stall after their first chunk: they hold the whole limit. Two
    // more, of a key without a limit, stall beside them.
    upstream.script(PROVIDER, ...Array.from({ length: 7 }, () => ({ kind: 'stall-after' as const, chunks: 1 })));
    const running = new AbortController();
    const generationIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await complete(true, running.signal);
      expect(answer.status).toBe(200);
      generationIds.push(answer.headers.get('x-generation-id')!);
      await answer.body!.getReader().read();
    }
    expect((await complete(true)).status).toBe(402);
    const unlimitedIds: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = await complete(true, running.signal, unlimited.key);
      expect(answer.status).toBe(200);
      unlimitedIds.push(answer.headers.get('x-generation-id')!);
      await answer.body!.getReader().read();
    }

    await service.killHard();
    running.abort();
    service = await startLocalProcess(dataDir, env);

    // What they held is folded at once, each charged its estimate: the limit is spent. The start's
    // rollup records the five as that, their generations saying so (docs/limits.md, "Leaving early
    // and failures"): what the key's view shows is what its limit counts.
    const spent = await complete(false);
    expect(spent.status).toBe(402);
    expect(((await spent.json()) as any).error.metadata.remaining_usd).toBeLessThan(estimate);
    const shown = await eventually(async () => {
      const { usage } = (await manage('GET', `/keys/${data.hash}`)).json.data as { usage: number };
      expect(usage).toBeGreaterThan(0);
      return usage;
    }, 20_000);
    expect(shown).toBeCloseTo(5 * estimate, 12);
    expect(shown).toBeLessThanOrEqual(limit);
    for (const id of generationIds) {
      const generation = await manage('GET', `/generation?id=${id}`);
      expect(generation.status).toBe(200);
      expect(generation.json.data).toMatchObject({ id, charge_basis: 'maximum_cost', streamed: true, model: MODEL, api_key_hash: data.hash });
      expect(generation.json.data.total_cost).toBeCloseTo(estimate, 12);
    }
    const activity = await manage('GET', `/activity?api_key_hash=${data.hash}`);
    expect(activity.json.data).toEqual([expect.objectContaining({ model: MODEL, requests: 5 })]);
    // The key without a limit: its two are recorded too, each at the most it could cost.
    let costs = 0;
    for (const id of unlimitedIds) {
      const generation = await manage('GET', `/generation?id=${id}`);
      expect(generation.json.data).toMatchObject({ id, charge_basis: 'maximum_cost', api_key_hash: unlimited.data.hash });
      expect(generation.json.data.total_cost).toBeGreaterThan(0);
      costs += generation.json.data.total_cost as number;
    }
    expect((await manage('GET', `/keys/${unlimited.data.hash}`)).json.data.usage).toBeCloseTo(costs, 12);
    const raised = Math.ceil(estimate * 10 * 1e6) / 1e6;
    expect((await manage('PATCH', `/keys/${data.hash}`, { limit: raised })).status).toBe(200);
    const answered = await complete(false);
    expect(answered.status).toBe(200);

    // A burst of 40 at once, each answered after a pause so that all are in flight together: what
    // is let in stays within the limit less the five estimates charged, the rest are refused.
    upstream.script(PROVIDER, ...Array.from({ length: 40 }, () => ({ kind: 'answer' as const, waitMs: 1_500 })));
    const burst = await Promise.all(Array.from({ length: 40 }, () => complete(false).then(async (answer) => ({ status: answer.status, body: await answer.json() }))));
    expect(burst.every((answer) => answer.status === 200 || answer.status === 402)).toBe(true);
    // A JSON request's estimate is a little below a stream's (no stream options in its body).
    const each = (burst.find((answer) => answer.status === 402)!.body as any).error.metadata.request_max_cost_usd as number;
    expect(burst.filter((answer) => answer.status === 200).length).toBeLessThanOrEqual(Math.floor((raised - 5 * estimate) / each));
    const after = await manage('GET', `/keys/${data.hash}`);
    expect(after.json.data.usage).toBeGreaterThan(shown);
    expect(after.json.data.usage).toBeLessThanOrEqual(raised);
  }, 180_000);
});
