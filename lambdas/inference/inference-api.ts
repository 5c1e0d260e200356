import type { Context } from 'aws-lambda';
import { randomId, type IdGenerator } from '../clock';
import type { AuthenticationDeps } from '../credentials/authenticate';
import type { CatalogCache } from '../catalog/catalog-cache';
import { budgetLayers } from '../budgets/layers';
import { completionLimit, maximumCost, tokenBounds, type BillableRequest } from '../budgets/estimate';
import { unboundedRefusal } from '../budgets/refusal';
import type { Admission, BudgetGate } from '../budgets/budget-gate';
import { buildCallerPolicy, loadCallerGuardrails, regionForHost } from '../catalog/caller-policy';
import { NotFoundError, UnavailableError, UpstreamError } from '../errors';
import { toErrorBody } from '../http/api-errors';
import { corsHeaders } from '../http/cors';
import { requestAdmission } from '../http/dispatcher';
import { header, requestHost, requestIdOf } from '../http/request';
import { StreamingResponse, type StreamingHandler } from '../http/streaming';
import { bodyValidators } from '../openapi/validators/inference.generated';
import { usageRecord, type UsageRecord, type UsageStore } from '../usage/usage';
import type { ProviderEndpoint } from '../catalog/types';
import { ZERO, minus } from '../usd';
import type { GenerationStore } from '../usage/generations';
import { generationRecord, noteChunk, type Observed } from './generation-facts';
import type { CompletionUsage } from './relayed-usage';
import { parseChatRequest } from './chat-request';
import { billableChatRequest, upstreamBody } from './billable-request';
import { errorChunk, publicChunk, publicCompletion, publicUsage, type AnswerFacts } from './public-answer';
import { openUpstream, sseEvents, type OpenedUpstream, type UpstreamOptions } from './upstream';
import type { InferenceRoute } from './routes';

export type { CompletionUsage };

/** What the inference operation uses: credentials, the catalog, the providers, and the stores a completion is counted and charged in. */
export interface InferenceApiDeps extends AuthenticationDeps {
  catalog: CatalogCache;
  regionalHostnames: Readonly<Record<string, string>>;
  upstream: UpstreamOptions;
  /**
   * Records each completed request against the acting key (docs/reference.md#keys-and-credentials) before the answer is
   * complete: a failed write fails the answer. The model's popularity figure is counted once
   * the answer has ended; its failure is logged.
   */
  usage: Pick<UsageStore, 'record'>;
  /** Each completion's stats, by generation id (`GET /generation`), written beside its usage; a failure is logged. */
  generations: Pick<GenerationStore, 'put'>;
  /**
   * Spending limits (docs/limits.md): a completion starts only when its maximum cost fits every
   * cap on its key, and is charged to them before it is acknowledged.
   */
  budgets: Pick<BudgetGate, 'admit'>;
  /** Named by the challenge of every 401 (RFC 9728 §5.1). */
  resourceMetadataUrl: string;
  /** The origins whose pages may read the answers, errors included (lambdas/http/cors.ts). */
  corsAllowedOrigins: readonly string[];
  logger: ErrorLogger;
  /** The answer's id when the provider sends none. @default randomId */
  newId?: IdGenerator;
}

/** Where unexpected errors go: names and messages only, never a request body or header. */
export interface ErrorLogger {
  error(message: string, fields: Record<string, unknown>): void;
}

/** API Gateway's request payload cap is 10 MB; prompts with images stay well below this. */
const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
const MAX_UPSTREAM_JSON_BYTES = 16 * 1024 * 1024;

/**
 * `POST /chat/completions` (docs/reference.md#scopes-and-access), OpenAI-compatible: a model the
 * caller may reach, sent to the first eligible endpoint and answered in the public shapes
 * whatever the provider sent (public-answer.ts); streams relay chunks as they come. A client that
 * leaves stops receiving, but the provider's answer is read to its end and charged; one that
 * fails after it began is charged the most it could cost (docs/limits.md, "Leaving early and failures").
 *
 * A completion is acknowledged only once its usage is durable: the JSON body, or a stream's
 * usage chunk and `data: [DONE]`, is written after the usage write succeeded, so neither a crash
 * nor a frozen invocation leaves a completion the client received uncounted. The answer's
 * `usage` says what the acting key was charged (`cost`).
 */
