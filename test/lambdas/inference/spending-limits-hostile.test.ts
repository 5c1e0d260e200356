import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from '../../support/local-service';
import { startScriptedUpstream, type ScriptedUpstream } from '../../support/scripted-upstream';
import { eventually } from '../../support/eventually';
import { connectToRuntime } from '../../support/accounts';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { OPEN_PREFIX } from '../../../lambdas/aws/dynamo-open-completions';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';

const MODEL = 'openai/gpt-4o-mini';
const messages = [{ role: 'user', content: 'one two three four' }];

/**
 * Spending limits against the request itself (docs/limits.md, "What a request may cost" and
 * "Leaving early"): every model's endpoints are served by a provider that bills all it was
 * allowed (every byte of the body, the largest token cap for each of `n` choices) and bills a
 * completion whose client left. Whatever shape a request takes and however its client leaves, a
 * key spends no more than its limit, and is charged all the provider billed.
 */
describe('spending limits against hostile requests', () => {
  let service: TestService;
  let upstream: ScriptedUpstream;

  const manage = async (method: string, path: string, body?: unknown) => {
    const answer = await service.call(path, { method, key: service.runtime.demo.keys.managementReadWrite, ...(body === undefined ? {} : { body }) });
    if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    return answer.body;
  };
  const newKey = async (limit: number | null, workspaceId?: string) => {
    const created = await manage('POST', '/keys', { name: `hostile ${randomUUID().slice(0, 8)}`, limit, ...(workspaceId ? { workspace_id: workspaceId } : {}) });
    return { secret: created.key as string, hash: created.data.hash as string };
  };
  const spent = async (hash: string) => (await manage('GET', `/keys/${hash}`)).data.usage as number;
  const complete = (key: string, body: Record<string, unknown>) => service.call('/chat/completions', { method: 'POST', key, body: { model: MODEL, messages, ...body } });
  /** What a request of this shape may cost at most, as a key limited to 0 is told. */
  const estimateOf = async (body: Record<string, unknown>) => {
    const refused = await complete((await newKey(0)).secret, body);
    expect(refused.status).toBe(402);
    return refused.body.error.metadata.request_max_cost_usd as number;
  };
  /** Sends requests of one shape one after the other until the limit refuses one; how many were let in. */
  const untilRefused = async (key: string, body: Record<string, unknown>) => {
    for (let admitted = 0; admitted < 50; admitted++) {
      const answer = await complete(key, body);
      if (answer.status === 402) return admitted;
      expect(answer.status).toBe(200);
    }
    throw new Error('never refused');
  };

  beforeAll(async () => {
    // gpt-4o-mini's context: no provider bills a prompt beyond it.
    upstream = await startScriptedUpstream({ bills: 'as-asked', contextTokens: 128_000 });
    service = await startTestService({ inferenceUpstreams: { '*': upstream.baseUrl('billing') } });
  });
  afterAll(async () => {
    await service?.stop();
    await upstream?.stop();
  });
  beforeEach(() => upstream.reset());

  it('estimates the larger token cap and sends none above the endpoint maximum: max_tokens 1 with max_completion_tokens 1,000,000 stays within the limit', async () => {
    const shape = { max_tokens: 1, max_completion_tokens: 1_000_000 };
    const estimate = await estimateOf(shape);
    const limit = Math.ceil(estimate * 3.5 * 1e6) / 1e6;
    const key = await newKey(limit);
    expect(await untilRefused(key.secret, shape)).toBe(3);
    expect(await spent(key.hash)).toBeLessThanOrEqual(limit);
    for (const received of upstream.received) expect(received.body.max_completion_tokens).toBeLessThan(1_000_000);
    // What the provider billed is what the key was charged: each time the most the request could cost.
    expect(await spent(key.hash)).toBeGreaterThan(2 * estimate);
  });

  it('estimates every choice of n: 128 choices stay within the limit', async () => {
    const shape = { max_tokens: 64, n: 128 };
    const estimate = await estimateOf(shape);
    const single = await estimateOf({ max_tokens: 64 });
    expect(estimate).toBeGreaterThanOrEqual(128 * (single - 1e-6));
    const limit = Math.ceil(estimate * 2.5 * 1e6) / 1e6;
    const key = await newKey(limit);
    // The provider bills the prompt once and the completion for each choice: within the estimate, which counts both for each.
    expect(await untilRefused(key.secret, shape)).toBeGreaterThanOrEqual(2);
    expect(await spent(key.hash)).toBeLessThanOrEqual(limit);
    expect(upstream.received.every((received) => received.body.n === 128)).toBe(true);
  });

  it('counts a prompt carried in tools and images: a 400 KB tool description and eight images by URL stay within the limit', async () => {
    const tools = [{ type: 'function', function: { name: 'f', description: 'x'.repeat(400_000), parameters: { type: 'object' } } }];
    const images = Array.from({ length: 8 }, () => ({ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }));
    for (const shape of [{ max_tokens: 16, tools }, { max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'what are these' }, ...images] }] }]) {
      const estimate = await estimateOf(shape);
      const limit = Math.ceil(estimate * 2.5 * 1e6) / 1e6;
      const key = await newKey(limit);
      expect(await untilRefused(key.secret, shape)).toBeGreaterThanOrEqual(2);
      expect(await spent(key.hash)).toBeLessThanOrEqual(limit);
    }
  });

  it('forwards under a limit only the fields it can price; without one, every field but the routing ones', async () => {
    const extras = { plugins: [{ id: 'web', max_results: 100 }], web_search_options: { search_context_size: 'high' }, service_tier: 'priority' };
    const limited = await newKey(1);
    expect((await complete(limited.secret, { max_tokens: 8, ...extras })).status).toBe(200);
    expect(Object.keys(upstream.received.at(-1)!.body).filter((name) => name in extras)).toEqual([]);
    const open = await newKey(null);
    expect((await complete(open.secret, { max_tokens: 8, ...extras })).status).toBe(200);
    expect(upstream.received.at(-1)!.body).toMatchObject(extras);
  });

  it('refuses a router whose price is variable under a limit, saying why, and serves it without one', async () => {
    const key = await newKey(1);
    const refused = await service.call('/chat/completions', { method: 'POST', key: key.secret, body: { model: 'openrouter/auto', messages, max_tokens: 8 } });
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toContain('admits only requests whose cost can be bounded');
    expect(refused.body.error.metadata).toMatchObject({ layer: 'key_limit', id: key.hash, reason: 'cost_not_bounded' });
    expect(upstream.received).toHaveLength(0);
    const open = await service.call('/chat/completions', { method: 'POST', key: (await newKey(null)).secret, body: { model: 'openrouter/auto', messages, max_tokens: 8 } });
    expect(open.status).toBe(200);
  });

  it('charges a client that leaves before the answer starts what the provider billed: eight of them cannot spend past the limit', async () => {
    const shape = { max_tokens: 200 };
    const whole = await complete((await newKey(null)).secret, shape);
    const cost = whole.body.usage.cost as number;
    const estimate = await estimateOf(shape);
    const limit = Math.ceil(estimate * 3.5 * 1e6) / 1e6;
    const key = await newKey(limit);
    upstream.reset();
    for (let i = 0; i < 8; i++) {
      upstream.script('billing', { kind: 'answer', waitMs: 300 });
      const abort = new AbortController();
      const before = upstream.received.length;
      let answered = false;
      const leaving = fetch(`${service.runtime.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key.secret}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages, ...shape }),
        signal: abort.signal,
      })
        .catch(() => undefined)
        .finally(() => (answered = true));
      // The client leaves once the provider has the request, which answers 300 ms later (or once it is refused), however busy the machine.
      await eventually(async () => expect(answered || upstream.received.length > before).toBe(true), 60_000);
      abort.abort();
      await leaving;
      await service.runtime.idle();
    }
    // Every request that reached the provider ran to its end, and each was charged in full.
    const reached = upstream.received.length;
    expect(reached).toBeGreaterThanOrEqual(3);
    await Promise.all(upstream.received.map((received) => received.closed));
    expect(upstream.received.every((received) => !received.abortedByGateway)).toBe(true);
    await eventually(async () => expect(await spent(key.hash)).toBeCloseTo(reached * cost, 12));
    expect(await spent(key.hash)).toBeLessThanOrEqual(limit);
  });

  it.each([
    ['a key limit its first request starts', 0, 'key'],
    ['a key limit the change seeds', 1, 'key'],
    ["a new workspace's daily budget", 0, 'workspace'],
  ] as const)('holds a limit first set while completions without it run (%s): their estimates count until they end, and nothing passes it', async (_, before, scope) => {
    const shape = { max_tokens: 200 };
    const cost = (await complete((await newKey(null)).secret, shape)).body.usage.cost as number;
    const estimate = await estimateOf(shape);
    const workspace = scope === 'workspace' ? (await manage('POST', '/workspaces', { name: `in flight ${randomUUID().slice(0, 8)}` })).data : undefined;
    const key = await newKey(null, workspace?.id);
    // A key that spent today is seeded by the change; one that did not, by its first request.
    for (let i = 0; i < before; i++) expect((await complete(key.secret, shape)).status).toBe(200);
    upstream.reset();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    for (let i = 0; i < 3; i++) upstream.script('billing', { kind: 'answer', until: released });
    const running = Array.from({ length: 3 }, () => complete(key.secret, shape));
    await eventually(async () => expect(upstream.received).toHaveLength(3), 60_000);
    // Set while the three run: room for four estimates and a half beyond what was spent, of which the three take three.
    const limit = Math.ceil((before * cost + estimate * 4.5) * 1e6) / 1e6;
    if (workspace) await manage('PUT', `/workspaces/${workspace.id}/budgets/daily`, { limit_usd: limit });
    else await manage('PATCH', `/keys/${key.hash}`, { limit });
    expect((await complete(key.secret, shape)).status).toBe(200);
    const refused = await complete(key.secret, shape);
    expect(refused.status).toBe(402);
    expect(refused.body.error.metadata).toMatchObject({ layer: workspace ? 'workspace_budget' : 'key_limit', remaining_usd: expect.any(Number) });
    expect(refused.body.error.metadata.remaining_usd).toBeLessThan(estimate);
    release();
    expect((await Promise.all(running)).map((answer) => answer.status)).toEqual([200, 200, 200]);
    await eventually(async () => expect(await spent(key.hash)).toBeCloseTo((before + 4) * cost, 12));
    // Their estimates stay counted until none of them can be running: nothing more is let in meanwhile.
    expect(await untilRefused(key.secret, shape)).toBe(0);
    expect(await spent(key.hash)).toBeLessThanOrEqual(limit);
  });

  it('reads a stream its client left to its end and charges what the provider reported', async () => {
    const shape = { max_tokens: 100, stream: true };
    const key = await newKey(1);
    upstream.script('billing', { kind: 'answer', delayMs: 50 });
    const abort = new AbortController();
    const response = await fetch(`${service.runtime.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key.secret}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages, ...shape }),
      signal: abort.signal,
    });
    const id = response.headers.get('x-generation-id')!;
    await response.body!.getReader().read();
    abort.abort();
    const received = upstream.received.at(-1)!;
    await received.closed;
    expect(received.abortedByGateway).toBe(false);
    await service.runtime.idle();
    const generation = (await service.call(`/generation?id=${id}`, { key: key.secret })).body.data;
    expect(generation).toMatchObject({ cancelled: true, tokens_completion: 100, charge_basis: 'provider_usage' });
    expect(await spent(key.hash)).toBeCloseTo(generation.total_cost, 12);
  });

  it('charges a stream whose provider failed after it began to answer the most it could cost, and says so', async () => {
    const shape = { max_tokens: 100, stream: true };
    const estimate = await estimateOf(shape);
    const key = await newKey(1);
    upstream.script('billing', { kind: 'error-event', chunks: 2 });
    const answer = await complete(key.secret, shape);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('The model is overloaded');
    const id = answer.headers.get('x-generation-id')!;
    const generation = (await service.call(`/generation?id=${id}`, { key: key.secret })).body.data;
    expect(generation).toMatchObject({ tokens_completion: 100, charge_basis: 'maximum_cost' });
    expect(generation.total_cost).toBeGreaterThan(0);
    expect(generation.total_cost).toBeLessThanOrEqual(estimate);
    expect(await spent(key.hash)).toBeCloseTo(generation.total_cost, 12);
  });

  it('answers a body nested deeper than 64 levels with a 400 naming the limit', async () => {
    const key = await newKey(null);
    const deep = `{"model":"${MODEL}","messages":[{"role":"user","content":"hi"}],"metadata":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const answer = await service.call('/chat/completions', { method: 'POST', key: key.secret, body: deep, headers: { 'Content-Type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: { code: 400, message: 'Request body nests deeper than 64 levels', metadata: { limit: 64 } } });
  });

  // Last: after every shape above, clients that left and providers that failed among them.
  it('leaves no limited completion open once its request has ended, so the rollup records none of them twice', async () => {
    await service.runtime.idle();
    const stores = connectToRuntime(service.runtime);
    try {
      const { Items = [] } = await stores.documentClient.send(
        new ScanCommand({ TableName: TABLE_SCHEMAS.usage.localName, FilterExpression: 'begins_with(pk, :open)', ExpressionAttributeValues: { ':open': OPEN_PREFIX }, ConsistentRead: true }),
      );
      expect(Items).toEqual([]);
    } finally {
      stores.destroy();
    }
    expect((await service.runtime.rollUpUsage()).died).toBe(0);
  });
});
