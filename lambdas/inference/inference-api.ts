import type { Context } from 'aws-lambda';
import { randomId, type IdGenerator } from '../clock';
import type { AuthenticationDeps } from '../credentials/authenticate';
import type { CatalogCache } from '../catalog/catalog-cache';
import { budgetLayers } from '../budgets/layers';
import { maximumCost } from '../budgets/estimate';
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
import type { GenerationStore } from '../usage/generations';
import { generationRecord, noteChunk, type Observed } from './generation-facts';
import { cutShortUsage, promptCharacters, relayedCharacters, type CompletionUsage } from './relayed-usage';
import { parseChatRequest, upstreamBody } from './chat-request';
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
 * caller may reach under its preferences, privacy settings, guardrails and region, sent to the
 * first eligible provider endpoint and answered in the public shapes whatever the provider sent
 * (public-answer.ts); `"stream": true` relays `text/event-stream` chunks as they come, ending
 * with `data: [DONE]`. A client that disconnects aborts the upstream request.
 *
 * A completion is acknowledged only once its usage is durable: the JSON body, or a stream's
 * usage chunk and `data: [DONE]`, is written after the usage write succeeded, and the response
 * ends after that, so neither a crash nor a frozen invocation leaves a completion the client
 * received uncounted. The answer's `usage` says what the acting key was charged (`cost`).
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
    try {
      const { principal, body } = await admitted(event);
      const request = parseChatRequest(body);
      const [guardrails, catalog] = await Promise.all([loadCallerGuardrails(principal, deps.accounts), deps.catalog.get()]);
      const policy = buildCallerPolicy({ organization: principal.organization, guardrails, region: regionForHost(requestHost(event), deps.regionalHostnames) });
      const found = catalog.endpointsFor(request.model, policy);
      if (!found) throw new NotFoundError(`No endpoints found for model ${request.model} that your settings and guardrails allow`);
      const at = deps.clock.now();
      const sent = upstreamBody(request, found.model.id);
      // Workspace budgets, guardrail budgets, the key's limit: the first without room refuses (402).
      const layers = budgetLayers(principal, guardrails);
      if (layers.length > 0) admission = await deps.budgets.admit(layers, maximumCost(request.body, Buffer.byteLength(sent), found.endpoints, at), at);

      const upstream = await openUpstream(found.endpoints, sent, clientGone, deps.upstream);
      const answering = deps.clock.now();
      // Under a limit an answer whose client left is read to its end, so what it cost is charged;
      // a stream stops where the client left it (relayStream).
      if (admission && !request.stream) upstream.outliveClient();
      facts = { id: generationId, created: Math.floor(at.getTime() / 1000), model: found.model.id, provider: upstream.endpoint.provider_name };
      const observed: Observed = { upstreamId: null, finishReason: null, serviceTier: null, usage: undefined };
      const relayed = request.stream
        ? await relayStream(upstream, response, facts, observed, promptCharacters(request.body.messages))
        : await relayJson(upstream, response, facts, observed);
      if (relayed.usage) {
        // docs/reference.md#pricing-and-cost: priced at the request instant, whichever credential made the call.
        const record = usageRecord({ principal, model: found.model, endpoint: upstream.endpoint, ...relayed.usage, at });
        if (admission) await chargeLimits(admission, record.cost, deps, context);
        const times = { at, answering, ended: deps.clock.now() };
        const headers = { origin: header(event, 'origin'), referer: header(event, 'referer'), userAgent: header(event, 'user-agent') };
        const generation = generationRecord({ record, headers, body: request.body, requestId, facts, observed, times, streamed: request.stream, cancelled: clientGone.aborted, principal });
        await Promise.all([recordUsage(record, deps, context), recordGeneration(generation, deps, context)]);
        counted = record;
      }
      relayed.acknowledge(counted);
    } catch (error) {
      if (!clientGone.aborted) reportError(error, response, deps, context, facts);
    } finally {
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

/** The spend written to each limit's ledger, before the usage write: a failed write fails the answer, not charged. */
async function chargeLimits(admission: Admission, cost: string, deps: Pick<InferenceApiDeps, 'logger'>, context: Context | undefined): Promise<void> {
  try {
    await admission.settle(cost);
  } catch (error) {
    logFailure(deps, context, 'spend not recorded', error as Error);
    throw new UnavailableError('The completion could not be recorded and was not charged; retry the request');
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
    throw new UnavailableError('The completion could not be recorded and was not charged; retry the request');
  }
}


/** What a relay leaves for after the usage write: the usage, and the bytes that complete the answer, with what it was charged. */
interface Relayed {
  usage: CompletionUsage | undefined;
  acknowledge(charged: UsageRecord | undefined): void;
}

/** Reads the provider's answer; the body goes out in `acknowledge`, once its usage is recorded. */
async function relayJson(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(await upstream.reader.text(MAX_UPSTREAM_JSON_BYTES));
  } catch (error) {
    upstream.abort();
    if (error instanceof UpstreamError) throw error;
    throw new UpstreamError('upstream_failed', `Provider ${name} sent an answer that is not JSON`);
  }
  if (typeof body !== 'object' || body === null || !Array.isArray(body.choices)) {
    throw new UpstreamError('upstream_failed', `Provider ${name} sent an answer without choices`);
  }
  noteChunk(observed, body);
  return {
    usage: usageOf(body.usage) ?? { promptTokens: 0, completionTokens: 0 },
    acknowledge: (charged) =>
      response.json(200, publicCompletion(charged ? { ...body, usage: publicUsage(body.usage, charged) } : body, facts), { 'X-Generation-Id': facts.id }),
  };
}

