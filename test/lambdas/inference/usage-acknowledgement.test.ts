import { PassThrough } from 'node:stream';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import type { CatalogCache } from '../../../lambdas/catalog/catalog-cache';
import { CatalogIndex } from '../../../lambdas/catalog/catalog-index';
import { DEVELOPMENT_PROVIDER } from '../../../lambdas/config';
import { createInferenceApi, type InferenceApiDeps } from '../../../lambdas/inference/inference-api';
import { INFERENCE_ROUTES } from '../../../lambdas/inference/routes';
import { upstreamOptions } from '../../../lambdas/wiring/upstream-options';
import type { UsageRecord } from '../../../lambdas/usage/usage';
import type { OpenCompletion } from '../../../lambdas/spending/open-completions';
import { NOTHING_RESERVED, type Reservation } from '../../../lambdas/spending/reservation';
import type { SpendScope } from '../../../lambdas/spending/limits';
import { authenticationRecords } from '../../support/accounts';
import { catalogEntry, providerEndpoint } from '../../support/catalog-fixtures';
import { makeOrganization, makeWorkspaceKey } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';
import { lambdaContext } from '../../support/telemetry';

const SECRET = `sk-mg-v1-${'1'.repeat(64)}`;
const organization = makeOrganization({ id: 'org-1', name: 'Org' });
const key = makeWorkspaceKey({ hash: hashApiKey(SECRET), organizationId: 'org-1', workspaceId: null, name: 'k', label: 'sk-mg-v1-111...1111' });

/** A usage store whose writes finish when the test says, recording what happened in order. */
class GatedUsage {
  readonly events: string[] = [];
  private release: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private writeStarted: (() => void) | undefined;
  readonly started = new Promise<void>((resolve) => (this.writeStarted = resolve));

  record = (record: UsageRecord) => {
    this.events.push(`record ${record.promptTokens}+${record.completionTokens}`);
    this.writeStarted!();
    return new Promise<void>((resolve, reject) => (this.release = { resolve, reject }));
  };

  finish(error?: Error): void {
    if (error) this.release!.reject(error);
    else this.release!.resolve();
  }
}

/** The response stream as Lambda hands it over: what was written, and whether it ended. */
function responseStream() {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  let ended = false;
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  const end = new Promise<void>((resolve) => stream.on('end', () => resolve(void (ended = true))));
  return {
    stream,
    get ended() {
      return ended;
    },
    /** Settles when the stream has ended: the whole answer is written. */
    end,
    /** The body: what follows the prelude's eight NUL bytes. */
    body() {
      const all = Buffer.concat(chunks);
      const start = all.indexOf(Buffer.alloc(8));
      return start < 0 ? '' : all.subarray(start + 8).toString('utf8');
    },
    status() {
      const all = Buffer.concat(chunks);
      const start = all.indexOf(Buffer.alloc(8));
      return start < 0 ? undefined : (JSON.parse(all.subarray(0, start).toString('utf8')) as { statusCode: number }).statusCode;
    },
  };
}

function completionEvent(body: Record<string, unknown>): APIGatewayProxyEvent {
  return {
    resource: '/api/v1/chat/completions',
    path: '/api/v1/chat/completions',
    httpMethod: 'POST',
    headers: { Authorization: `Bearer ${SECRET}`, 'Content-Type': 'application/json' },
    multiValueHeaders: {},
    body: JSON.stringify({ model: 'acme/chat', messages: [{ role: 'user', content: 'one two three' }], ...body }),
    isBase64Encoded: false,
    requestContext: { requestId: 'r1', identity: { sourceIp: '203.0.113.9' } },
  } as unknown as APIGatewayProxyEvent;
}

/**
 * The inference operation over one key and one model (`acme/chat`, served by Acme), the key
 * without a spending limit, with what a suite gives on top: its upstream, usage store, logger.
 */
