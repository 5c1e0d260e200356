import type { Context } from 'aws-lambda';
import { randomId, type IdGenerator } from '../clock';
import type { AuthenticationDeps } from '../credentials/authenticate';
import type { CatalogCache } from '../catalog/catalog-cache';
import { spendingLimits } from '../spending/limits';
import { completionLimit, maximumCost, tokenBounds, type BillableRequest } from '../spending/estimate';
import type { SpendingGate } from '../spending/spending-gate';
import { buildCallerPolicy, loadCallerGuardrails, regionForHost } from '../catalog/caller-policy';
import { UnavailableError } from '../errors';
import { toErrorBody } from '../http/api-errors';
import { corsHeaders } from '../http/cors';
import { requestAdmission } from '../http/dispatcher';
import { header, requestHost, requestIdOf } from '../http/request';
import { StreamingResponse, type StreamingHandler } from '../http/streaming';
import { bodyValidators, type CreateChatCompletionBody } from '../openapi/validators/inference.generated';
import { usageRecord, type UsageRecord, type UsageStore } from '../usage/usage';
import type { ProviderEndpoint } from '../catalog/types';
import { ZERO, minus } from '../usd';
import type { GenerationStore } from '../usage/generations';
import type { OpenCompletions } from '../spending/open-completions';
import { holdCompletion, logFailure, settleHeld, chargeLimits, type ErrorLogger, type Held } from './held-completion';
import { generationRecord, type Observed } from './generation-facts';
import type { CompletionUsage } from './relayed-usage';
import { parseChatRequest, type ChatRequest } from './chat-request';
import { billableChatRequest, upstreamBody } from './billable-request';
import { errorChunk, type AnswerFacts } from './public-answer';
import { KEEPALIVE_MS, relayJson, relayStream } from './relay';
import { CHAT_SHAPE, messagesShape, type AnswerShape } from './answer-shapes';
import { chatBodyOfMessages } from './messages-request';
import { estimatedPromptTokens } from './token-count';
import { responsesShape, type ResponsesShape } from './responses-shape';
import { decideKeeping, deleteKeptResponse, keeper, keptResponse, readResponsesRequest } from './responses-api';
import type { ResponseStore } from '../usage/stored-responses';
import type { Principal } from '../accounts/types';
import { openFirstModel, routeOf, type OpenedUpstream, type UpstreamOptions } from './upstream';
import { routeCandidates, routingAsk } from './request-routing';
import { API_PARAMETERS } from '../providers/clients';
import { MESSAGES_REQUEST_MEMBER } from '../providers/anthropic-native';
import type { InferenceRoute } from './routes';

export type { CompletionUsage, ErrorLogger };

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
  /** Completions from their start to their end: what the rollup records of one whose function dies. */
  openCompletions: OpenCompletions;
  /** Kept responses of the Responses API (`store`, `previous_response_id`, `GET`/`DELETE /responses/{id}`). */
  responses: ResponseStore;
  /**
   * Spending limits (docs/limits.md): a completion starts only when its maximum cost fits every
   * cap on its key, and is charged to them before it is acknowledged.
   */
  spending: Pick<SpendingGate, 'reserve' | 'track'>;
  /** Named by the challenge of every 401 (RFC 9728 §5.1). */
  resourceMetadataUrl: string;
  /** The origins whose pages may read the answers, errors included (lambdas/http/cors.ts). */
  corsAllowedOrigins: readonly string[];
  logger: ErrorLogger;
  /** The answer's id when the provider sends none. @default randomId */
  newId?: IdGenerator;
  /** The longest a stream goes without a byte to the client: an SSE comment fills a longer silence. @default 15,000 */
  keepaliveMs?: number;
}

