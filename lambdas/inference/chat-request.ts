import { invalidParameter } from '../errors';
import { optionalBoolean, optionalInteger, optionalNumber, requiredString } from '../http/fields';

/**
 * A chat completion request in the OpenAI-compatible convention (SPEC 1, 4.5). The gateway
 * checks what it needs to route and account for the request; every other field goes to
 * the provider unchanged, so clients keep the parameters they know.
 */
export interface ChatRequest {
  /** Model id or canonical slug as the caller wrote it. */
  model: string;
  stream: boolean;
  /** The caller asked for the final usage chunk (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** The body as received, for forwarding. */
  body: Readonly<Record<string, unknown>>;
}

export const ROLES = ['system', 'user', 'assistant', 'tool', 'developer'];

export function parseChatRequest(body: Record<string, unknown>): ChatRequest {
  const model = requiredString(body, 'model', 256);
  checkMessages(body.messages);
  checkParameterTypes(body);
  const stream = body.stream === true;
  let includeUsage = false;
  if (body.stream_options !== undefined && body.stream_options !== null) {
    const options = body.stream_options as { include_usage?: unknown };
    if (typeof options !== 'object' || Array.isArray(options)) throw invalidParameter('stream_options', 'must be an object');
    if (!stream) throw invalidParameter('stream_options', 'is only allowed when stream is true');
    if (options.include_usage !== undefined && typeof options.include_usage !== 'boolean') {
      throw invalidParameter('stream_options.include_usage', 'must be a boolean');
    }
    includeUsage = options.include_usage === true;
  }
  return { model, stream, includeUsage, body };
}

/**
 * The body sent upstream: the routed model's id in place of the caller's spelling, and for
 * streams the usage chunk forced on, since usage is accounted from it (SPEC 1).
 */
export function upstreamBody(request: ChatRequest, modelId: string): string {
  const body: Record<string, unknown> = { ...request.body, model: modelId };
  if (request.stream) body.stream_options = { ...(request.body.stream_options as object | undefined), include_usage: true };
  return JSON.stringify(body);
}

/** Sampling parameters of the chat-completion convention (SPEC 2.8) and their JSON types. */
export const NUMBER_PARAMETERS = ['temperature', 'top_p', 'min_p', 'top_a', 'frequency_penalty', 'presence_penalty', 'repetition_penalty'];
export const INTEGER_PARAMETERS = ['top_k', 'seed', 'top_logprobs'];
export const POSITIVE_INTEGER_PARAMETERS = ['max_tokens', 'max_completion_tokens'];
export const BOOLEAN_PARAMETERS = ['stream', 'logprobs', 'parallel_tool_calls', 'include_reasoning'];

/**
 * A parameter of the wrong JSON type is a 400 naming it, never read loosely: `"stream":
 * "true"` must not be taken for a request that did not ask to stream.
 */
function checkParameterTypes(body: Record<string, unknown>): void {
  for (const name of NUMBER_PARAMETERS) optionalNumber(body, name);
  for (const name of INTEGER_PARAMETERS) optionalInteger(body, name);
  for (const name of POSITIVE_INTEGER_PARAMETERS) optionalInteger(body, name, 1);
  for (const name of BOOLEAN_PARAMETERS) optionalBoolean(body, name);
}

function checkMessages(value: unknown): void {
  if (!Array.isArray(value) || value.length === 0) throw invalidParameter('messages', 'must be a non-empty array');
  value.forEach((message, i) => {
    const m = message as { role?: unknown; content?: unknown } | null;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw invalidParameter(`messages[${i}]`, 'must be an object');
    if (typeof m.role !== 'string' || !ROLES.includes(m.role)) {
      throw invalidParameter(`messages[${i}].role`, `must be one of ${ROLES.join(', ')}`);
    }
    // Text, an array of content parts, or null (an assistant turn that only calls tools).
    const content = m.content;
    if (!(typeof content === 'string' || Array.isArray(content) || (content === null && m.role === 'assistant'))) {
      throw invalidParameter(`messages[${i}].content`, 'must be a string or an array of content parts');
    }
  });
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