function inferenceApi(clock: FixedClock, deps: Pick<InferenceApiDeps, 'upstream'> & Partial<InferenceApiDeps>) {
  return createInferenceApi(INFERENCE_ROUTES, {
    accounts: authenticationRecords(organization, key),
    catalog: { get: async () => new CatalogIndex([catalogEntry('acme/chat', { endpoints: [providerEndpoint('acme', { provider_name: 'Acme' })] })]) } as unknown as CatalogCache,
    clock,
    regionalHostnames: {},
    corsAllowedOrigins: ['*'],
    usage: { record: async () => undefined },
    generations: { put: async () => undefined },
    openCompletions: { open: async () => undefined, close: async () => undefined },
    responses: { put: async () => 'stored', get: async () => undefined, delete: async () => false },
    // The key has no spending limit: no request asks one; its estimate is counted in flight, written nowhere here.
    spending: { reserve: () => Promise.reject(new Error('no spending limit applies here')), track: () => NOTHING_RESERVED },
    resourceMetadataUrl: 'https://api.example.com/api/v1/.well-known/oauth-protected-resource',
    logger: { error: () => undefined },
    ...deps,
  });
}

/**
 * Lets every pending promise, stream event and I/O callback run: a few turns of the event loop,
 * no clock. What the handler can do without the gated write it has done by then.
 */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A completion is acknowledged only once its usage is durable: no body, no
 * `data: [DONE]` and no end of the response stream before the usage write has resolved, so
 * an invocation that ends or a process that dies cannot leave a received completion uncounted.
 */
describe('POST /chat/completions acknowledges a completion only after its usage write', () => {
  const clock = new FixedClock(new Date('2026-11-18T12:00:00Z'));
  const logged: { message: string; fields: Record<string, unknown> }[] = [];
  let usage: GatedUsage;
  const api = () =>
    inferenceApi(clock, {
      upstream: upstreamOptions({ inferenceUpstreams: { '*': DEVELOPMENT_PROVIDER }, upstreamTimeoutSeconds: 5 }, { clock, newId: () => 'id-1' }),
      usage,
      logger: { error: (message, fields) => void logged.push({ message, fields }) },
      newId: () => 'answer-1',
    });
  const context = lambdaContext('inference', 'req-1') as Context;
  beforeEach(() => {
    usage = new GatedUsage();
    logged.length = 0;
  });

  it.each([
    ['a streamed completion', { stream: true }, (body: string) => body.endsWith('data: [DONE]\n\n')],
    ['a JSON completion', {}, (body: string) => body.includes('"choices"')],
  ])('holds back the end of %s until the usage write resolves', async (_name, request, complete) => {
    const response = responseStream();
    const handled = api()(completionEvent(request), response.stream, context);
    let resolved = false;
    void handled.then(() => (resolved = true));

    await usage.started;
    await settle();
    expect(usage.events).toEqual(['record 3+3']);
    expect(complete(response.body())).toBe(false);
    expect(response.ended).toBe(false);
    expect(resolved).toBe(false);

    usage.finish();
    expect(await handled).toBe(200);
    await response.end;
    expect(complete(response.body())).toBe(true);
    expect(response.ended).toBe(true);
  });

  it('answers 503 instead of a JSON completion whose usage write failed, and logs why', async () => {
    const response = responseStream();
    const handled = api()(completionEvent({}), response.stream, context);
    await usage.started;
    usage.finish(Object.assign(new Error('throughput exceeded'), { name: 'ProvisionedThroughputExceededException' }));
    expect(await handled).toBe(503);
    await response.end;
    expect(response.status()).toBe(503);
    expect(JSON.parse(response.body())).toEqual({
      error: { code: 503, message: 'The completion could not be recorded; retry the request' },
    });
    expect(logged).toEqual([
      { message: 'usage not recorded', fields: { requestId: 'req-1', error: 'ProvisionedThroughputExceededException', detail: 'throughput exceeded' } },
    ]);
  });

  it('ends a stream whose usage write failed with a last chunk carrying the error, and no [DONE]', async () => {
    const response = responseStream();
    const handled = api()(completionEvent({ stream: true }), response.stream, context);
    await usage.started;
    usage.finish(new Error('connection reset'));
    expect(await handled).toBe(200);
    await response.end;
    const events = response.body().split('\n\n').filter(Boolean);
    expect(events.at(-1)!.startsWith('data: ')).toBe(true);
    expect(JSON.parse(events.at(-1)!.slice(6))).toEqual({
      id: 'gen-answer-1',
      object: 'chat.completion.chunk',
      created: Date.parse('2026-11-18T12:00:00Z') / 1000,
      model: 'acme/chat',
      provider: 'Acme',
      choices: [],
      error: { code: 503, message: 'The completion could not be recorded; retry the request' },
    });
    expect(response.body()).not.toContain('[DONE]');
  });

  it('writes the usage record and nothing else: the invocation ends with the answer', async () => {
    const response = responseStream();
    const handled = api()(completionEvent({ stream: true }), response.stream, context);
    await usage.started;
    usage.finish();
    expect(await handled).toBe(200);
    expect(response.ended).toBe(true);
    expect(usage.events).toEqual(['record 3+3']);
  });
});

