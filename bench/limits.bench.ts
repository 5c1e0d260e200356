/**
 * Benchmark of spending limits against hostile requests (`npm run bench`; docs/limits.md, "What
 * a request may cost"): each request shape a caller with an inference key can send, and each way
 * of leaving, against a provider that bills all it was allowed (every byte of the body, the
 * largest token cap for each of `n` choices) and bills what its client left. For each, a key
 * with a limit of a few estimates sends requests, 16 at a time, until every one is refused; the
 * table shows what the key spent against its limit and the worst overrun, beside the bound the
 * docs state (none: a request's estimate covers all it can be billed). One key's limit is set
 * while three of its completions run without it: they count at their estimates until they end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRuntime, type LocalRuntime } from '../local/runtime';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { startScriptedUpstream, type ScriptedUpstream } from '../test/support/scripted-upstream';

const MODEL = 'openai/gpt-4o-mini';
const question = { role: 'user', content: 'one two three four' };
const CONCURRENCY = 16;
/** When a client that leaves before the answer goes: after its request reached the provider, however slow the machine, and before the provider answers (twice as late). */
const LEAVE_AFTER_MS = 500;
/** The limit each shape meets, in its own estimates. */
const ESTIMATES_PER_LIMIT = 4;

interface Shape {
  name: string;
  body: Record<string, unknown>;
  /** How the client leaves: stays, leaves before the answer starts, or after the first bytes of a stream. */
  leaves?: 'before-answer' | 'mid-stream';
  /** What the provider does with each request. */
  provider?: Parameters<ScriptedUpstream['script']>[1];
  /** This many completions of the key run, without a limit, when its limit is set: they count at their estimates until they end. */
  runningWhenSet?: number;
}

const SHAPES: Shape[] = [
  { name: 'max_tokens 1, max_completion_tokens 1,000,000', body: { max_tokens: 1, max_completion_tokens: 1_000_000 } },
  { name: 'n 128', body: { max_tokens: 64, n: 128 } },
  { name: 'max_tokens above the endpoint maximum', body: { max_tokens: 10_000_000 } },
  { name: '400 KB tool description', body: { max_tokens: 16, tools: [{ type: 'function', function: { name: 'f', description: 'x'.repeat(400_000), parameters: { type: 'object' } } }] } },
  { name: 'images by URL', body: { max_tokens: 16, messages: [{ role: 'user', content: Array.from({ length: 8 }, () => ({ type: 'image_url', image_url: { url: 'https://example.com/a.png' } })) }] } },
  { name: 'web search and priority tier', body: { max_tokens: 16, plugins: [{ id: 'web' }], web_search_options: {}, service_tier: 'priority' } },
  { name: 'client leaves before the answer', body: { max_tokens: 2000 }, leaves: 'before-answer', provider: { kind: 'answer', waitMs: LEAVE_AFTER_MS * 2 } },
  { name: 'client leaves mid-stream', body: { max_tokens: 2000, stream: true }, leaves: 'mid-stream', provider: { kind: 'answer', delayMs: 30 } },
  { name: 'provider fails mid-stream', body: { max_tokens: 2000, stream: true }, provider: { kind: 'error-event', chunks: 2 } },
  { name: 'limit set while 3 run without it', body: { max_tokens: 200 }, runningWhenSet: 3 },
];

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-limits-bench-'));
  // gpt-4o-mini's context: no provider bills a prompt beyond it.
  const upstream = await startScriptedUpstream({ bills: 'as-asked', contextTokens: 128_000 });
  const runtime = await startLocalRuntime({ port: 0, persist: false, dataDir, logLevel: 'ERROR', inferenceUpstreams: { '*': upstream.baseUrl('billing') } });
  try {
    console.log(`Spending limits against hostile requests: ${CONCURRENCY} at a time until refused, each key limited to ${ESTIMATES_PER_LIMIT} estimates`);
    console.log(`${'shape'.padEnd(48)} ${'estimate USD'.padStart(13)} ${'limit USD'.padStart(11)} ${'spent USD'.padStart(11)} ${'admitted'.padStart(8)} ${'spent/limit'.padStart(11)} ${'overrun'.padStart(9)} ${'bound'.padStart(6)}`);
    let worst = 0;
    for (const shape of SHAPES) {
      const row = await measure(runtime, upstream, shape);
      worst = Math.max(worst, row.spent - row.limit);
      console.log(
        `${shape.name.padEnd(48)} ${row.estimate.toFixed(6).padStart(13)} ${row.limit.toFixed(6).padStart(11)} ${row.spent.toFixed(6).padStart(11)} ${String(row.admitted).padStart(8)} ${(row.spent / row.limit).toFixed(3).padStart(11)} ${Math.max(0, row.spent - row.limit).toFixed(6).padStart(9)} ${'0'.padStart(6)}`,
      );
    }
    console.log(`worst overrun: ${worst > 0 ? worst.toFixed(6) : '0'} USD past a limit (the stated bound: 0)`);
  } finally {
    await runtime.stop();
    await upstream.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measure(runtime: LocalRuntime, upstream: ScriptedUpstream, shape: Shape) {
  const body = { model: MODEL, messages: [question], ...shape.body };
  const probe = await call(runtime, (await newKey(runtime, 0)).secret, body);
  const estimate = (probe.body as { error: { metadata: { request_max_cost_usd: number } } }).error.metadata.request_max_cost_usd;
  const limit = Math.ceil(estimate * ESTIMATES_PER_LIMIT * 1e6) / 1e6;
  upstream.reset();
  const running = shape.runningWhenSet ? await runUnlimited(runtime, upstream, body, shape.runningWhenSet) : undefined;
  const key = running?.key ?? (await newKey(runtime, limit));
  if (running) await call(runtime, runtime.demo.keys.managementReadWrite, { limit }, `/keys/${key.hash}`, 'PATCH');
  // Batches until one reaches the provider not at all: every request of it was refused.
  for (let reached = -1; reached !== upstream.received.length; ) {
    reached = upstream.received.length;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        if (shape.provider) upstream.script('billing', shape.provider);
        return send(runtime, key.secret, body, shape.leaves);
      }),
    );
    // Completions held at the provider would hold this up: they end after the batches.
    if (!running) await runtime.idle();
  }
  await running?.end();
  const admitted = upstream.received.length;
  await runtime.idle();
  upstream.reset();
  const spent = ((await call(runtime, runtime.demo.keys.managementReadWrite, undefined, `/keys/${key.hash}`, 'GET')).body as { data: { usage: number } }).data.usage;
  return { estimate, limit, spent, admitted };
}