export function createInferenceApi(routes: readonly InferenceRoute[], deps: InferenceApiDeps): (...args: [...Parameters<StreamingHandler>, onAnswered?: () => void]) => Promise<number> {
  const newId = deps.newId ?? randomId;
  // The dispatcher's front half: the route, an inference credential (docs/reference.md#scopes-and-access), the body as its schema accepts it.
  const admitted = requestAdmission({ routes, authentication: deps, bodies: bodyValidators, maxBodyBytes: MAX_REQUEST_BYTES });
  return async (event, stream, context: Context, onAnswered) => {
    const requestId = requestIdOf(event, context);
    const response = new StreamingResponse(stream, { ...corsHeaders(deps.corsAllowedOrigins, header(event, 'origin')), 'X-Request-Id': requestId });
    const clientGone = response.disconnectSignal();
    // One id for the whole answer: every chunk's `id`, `X-Generation-Id`, and the key of its stats.
    const generationId = `gen-${newId()}`;
    let facts: AnswerFacts | undefined;
    let counted: UsageRecord | undefined;
    let admission: Admission | undefined;
    let stopWatch: (() => void) | undefined;
    try {
      const { principal, body } = await admitted(event);
      const request = parseChatRequest(body);
      const [guardrails, catalog] = await Promise.all([loadCallerGuardrails(principal, deps.accounts), deps.catalog.get()]);
      const policy = buildCallerPolicy({ organization: principal.organization, guardrails, region: regionForHost(requestHost(event), deps.regionalHostnames) });
      const found = catalog.endpointsFor(request.model, policy);
      if (!found) throw new NotFoundError(`No endpoints found for model ${request.model} that your settings and guardrails allow`);
      const at = deps.clock.now();
      // Workspace budgets, guardrail budgets, the key's limit: the first without room refuses (402).
      const layers = budgetLayers(principal, guardrails);
      const bodyFor = sentBodies(request, found.model.id, layers.length > 0);
      const billable = billableChatRequest(request, Math.max(...found.endpoints.map((endpoint) => Buffer.byteLength(bodyFor(endpoint)))));
      if (layers.length > 0) {
        const bound = maximumCost(billable, found.endpoints, at);
        if (!bound.bounded) throw unboundedRefusal(layers[0]!, bound.reason);
        admission = await deps.budgets.admit(layers, bound.cost, at);
      }

      const upstream = await openUpstream(found.endpoints, bodyFor, clientGone, deps.upstream);
      stopWatch = stopBeforeTimeUp(context, upstream);
      const answering = deps.clock.now();
      facts = { id: generationId, created: Math.floor(at.getTime() / 1000), model: found.model.id, provider: upstream.endpoint.provider_name };
      const observed: Observed = { upstreamId: null, finishReason: null, serviceTier: null, usage: undefined };
      const relayed = request.stream ? await relayStream(upstream, response, facts, observed) : await relayJson(upstream, response, facts, observed);
      // docs/reference.md#pricing-and-cost: priced at the request instant, whichever credential made the call.
      const record = relayed.usage
        ? usageRecord({ principal, model: found.model, endpoint: upstream.endpoint, ...relayed.usage, at })
        : maximumRecord(usageRecord({ principal, model: found.model, endpoint: upstream.endpoint, promptTokens: 0, completionTokens: 0, at }), billable, at);
      if (admission) await chargeLimits(admission, record.cost, deps, context);
      const times = { at, answering, ended: deps.clock.now() };
      const headers = { origin: header(event, 'origin'), referer: header(event, 'referer'), userAgent: header(event, 'user-agent') };
      const generation = generationRecord({ record, headers, body: request.body, requestId, facts, observed, times, streamed: request.stream, cancelled: clientGone.aborted, principal });
      await Promise.all([recordUsage(record, deps, context), recordGeneration(generation, deps, context)]);
      counted = record;
      if (relayed.failure) throw relayed.failure;
      relayed.acknowledge(counted);
    } catch (error) {
      if (!clientGone.aborted) reportError(error, response, deps, context, facts);
    } finally {
      stopWatch?.();
      // A completion not charged gives its reservation back.
      admission?.release();
    }
    await response.end();
    onAnswered?.();
    return response.status;
  };
}

/** What went wrong with a usage write, by name and message: never the request. */
function logFailure(deps: Pick<InferenceApiDeps, 'logger'>, context: Context | undefined, message: string, error: Error): void {
  deps.logger.error(message, { requestId: context?.awsRequestId, error: error.name, detail: error.message });
}

/** The time a completion keeps, before its function's timeout, to record what it cost. */
export const RECORD_MARGIN_MS = 1500;
const TIME_CHECK_MS = 100;