describe('a stream whose provider falls silent', () => {
  const clock = new FixedClock(new Date('2026-11-18T12:00:00Z'));
  const chunk = (body: Record<string, unknown>) => `data: ${JSON.stringify(body)}\n\n`;
  /** A provider that sends one word, thinks for `silentMs`, then ends its answer. */
  const thinking = (silentMs: number) => async () => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(encoder.encode(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'one' } }] })));
        await new Promise((resolve) => setTimeout(resolve, silentMs));
        controller.enqueue(encoder.encode(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } }) + 'data: [DONE]\n\n'));
        controller.close();
      },
    });
    return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
  };
  const api = (silentMs: number) =>
    inferenceApi(clock, {
      upstream: { ...upstreamOptions({ inferenceUpstreams: { '*': 'https://llm.example.com/v1' }, upstreamTimeoutSeconds: 5 }, { clock, newId: () => 'id-1' }), transport: thinking(silentMs) },
      keepaliveMs: 90,
    });

  it('gets an SSE comment in every gap longer than the keepalive, and none when it does not fall silent', async () => {
    const silent = responseStream();
    expect(await api(400)(completionEvent({ stream: true }), silent.stream, lambdaContext('inference', 'req-2') as Context)).toBe(200);
    const events = silent.body().split('\n\n').filter(Boolean);
    const comments = events.filter((event) => event === ': keep-alive').length;
    expect(comments).toBeGreaterThanOrEqual(3);
    expect(events[0]).toContain('"content":"one"');
    expect(events.at(-1)).toBe('data: [DONE]');
    const busy = responseStream();
    await api(0)(completionEvent({ stream: true }), busy.stream, lambdaContext('inference', 'req-3') as Context);
    expect(busy.body()).not.toContain(': keep-alive');
  });
});

/**
 * Under a spending limit the estimate is written ahead before any provider is asked, so a function
 * that dies mid-answer leaves it charged; the charge replaces it at the end (docs/limits.md,
 * "Leaving early and failures"). The gate's writes themselves are tested on DynamoDB in
 * test/lambdas/spending/spending-gate.test.ts; here, what the operation asks of its reservation.
 */
const clock = new FixedClock(new Date('2026-11-18T12:00:00Z'));

/** A provider's answer: a completion of one token, or an error of `status`. */
const providerAnswer = (status?: number) =>
  status ? new Response('{"error":{"message":"down"}}', { status }) : new Response(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1 } }), { headers: { 'Content-Type': 'application/json' } });

