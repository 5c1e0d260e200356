import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, requireInference, type AuthenticationDeps } from '../accounts/authenticate';
import type { CatalogCache } from '../catalog/catalog-cache';
import { loadCallerPolicy, regionForHost } from '../catalog/caller-policy';
import type { IdGenerator } from '../clock';
import { NotFoundError, UnavailableError, invalidParameter } from '../errors';
import { optionalBoolean, optionalInteger, optionalNumber, requiredString } from '../http/fields';
import { credentialHeader, jsonBody, requestHost } from '../http/request';
import { json } from '../http/responses';
import type { ChatMessage, InferenceUpstream } from './upstream';

export interface InferenceApiDeps extends AuthenticationDeps {
  catalog: CatalogCache;
  regionalHostnames: Readonly<Record<string, string>>;
  /** Null when no upstream is configured: requests get 503. */
  upstream: InferenceUpstream | null;
  newId: IdGenerator;
}

const ROLES = ['system', 'user', 'assistant', 'tool', 'developer'];

/**
 * `POST /chat/completions` (SPEC 4.5): an inference credential, a model the caller may
 * reach under its preferences, privacy settings, guardrails and region, routed to the
 * first endpoint that passes them.
 */
export function createInferenceApi(deps: InferenceApiDeps) {
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const principal = await authenticate(credentialHeader(event), deps);
    requireInference(principal);
    const body = jsonBody(event, 4 * 1024 * 1024);
    const model = requiredString(body, 'model', 256);
    const messages = parseMessages(body.messages);
    checkParameterTypes(body);
    if (body.stream === true) throw invalidParameter('stream', 'streaming is not supported by this gateway');
    const maxTokens = optionalInteger(body, 'max_tokens', 1) ?? null;

    const [policy, catalog] = await Promise.all([
      loadCallerPolicy(principal, deps.accounts, regionForHost(requestHost(event), deps.regionalHostnames)),
      deps.catalog.get(),
    ]);
    const found = catalog.endpointsFor(model, policy);
    if (!found) throw new NotFoundError(`No endpoints found for model ${model} that your settings and guardrails allow`);
    if (!deps.upstream) throw new UnavailableError('No inference upstream is configured');

    const endpoint = found.endpoints[0]!;
    const result = await deps.upstream.complete({ model: found.model.id, endpoint, messages, maxTokens });
    return json(200, {
      id: `gen-${deps.newId()}`,
      object: 'chat.completion',
      created: Math.floor(deps.clock.now().getTime() / 1000),
      model: found.model.id,
      provider: endpoint.provider_name,
      choices: [{ index: 0, message: { role: 'assistant', content: result.content }, finish_reason: result.finishReason }],
      usage: {
        prompt_tokens: result.promptTokens,
        completion_tokens: result.completionTokens,
        total_tokens: result.promptTokens + result.completionTokens,
      },
    });
  };
}

function parseMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidParameter('messages', 'must be a non-empty array');
  return value.map((message, i) => {
    const m = message as { role?: unknown; content?: unknown } | null;
    if (!m || typeof m.role !== 'string' || !ROLES.includes(m.role)) {
      throw invalidParameter(`messages[${i}].role`, `must be one of ${ROLES.join(', ')}`);
    }
    if (typeof m.content !== 'string') throw invalidParameter(`messages[${i}].content`, 'must be a string');
    return { role: m.role as ChatMessage['role'], content: m.content };
  });
}

/** Sampling parameters of the chat-completion convention (SPEC 2.8) and their JSON types. */
const NUMBER_PARAMETERS = ['temperature', 'top_p', 'min_p', 'top_a', 'frequency_penalty', 'presence_penalty', 'repetition_penalty'];
const INTEGER_PARAMETERS = ['top_k', 'seed', 'top_logprobs', 'max_completion_tokens'];
const BOOLEAN_PARAMETERS = ['stream', 'logprobs', 'parallel_tool_calls', 'include_reasoning'];

/**
 * A parameter of the wrong JSON type is a 400 naming it, never read loosely: `"stream":
 * "true"` must not be taken for a request that did not ask to stream.
 */
function checkParameterTypes(body: Record<string, unknown>): void {
  for (const name of NUMBER_PARAMETERS) optionalNumber(body, name);
  for (const name of INTEGER_PARAMETERS) optionalInteger(body, name);
  for (const name of BOOLEAN_PARAMETERS) optionalBoolean(body, name);
}
