import { completionLimit, type BillableRequest } from '../spending/estimate';
import { SUPPORTED_PARAMETERS, type ProviderEndpoint, type SupportedParameter } from '../catalog/types';
import type { ChatRequest } from './chat-request';

/** Parameters a model may support that bill beyond the estimate: web search per search, rejected predictions beyond the completion. */
const UNPRICED_PARAMETERS: ReadonlySet<string> = new Set<SupportedParameter>(['web_search_options', 'prediction']);

/**
 * The fields of a chat request the gateway can price (docs/limits.md, "What a request may cost"):
 * under a spending limit only these reach a provider. Each either changes nothing a provider
 * bills (sampling, formats, routing preferences that only narrow), or is billed as prompt or
 * completion tokens within the caps the estimate counts (tools, schemas, reasoning, audio and
 * image output). Left out: web search (`web_search_options`, `plugins`), which bills per search;
 * `service_tier`, whose tiers bill at other prices; `prediction`, whose rejected tokens are billed
 * beyond the completion; `models` and `route`, which could reach other models; and every field
 * the gateway does not know.
 */
export const PRICED_FIELDS: ReadonlySet<string> = new Set([
  ...SUPPORTED_PARAMETERS.filter((name) => !UNPRICED_PARAMETERS.has(name)),
  ...['model', 'messages', 'stream', 'stream_options', 'n', 'modalities', 'audio', 'user', 'metadata', 'store', 'transforms', 'provider', 'usage'],
]);

/** The gateway's own routing fields: the gateway routes by them, so no upstream is sent them. */
const ROUTING_FIELDS: ReadonlySet<string> = new Set(['models', 'route', 'provider']);

/** The token caps of a chat request, each sent no higher than the serving endpoint generates. */
const TOKEN_CAPS = ['max_tokens', 'max_completion_tokens'] as const;

/** Content part types whose tokens the body's bytes bound: text, and audio sent inline (far fewer tokens than its base64 bytes). */
const SIZED_PARTS = new Set(['text', 'input_audio']);
const IMAGE_PARTS = new Set(['image_url', 'input_image']);

/**
 * What of a chat request a provider may bill (lambdas/spending/estimate.ts): its body's bytes as
 * sent, the larger of its token caps with a reasoning budget on top, its `n`, its images and the
 * parts whose size it does not show. `sentBytes` is the size of the body a provider receives.
 */
export function billableChatRequest(request: ChatRequest, sentBytes: number): BillableRequest {
  const { body } = request;
  const caps = TOKEN_CAPS.map((name) => body[name]).filter(isCount);
  const reasoning = body.reasoning;
  const reasoningBudget = reasoning && typeof reasoning === 'object' && isCount((reasoning as { max_tokens?: unknown }).max_tokens) ? (reasoning as { max_tokens: number }).max_tokens : 0;
  let images = 0;
  let unsizedParts = 0;
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) {
      const type = (part as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && IMAGE_PARTS.has(type)) images++;
      else if (typeof type !== 'string' || !SIZED_PARTS.has(type)) unsizedParts++;
    }
  }
  return {
    bodyBytes: sentBytes,
    completionCap: caps.length > 0 ? Math.max(...caps) + reasoningBudget : undefined,
    choices: isCount(body.n) ? body.n : 1,
    images,
    unsizedParts,
  };
}

/**
 * The body one endpoint is sent: the routed model's id in place of the caller's spelling; each
 * token cap the request gives no higher than the endpoint generates (so a provider cannot be
 * asked for more than was estimated); for streams the usage chunk forced on, since usage is
 * accounted from it (docs/reference.md#keys-and-credentials); never the routing fields
 * (`models`, `route`, `provider`); and under a spending limit (`limited`) only the {@link PRICED_FIELDS}.
 * `extra` is what a provider client of the gateway reads beside the chat form (anthropic-native.ts).
 */
export function upstreamBody(request: ChatRequest, modelId: string, endpoint: ProviderEndpoint, limited: boolean, extra: Readonly<Record<string, unknown>> = {}): string {
  const body: Record<string, unknown> = { ...extra };
  for (const [name, value] of Object.entries(request.body)) if ((!limited || PRICED_FIELDS.has(name)) && !ROUTING_FIELDS.has(name)) body[name] = value;
  body.model = modelId;
  const most = completionLimit(endpoint);
  for (const name of TOKEN_CAPS) if (isCount(body[name]) && (body[name] as number) > most) body[name] = most;
  if (request.stream) body.stream_options = { ...(request.body.stream_options as object | undefined), include_usage: true };
  return JSON.stringify(body);
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