/**
 * Relays the provider's events as they arrive. The usage chunk is always requested upstream
 * (docs/reference.md#keys-and-credentials: usage is accounted from it) and always sent, as the public API does whatever
 * `stream_options.include_usage` says: the provider's usage is held back, and the last chunk
 * (no choices, the usage with its cost) and the final `data: [DONE]` go out in `acknowledge`,
 * once the usage is recorded.
 *
 * The provider is read no faster than the client takes the answer (backpressure), so when the
 * client leaves, what was read is what it was sent: the provider is told to stop, and the
 * stream is charged what it had generated (relayed-usage.ts), never the rest.
 */
async function relayStream(upstream: OpenedUpstream, response: StreamingResponse, facts: AnswerFacts, observed: Observed, promptChars: number): Promise<Relayed> {
  const name = upstream.endpoint.provider_name;
  const type = upstream.response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream')) {
    upstream.abort();
    throw new UpstreamError('upstream_failed', `Provider ${name} did not answer with an event stream`);
  }
  response.start(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Generation-Id': facts.id });
  let usage: CompletionUsage | undefined;
  /** The provider's last usage object, whose own members (token details) the usage chunk keeps. */
  let reportedUsage: unknown;
  let relayedChars = 0;
  const cutShort = (): Relayed => {
    upstream.abort();
    return { usage: cutShortUsage(usage, promptChars, relayedChars), acknowledge: () => undefined };
  };
  try {
    for await (const event of sseEvents(upstream.reader)) {
      if (response.closed) return cutShort();
      if (event.data === null) {
        // Comments keep idle connections open; pass them on.
        await response.send(`${event.raw}\n\n`);
        continue;
      }
      if (event.data.trim() === '[DONE]') {
        return {
          usage: usage ?? { promptTokens: 0, completionTokens: 0 },
          acknowledge: (charged) => {
            if (charged) response.write(`data: ${JSON.stringify(publicChunk({ choices: [], usage: publicUsage(reportedUsage, charged) }, facts))}\n\n`);
            response.write('data: [DONE]\n\n');
          },
        };
      }
      let chunk: { choices?: unknown; usage?: unknown; error?: unknown };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw new UpstreamError('upstream_failed', `Provider ${name} sent an event that is not JSON`);
      }
      if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
        throw new UpstreamError('upstream_failed', `Provider ${name} sent an event that is not a JSON object`);
      }
      noteChunk(observed, chunk);
      if (chunk.error) {
        // The provider reports its own failure mid-stream: pass it on and stop.
        response.write(`data: ${JSON.stringify(publicChunk(chunk, facts))}\n\n`);
        upstream.abort();
        return { usage, acknowledge: () => undefined };
      }
      const reported = usageOf(chunk.usage);
      if (reported) {
        usage = reported;
        reportedUsage = chunk.usage;
        if (Array.isArray(chunk.choices) && chunk.choices.length === 0) continue;
        const { usage: _usage, ...rest } = chunk;
        chunk = rest;
      }
      relayedChars += relayedCharacters(chunk);
      await response.send(`data: ${JSON.stringify(publicChunk(chunk, facts))}\n\n`);
    }
  } catch (error) {
    // The client left while the provider was still to answer: its reading was called off.
    if (response.closed) return cutShort();
    upstream.abort();
    throw error;
  }
  if (response.closed) return cutShort();
  throw new UpstreamError('upstream_failed', `Provider ${name} ended the stream early`);
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