/** `count` completions of a new key without a limit, held at the provider until `end`. */
async function runUnlimited(runtime: LocalRuntime, upstream: ScriptedUpstream, body: Record<string, unknown>, count: number) {
  const key = await newKey(runtime, null);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  for (let i = 0; i < count; i++) upstream.script('billing', { kind: 'answer', until: released });
  const answers = Array.from({ length: count }, () => call(runtime, key.secret, body));
  while (upstream.received.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
  return { key, end: async () => (release(), await Promise.all(answers), await runtime.idle()) };
}

/** One request as a client that may leave sends it: its status, 0 for one that left. */
async function send(runtime: LocalRuntime, key: string, body: Record<string, unknown>, leaves: Shape['leaves']): Promise<number> {
  const abort = new AbortController();
  if (leaves === 'before-answer') setTimeout(() => abort.abort(), LEAVE_AFTER_MS);
  try {
    const response = await fetch(`${runtime.baseUrl}/chat/completions`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: abort.signal });
    if (leaves === 'mid-stream' && response.status === 200) {
      await response.body!.getReader().read();
      abort.abort();
      return 0;
    }
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}

async function call(runtime: LocalRuntime, key: string, body: unknown, path = '/chat/completions', method = 'POST') {
  const response = await fetch(`${runtime.baseUrl}${path}`, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, body: (await response.json()) as unknown };
}

async function newKey(runtime: LocalRuntime, limit: number | null): Promise<{ secret: string; hash: string }> {
  const created = (await call(runtime, runtime.demo.keys.managementReadWrite, { name: `bench ${Math.random().toString(36).slice(2, 8)}`, limit }, '/keys')).body as { key: string; data: { hash: string } };
  return { secret: created.key, hash: created.data.hash };
}

void main();
