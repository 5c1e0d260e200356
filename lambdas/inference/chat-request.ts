import { invalidParameter } from '../errors';
import type { CreateChatCompletionBody } from '../openapi/validators/inference.generated';

/**
 * A chat completion request in the OpenAI-compatible convention (docs/reference.md#keys-and-credentials, docs/reference.md#scopes-and-access). The gateway
 * checks what it needs to route and account for the request; every other field goes to
 * the provider unchanged, so clients keep the parameters they know.
 */
export interface ChatRequest {
  /**
   * The models to try, in order, each an id or canonical slug as the caller wrote it: `model`,
   * then those of `models` not already named (docs/providers.md, "Routing a request").
   */
  models: string[];
  stream: boolean;
  /** The body as received, for forwarding. */
  body: Readonly<Record<string, unknown>>;
  /** The Messages API request it was read from (`POST /messages`), which an Anthropic endpoint is sent as written. */
  messagesRequest?: Readonly<Record<string, unknown>>;
}

/**
 * The request, once its schema (ChatCompletionRequest) accepted the body (the dispatcher
 * validates it, lambdas/http/dispatcher.ts): a parameter of the wrong JSON type is a 400 naming
 * it, never read loosely, so `"stream": "true"` is not taken for a request that did not ask to
 * stream.
 */
export function parseChatRequest(body: CreateChatCompletionBody): ChatRequest {
  const stream = body.stream === true;
  // A rule across two fields, which the schema leaves to the gateway.
  if (body.stream_options != null && !stream) throw invalidParameter('stream_options', 'is only allowed when stream is true');
  // `stream_options.include_usage` changes nothing: every stream ends with its usage, as the
  // public document says of it ("Full usage details are always included").
  const models = [...new Set([...(typeof body.model === 'string' ? [body.model] : []), ...((body.models as string[] | undefined) ?? [])])];
  return { models, stream, body };
}

/** The text of a message's content: the string, or its `text` parts joined. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' ? String((part as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join(' ');
}