/** API Gateway's request payload cap is 10 MB; prompts with images stay well below this. */
const MAX_REQUEST_BYTES = 6 * 1024 * 1024;

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
export function createInferenceApi(routes: readonly InferenceRoute[], deps: InferenceApiDeps): (...args: Parameters<StreamingHandler>) => Promise<number> {
  const newId = deps.newId ?? randomId;
  // The dispatcher's front half: the route, an inference credential (docs/reference.md#scopes-and-access), the body as its schema accepts it.
  const admitted = requestAdmission({ routes, authentication: deps, bodies: bodyValidators, maxBodyBytes: MAX_REQUEST_BYTES });
  return async (event, stream, context: Context) => {
    const requestId = requestIdOf(event, context);
    // The API the caller speaks, known from its path before the route is (a refusal of its credential is in its shape too).
    const shape = answerShape(event.path ?? '', deps.clock);
    const response = new StreamingResponse(stream, { ...corsHeaders(deps.corsAllowedOrigins, header(event, 'origin')), 'X-Request-Id': requestId });
    const clientGone = response.disconnectSignal();
    // One id for the whole answer: every chunk's `id`, `X-Generation-Id`, and the key of its stats.
    const generationId = `gen-${newId()}`;
    let facts: AnswerFacts | undefined;
    let counted: UsageRecord | undefined;
    let held: Held | undefined;
    const ending: Promise<void>[] = [];
    // A provider began to answer: from then on the completion is billed, whatever ends it.
    let answered = false;
    let stopWatch: (() => void) | undefined;
    try {
      const { principal, body, route, params } = await admitted(event);
      const kept = keptResponseOperation(route.operationId, params.id, principal, deps.responses);
      if (kept) {
        response.json(200, await kept);
        return await finish();
      }
      const { fields, responses, request } = await chatRequestOf(route.operationId, body, principal, deps.responses);
      const [guardrails, catalog] = await Promise.all([loadCallerGuardrails(principal, deps.accounts), deps.catalog.get()]);
      const keeps = responses !== undefined && decideKeeping(shape as ResponsesShape, responses, fields, principal, guardrails);
      const policy = buildCallerPolicy({ organization: principal.organization, guardrails, region: regionForHost(requestHost(event), deps.regionalHostnames) });
      const at = deps.clock.now();
      const candidates = routeCandidates(request.models, routingAsk(request.body), (slug) => catalog.endpointsFor(slug, policy), carriesFor(deps.upstream), at);
      // A count is admitted as the request would be, a model the caller may reach included, and asks no provider.
      if (route.operationId === 'countMessageTokens') {
        response.json(200, { input_tokens: estimatedPromptTokens(request.body) });
        return await finish();
      }
      // Workspace budgets, guardrail budgets, the key's limit: the first without room refuses (402).
      const limits = spendingLimits(principal, guardrails);
      const requests = candidates.map(({ model, endpoints }) => ({ modelId: model.id, endpoints, bodyFor: sentBodies(request, model.id, limits.length > 0, deps.upstream) }));
      const allEndpoints = requests.flatMap(({ endpoints }) => endpoints);
      const billable = billableChatRequest(request, Math.max(...requests.flatMap(({ endpoints, bodyFor }) => endpoints.map((endpoint) => Buffer.byteLength(bodyFor(endpoint))))));
      // Whichever model and endpoint serves: the estimate covers them all.
      const headers = { origin: header(event, 'origin'), referer: header(event, 'referer'), userAgent: header(event, 'user-agent') };
      const asked = { principal, candidates, billable, at, request: { generationId, requestId, streamed: request.stream, headers, body: request.body } };
      held = await holdCompletion(limits, { bound: maximumCost(billable, allEndpoints, at), asked, deps, context });
      const { index, upstream } = await openFirstModel(requests, clientGone, deps.upstream);
      answered = true;
      await held?.opening;
      const found = candidates[index]!;
      stopWatch = stopBeforeTimeUp(context, upstream);
      const answering = deps.clock.now();
      facts = { id: generationId, created: Math.floor(at.getTime() / 1000), model: found.model.id, provider: upstream.endpoint.provider_name };
      const observed: Observed = { upstreamId: null, finishReason: null, serviceTier: null, usage: undefined };
      const relayed = request.stream ? await relayStream(upstream, response, facts, observed, deps.keepaliveMs ?? KEEPALIVE_MS, shape) : await relayJson(upstream, response, facts, observed, shape);
      // docs/reference.md#pricing-and-cost: priced at the request instant, whichever credential made the call.
      const record = relayed.usage
        ? usageRecord({ principal, model: found.model, endpoint: upstream.endpoint, ...relayed.usage, at })
        : maximumRecord(usageRecord({ principal, model: found.model, endpoint: upstream.endpoint, promptTokens: 0, completionTokens: 0, at }), billable, at);
      const times = { at, answering, ended: deps.clock.now() };
      const generation = generationRecord({ record, headers, body: request.body, requestId, facts, observed, times, streamed: request.stream, cancelled: clientGone.aborted, principal });
      await Promise.all([recordUsage(record, deps, context), recordGeneration(generation, deps, context)]);
      counted = record;
      if (held) ending.push(chargeLimits(held.reservation, record.cost, deps, context));
      if (relayed.failure) throw relayed.failure;
      await relayed.acknowledge(counted, keeps ? keeper(responses, principal, at, deps.responses, (e) => logFailure(deps, context, 'response not kept', e)) : undefined);
    } catch (error) {
      if (!clientGone.aborted) reportError(error, response, deps, context, facts, shape);
    } finally {
      stopWatch?.();
      if (held) ending.push((await settleHeld(held, { answered, counted: counted !== undefined }, deps, context)).closing ?? Promise.resolve());
    }
    return finish();
    async function finish(): Promise<number> {
      await response.end();
      await Promise.all(ending);
      return response.status;
    }
  };
}