/** A reservation whose every step is recorded in `steps`, failing where `failing` says; charged, kept or released once, as the gate's are. */
function steppedReservation(steps: string[], failing: { ahead?: boolean; charge?: boolean }): Reservation {
  let done = false;
  const once = (step: string) => !done && Boolean(steps.push(step)) && (done = true);
  return {
    estimate: '0.01',
    writeAhead: () => (steps.push('ahead'), throttledWhen(failing.ahead)),
    charge: (cost: string) => throttledWhen(once(`charge ${cost}`) && failing.charge),
    keep: () => void once('keep'),
    release: async () => void once('release'),
  };
}

/** The open completions and the usage store, each step recorded in `steps`: the put as `open` says, then failing where `failing` says. */
function stepped(steps: string[], failing: { open?: boolean; usage?: boolean }, open: (completion: OpenCompletion) => Promise<void>): Pick<InferenceApiDeps, 'openCompletions' | 'usage'> {
  return {
    openCompletions: { open: (completion) => open(completion).then(() => throttledWhen(failing.open)), close: async () => void steps.push('close') },
    usage: { record: () => (steps.push('usage'), throttledWhen(failing.usage)) },
  };
}

/** A write that fails as a throttled one does when `when` says. */
const throttledWhen = (when: boolean | undefined) => (when ? Promise.reject(new Error('throttled')) : Promise.resolve());

describe('a completion under a spending limit', () => {
  const limited = { ...key, limit: { amountUsd: '5', reset: null, since: '2026-01-01T00:00:00.000Z' } };
  const run = async (failing: { ahead?: boolean; open?: boolean; charge?: boolean; usage?: boolean }, status?: number) => {
    const steps: string[] = [];
    const logged: string[] = [];
    const reservation = steppedReservation(steps, failing);
    const transport = async () => (steps.push('provider'), providerAnswer(status));
    const response = responseStream();
    const answered = await inferenceApi(clock, {
      accounts: authenticationRecords(organization, limited),
      upstream: { ...upstreamOptions({ inferenceUpstreams: { '*': 'https://llm.example.com/v1' }, upstreamTimeoutSeconds: 5 }, { clock, newId: () => 'id-1' }), transport },
      spending: { reserve: async () => reservation, track: () => NOTHING_RESERVED },
      ...stepped(steps, failing, async () => void steps.push('open')),
      logger: { error: (message) => void logged.push(message) },
    })(completionEvent({}), response.stream, lambdaContext('inference', 'req-4') as Context);
    await response.end;
    return { answered, steps, logged, body: response.body() };
  };

  it('writes the estimate ahead of the provider beside the open completion, charges the cost once the usage write has landed, and closes it after', async () => {
    const { answered, steps } = await run({});
    expect(answered).toBe(200);
    expect(steps).toEqual(['ahead', 'open', 'provider', 'usage', expect.stringMatching(/^charge 0\.0000\d+$/), 'close']);
  });

  it.each([
    ['the write ahead', { ahead: true }],
    ['the open completion', { open: true }],
  ])('asks no provider when %s fails: a 503, the reservation given back and the completion closed', async (_, failing) => {
    const { answered, steps, body, logged } = await run(failing);
    expect(answered).toBe(503);
    expect(JSON.parse(body).error.message).toBe('The request could not be counted against its spending limits, and no provider was asked; retry the request');
    expect(steps).toEqual(['ahead', 'open', 'release', 'close']);
    expect(logged).toEqual(['spend not written ahead']);
  });

  it('answers and records usage when the charge write fails: the estimate written ahead stays charged', async () => {
    const { answered, steps, logged } = await run({ charge: true });
    expect(answered).toBe(200);
    expect(steps).toEqual(['ahead', 'open', 'provider', 'usage', expect.stringMatching(/^charge /), 'close']);
    expect(logged).toEqual(['spend not recorded; its estimate stays charged']);
  });

  it('leaves the completion open and its estimate charged and in flight when its usage write fails: the rollup finds its generation and closes it, or records it if none was written', async () => {
    const { answered, steps, logged } = await run({ usage: true });
    expect(answered).toBe(503);
    expect(steps).toEqual(['ahead', 'open', 'provider', 'usage', 'keep']);
    expect(logged).toEqual(['usage not recorded']);
  });

  it('gives the estimate back and closes the completion when no provider answered', async () => {
    const { answered, steps } = await run({}, 503);
    expect(answered).toBe(502);
    expect(steps).toEqual(['ahead', 'open', 'provider', 'release', 'close']);
  });
});