/**
 * Stops reading the provider's answer when the function's time is all but up (its timeout; a
 * local stop brings it forward), so the completion is charged, the most it could cost when no
 * usage came, rather than killed uncharged. Returns what ends the watch.
 */
function stopBeforeTimeUp(context: Context, upstream: OpenedUpstream): () => void {
  const check = () => {
    if (context.getRemainingTimeInMillis() > RECORD_MARGIN_MS) return;
    clearInterval(timer);
    upstream.abort();
  };
  const timer = setInterval(check, TIME_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The body each endpoint is sent (billable-request.ts), made once for each distinct completion
 * limit among the endpoints: bodies differ in their capped token counts alone.
 */
function sentBodies(request: ReturnType<typeof parseChatRequest>, modelId: string, limited: boolean): (endpoint: ProviderEndpoint) => string {
  const made = new Map<number, string>();
  return (endpoint) => {
    const limit = completionLimit(endpoint);
    let body = made.get(limit);
    if (body === undefined) made.set(limit, (body = upstreamBody(request, modelId, endpoint, limited)));
    return body;
  };
}

/**
 * A completion whose provider reported no usage after it began to answer: charged the most it
 * could have cost on the endpoint that served it, the tokens at their bounds, marked so.
 */
function maximumRecord(record: UsageRecord, billable: BillableRequest, at: Date): UsageRecord {
  const bound = maximumCost(billable, [record.endpoint], at);
  const { prompt, completion } = tokenBounds(billable, record.endpoint);
  const [cost, promptCost] = bound.bounded ? [bound.cost, bound.promptCost] : [ZERO, ZERO];
  const costParts = { prompt: promptCost, completion: minus(cost, promptCost) };
  return { ...record, promptTokens: prompt * billable.choices, completionTokens: completion * billable.choices, cost, costParts, charge: 'maximum' };
}

/** The spend written to each limit's ledger, before the usage write: a failed write fails the answer, not charged. */
async function chargeLimits(admission: Admission, cost: string, deps: Pick<InferenceApiDeps, 'logger'>, context: Context | undefined): Promise<void> {
  try {
    await admission.settle(cost);
  } catch (error) {
    logFailure(deps, context, 'spend not recorded', error as Error);
    throw new UnavailableError('The completion could not be charged to its spending limits, and was not recorded; retry the request');
  }
}

/** The generation's stats, beside the usage write: a failure is logged, and only `GET /generation` misses it. */
async function recordGeneration(record: Parameters<GenerationStore['put']>[0], deps: Pick<InferenceApiDeps, 'generations' | 'logger'>, context: Context | undefined): Promise<void> {
  try {
    await deps.generations.put(record);
  } catch (error) {
    logFailure(deps, context, 'generation not recorded', error as Error);
  }
}

/** The usage write, awaited before the completion is acknowledged: a failed write fails the answer. */
async function recordUsage(record: UsageRecord, deps: Pick<InferenceApiDeps, 'usage' | 'logger'>, context: Context | undefined): Promise<void> {
  try {
    await deps.usage.record(record);
  } catch (error) {
    logFailure(deps, context, 'usage not recorded', error as Error);
    throw new UnavailableError('The completion could not be recorded; retry the request');
  }
}


/**
 * What a relay leaves for after the usage write: the usage the provider reported (undefined when
 * none came, a whole answer without usage included: the completion is charged its maximum), the bytes that complete the answer with
 * what it was charged, and the provider's failure after it began to answer, reported once charged.
 */
interface Relayed {
  usage: CompletionUsage | undefined;
  acknowledge(charged: UsageRecord): void;
  failure?: unknown;
}

const NOTHING_MORE = (): void => undefined;

/** Reads the provider's answer; the body goes out in `acknowledge`, once its usage is recorded. */
async function relayJson(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(await upstream.reader.text(MAX_UPSTREAM_JSON_BYTES));
  } catch (error) {
    upstream.abort();
    return { usage: undefined, acknowledge: NOTHING_MORE, failure: error instanceof UpstreamError ? error : new UpstreamError('upstream_failed', `Provider ${name} sent an answer that is not JSON`) };
  }
  if (typeof body !== 'object' || body === null || !Array.isArray(body.choices)) {
    return { usage: undefined, acknowledge: NOTHING_MORE, failure: new UpstreamError('upstream_failed', `Provider ${name} sent an answer without choices`) };
  }
  noteChunk(observed, body);
  return {
    usage: usageOf(body.usage),
    acknowledge: (charged) => response.json(200, publicCompletion({ ...body, usage: publicUsage(body.usage, charged) }, facts), { 'X-Generation-Id': facts.id }),
  };
}

/**
 * Relays the provider's events as they arrive. The usage chunk is always requested upstream
 * (docs/reference.md#keys-and-credentials: usage is accounted from it) and always sent, as the public API does whatever
 * `stream_options.include_usage` says: the provider's usage is held back, and the last chunk
 * (no choices, the usage with its cost) and the final `data: [DONE]` go out in `acknowledge`,
 * once the usage is recorded.
 *
 * The provider is read no faster than the client takes the answer (backpressure). A client that
 * leaves stops receiving, and the rest of the provider's answer is read without being sent, for
 * the usage it reports: the provider bills the whole completion, and so is the key.
 */
async function relayStream(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  const type = upstream.response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) {
    upstream.abort();
    return { usage: undefined, acknowledge: NOTHING_MORE, failure: new UpstreamError('upstream_failed', `Provider ${name} did not answer with an event stream`) };
  }
  response.start(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Generation-Id': facts.id });
  let usage: CompletionUsage | undefined;
  /** The provider's last usage object, whose own members (token details) the usage chunk keeps. */
  let reportedUsage: unknown;
  const failed = (failure: unknown): Relayed => {
    upstream.abort();
    return { usage, acknowledge: NOTHING_MORE, failure };
  };
  try {
    for await (const event of sseEvents(upstream.reader)) {
      if (event.data === null) {
        // Comments keep idle connections open; pass them on.
        if (!response.closed) await response.send(`${event.raw}\n\n`);
        continue;
      }
      if (event.data.trim() === '[DONE]') {
        return {
          usage,
          acknowledge: (charged) => {
            response.write(`data: ${JSON.stringify(publicChunk({ choices: [], usage: publicUsage(reportedUsage, charged) }, facts))}\n\n`);
            response.write('data: [DONE]\n\n');
          },
        };
      }
      let chunk: { choices?: unknown; usage?: unknown; error?: unknown };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        return failed(new UpstreamError('upstream_failed', `Provider ${name} sent an event that is not JSON`));
      }
      if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
        return failed(new UpstreamError('upstream_failed', `Provider ${name} sent an event that is not a JSON object`));
      }
      noteChunk(observed, chunk);
      if (chunk.error) {
        // The provider reports its own failure mid-stream: pass it on and stop; it is charged, and nothing more is sent.
        response.write(`data: ${JSON.stringify(publicChunk(chunk, facts))}\n\n`);
        upstream.abort();
        return { usage, acknowledge: NOTHING_MORE };
      }
      const reported = usageOf(chunk.usage);
      if (reported) {
        usage = reported;
        reportedUsage = chunk.usage;
        if (Array.isArray(chunk.choices) && chunk.choices.length === 0) continue;
        const { usage: _usage, ...rest } = chunk;
        chunk = rest;
      }
      if (!response.closed) await response.send(`data: ${JSON.stringify(publicChunk(chunk, facts))}\n\n`);
    }
  } catch (error) {
    return failed(error);
  }
  return failed(new UpstreamError('upstream_failed', `Provider ${name} ended the stream early`));
}