/** `GET` and `DELETE /responses/{id}`, which answer from the kept responses alone; undefined for every other operation. */
function keptResponseOperation(operationId: string, id: string | undefined, principal: Principal, store: ResponseStore): Promise<Record<string, unknown>> | undefined {
  if (operationId === 'getResponse') return keptResponse(id!, principal, store);
  if (operationId === 'deleteResponse') return deleteKeptResponse(id!, principal, store);
  return undefined;
}

/** The chat request an operation's body means: another API's is read as the chat request it means (messages-request.ts, responses-api.ts). */
async function chatRequestOf(operationId: string, body: unknown, principal: Principal, store: ResponseStore) {
  const fields = (body ?? {}) as Record<string, unknown>;
  const responses = operationId === 'createResponses' ? await readResponsesRequest(fields, principal, store) : undefined;
  const messagesApi = operationId === 'createMessages' || operationId === 'countMessageTokens';
  const request = parseChatRequest((responses?.chat ?? (messagesApi ? chatBodyOfMessages(fields) : fields)) as CreateChatCompletionBody);
  return { fields, responses, request: messagesApi ? { ...request, messagesRequest: fields } : request };
}

/** How the API a path belongs to writes its answers (answer-shapes.ts). */
function answerShape(path: string, clock: InferenceApiDeps['clock']): AnswerShape {
  if (/\/messages(\/count_tokens)?$/.test(path)) return messagesShape();
  if (/\/responses(\/[^/]*)?$/.test(path)) return responsesShape(() => clock.now());
  return CHAT_SHAPE;
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
 * Whether the upstream of a model's endpoint carries a parameter (`provider.require_parameters`):
 * an upstream that speaks the public API carries them all, a provider API those it translates.
 */
function carriesFor(upstream: UpstreamOptions): (modelId: string) => (endpoint: ProviderEndpoint, parameter: string) => boolean {
  return (modelId) => (endpoint, parameter) => {
    const route = routeOf(endpoint, modelId, upstream.upstreams);
    if ('unroutable' in route) return true;
    return typeof route.target === 'string' || API_PARAMETERS[route.target.api].has(parameter);
  };
}

/**
 * The body each endpoint is sent (billable-request.ts), made once for each distinct completion
 * limit among the endpoints, and for Anthropic's and Bedrock's APIs with the Messages request as
 * written (anthropic-native.ts): bodies differ in their capped token counts and that alone.
 */
function sentBodies(request: ChatRequest, modelId: string, limited: boolean, upstream: UpstreamOptions): (endpoint: ProviderEndpoint) => string {
  const made = new Map<string, string>();
  return (endpoint) => {
    const route = routeOf(endpoint, modelId, upstream.upstreams);
    // Anthropic's API, and Bedrock's for Anthropic's models (lambdas/aws/bedrock-converse.ts decides by the model).
    const native = request.messagesRequest !== undefined && 'target' in route && typeof route.target !== 'string' && route.target.api !== 'openai';
    const key = `${completionLimit(endpoint)}${native ? ' native' : ''}`;
    let body = made.get(key);
    if (body === undefined) made.set(key, (body = upstreamBody(request, modelId, endpoint, limited, native ? { [MESSAGES_REQUEST_MEMBER]: request.messagesRequest } : {})));
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
  shape: AnswerShape,
): void {
  const { status, body } = toErrorBody(error, { resourceMetadataUrl });
  if (status === 500) {
    const e = error as Error | undefined;
    // Names and messages only: never the request body (prompts) or headers (credentials).
    logger.error('unhandled error', { requestId: context?.awsRequestId, error: e?.name, detail: e?.message });
  }
  if (!response.started) {
    const shaped = shape.error(error, { resourceMetadataUrl });
    response.json(shaped.status, shaped.body, shaped.headers);
  } else response.write(shape.streamError(facts ? errorChunk(body.error, facts) : { error: body.error }));
}