describe('a completion without a spending limit', () => {
  /** One unlimited completion whose open completion's put lands when `landed` says (and fails when `failing.open`). */
  const run = async (failing: { open?: boolean; usage?: boolean }, status?: number) => {
    const steps: string[] = [];
    const logged: string[] = [];
    const opened: OpenCompletion[] = [];
    const tracked: Array<{ scopes: readonly SpendScope[]; estimate: string }> = [];
    let land = () => undefined as void;
    const landed = new Promise<void>((resolve) => (land = resolve));
    // The put is still on its way when the provider answers: the provider's call did not wait for it, the answer's relay does.
    const transport = async () => (steps.push('provider'), setTimeout(land, 20), providerAnswer(status));
    const response = responseStream();
    const answered = await inferenceApi(clock, {
      upstream: { ...upstreamOptions({ inferenceUpstreams: { '*': 'https://llm.example.com/v1' }, upstreamTimeoutSeconds: 5 }, { clock, newId: () => 'id-1' }), transport },
      ...stepped(steps, failing, async (completion) => {
        steps.push('open asked');
        opened.push(completion);
        await landed;
        steps.push('open landed');
      }),
      spending: {
        reserve: () => Promise.reject(new Error('no spending limit applies here')),
        track: (scopes, estimate) => (tracked.push({ scopes, estimate }), steppedReservation(steps, {})),
      },
      logger: { error: (message) => void logged.push(message) },
    })(completionEvent({ max_tokens: 100 }), response.stream, lambdaContext('inference', 'req-5') as Context);
    await response.end;
    return { answered, steps, logged, opened, tracked };
  };

  it('keeps it open and in flight beside the provider call, at the most it could cost, relays nothing before the put has landed, and closes it once its usage is recorded', async () => {
    const { answered, steps, logged, opened, tracked } = await run({});
    expect(answered).toBe(200);
    expect(steps).toEqual(['open asked', 'ahead', 'provider', 'open landed', 'usage', expect.stringMatching(/^charge 0\.0000\d+$/), 'close']);
    expect(logged).toEqual([]);
    // Counted in flight on its key's spend items, at the estimate it is kept open at.
    expect(tracked).toEqual([{ scopes: [{ kind: 'key', organizationId: key.organizationId, keyHash: key.hash }], estimate: opened[0]!.usage.cost }]);
    // 3 prompt tokens' worth of body and 100 completion tokens at their bound, marked so.
    expect(opened[0]!.usage).toMatchObject({ keyHash: key.hash, charge: 'maximum', completionTokens: 100 });
    expect(Number(opened[0]!.usage.cost)).toBeGreaterThan(0);
  });

  it('answers when the put fails: logged, nothing to close', async () => {
    const { answered, steps, logged } = await run({ open: true });
    expect(answered).toBe(200);
    expect(steps).toEqual(['open asked', 'ahead', 'provider', 'open landed', 'usage', expect.stringMatching(/^charge /)]);
    expect(logged).toEqual(['open completion not kept']);
  });

  it('leaves it open and in flight when its usage write fails after the provider answered: the rollup records it', async () => {
    const { answered, steps } = await run({ usage: true });
    expect(answered).toBe(503);
    expect(steps).toEqual(['open asked', 'ahead', 'provider', 'open landed', 'usage', 'keep']);
  });

  it('closes it when no provider answered', async () => {
    const { answered, steps } = await run({}, 503);
    expect(answered).toBe(502);
    expect(steps).toEqual(['open asked', 'ahead', 'provider', 'release', 'open landed', 'close']);
  });
});