function usageOf(value: unknown): CompletionUsage | undefined {
  const usage = value as { prompt_tokens?: unknown; completion_tokens?: unknown } | null | undefined;
  if (!usage || typeof usage !== 'object') return undefined;
  const count = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0);
  return { promptTokens: count(usage.prompt_tokens), completionTokens: count(usage.completion_tokens) };
}

/**
 * common error body (docs/reference.md#the-common-error-body) before the response has started; once the stream is open the status
 * is sent, so the error goes out as a final chunk with an `error` member, as OpenAI-compatible
 * clients and the official SDK read it.
 */
function reportError(
  error: unknown,
  response: StreamingResponse,
  { logger, resourceMetadataUrl }: Pick<InferenceApiDeps, 'logger' | 'resourceMetadataUrl'>,
  context: Context | undefined,
  facts: AnswerFacts | undefined,
): void {
  const { status, body, headers } = toErrorBody(error, { resourceMetadataUrl });
  if (status === 500) {
    const e = error as Error | undefined;
    // Names and messages only: never the request body (prompts) or headers (credentials).
    logger.error('unhandled error', { requestId: context?.awsRequestId, error: e?.name, detail: e?.message });
  }
  if (!response.started) response.json(status, body, headers);
  else response.write(`data: ${JSON.stringify(facts ? errorChunk(body.error, facts) : body)}\n\n`);
}
