/**
 * How an answer is written in each API the gateway serves: the relay makes the public chat
 * answer (public-answer.ts), and a shape writes it as its API defines it: chat completions as
 * they are, the Messages API (`POST /messages`) as Anthropic's message and event stream.
 */
import { toErrorBody, type ErrorSerializerOptions } from '../http/api-errors';

type Json = Record<string, any>;

/** One API's way of writing a completion, its stream and its failures. */
export interface AnswerShape {
  /** The body of a whole answer, from the public completion (usage and cost in it). */
  completion(completion: Json): Json;
  /** What one public chunk becomes on the wire: events, or nothing. */
  chunk(chunk: Json): string;
  /** The end of a stream, from the public usage chunk. */
  end(usageChunk: Json): string;
  /** A failure after the stream began, from the public error chunk. */
  streamError(errorChunk: Json): string;
  /** The whole answer once written by `completion` or `end`, where the API keeps answers (the Responses API). */
  final?(): Json | undefined;
  /** The end of the stream again, saying the answer was not kept (`store: false`). */
  unkept?(): string;
  /** A failure before the answer began: the status, body and headers. */
  error(error: unknown, options: ErrorSerializerOptions): { status: number; body: unknown; headers?: Readonly<Record<string, string>> };
}

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/** Chat completions, written as the public API writes them. */
export const CHAT_SHAPE: AnswerShape = {
  completion: (completion) => completion,
  chunk: data,
  end: (usageChunk) => `${data(usageChunk)}data: [DONE]\n\n`,
  streamError: data,
  error: (error, options) => toErrorBody(error, options),
};

const STOP_REASONS: Readonly<Record<string, string>> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 415: 'invalid_request_error', 429: 'rate_limit_error', 503: 'overloaded_error', 504: 'timeout_error',
};

const event = (type: string, body: Json) => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
const messageId = (id: unknown) => `msg_${String(id).replace(/^gen-/, '')}`;

/** Anthropic's usage of the public one: fresh input apart from cache reads and writes. */
function messagesUsage(usage: Json | undefined): Json {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: written,
    ...(typeof usage?.cost === 'number' ? { cost: usage.cost } : {}),
  };
}

const parsed = (text: unknown): Json => {
  try {
    const value = JSON.parse(String(text));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
};

/** The Messages API's error body: `{"type": "error", "error": {"type", "message"}}`. */
function messagesError(status: number, message: string): Json {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

/** A whole answer as the Messages API's `message`: thinking, text and `tool_use` blocks, its stop reason and usage. */
function messagesCompletion(completion: Json): Json {
  const choice = completion.choices?.[0] ?? {};
  const message = choice.message ?? {};
  const content: Json[] = [];
  for (const detail of message.reasoning_details ?? []) {
    if (detail?.type === 'reasoning.text') content.push({ type: 'thinking', thinking: detail.text ?? '', signature: detail.signature ?? '' });
    else if (detail?.type === 'reasoning.encrypted' && typeof detail.data === 'string') content.push({ type: 'redacted_thinking', data: detail.data });
  }
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of message.tool_calls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.function?.name, input: parsed(call.function?.arguments) });
  return {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    stop_reason: STOP_REASONS[choice.finish_reason] ?? 'end_turn',
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  };
}

/**
 * The Messages API (Anthropic's reference): a `message` of content blocks (thinking, text,
 * `tool_use`) with its `stop_reason` and usage; a stream of `message_start`, one
 * `content_block_start`/`_delta`/`_stop` run per block (each tool call its own block, its
 * input as `input_json_delta`), `message_delta` with the stop reason and usage, `message_stop`;
 * errors in Anthropic's shape. One per request: the stream's blocks are its state.
 */
export function messagesShape(): AnswerShape {
  let started = false;
  let index = -1;
  let open: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use' | undefined;
  const tools = new Map<number, number>();
  let stopReason = 'end_turn';
  const open_ = (type: 'text' | 'thinking' | 'redacted_thinking' | 'tool_use', block: Json): string => {
    const closing = close();
    open = type;
    index++;
    return closing + event('content_block_start', { index, content_block: block });
  };
  const close = (): string => {
    if (open === undefined) return '';
    open = undefined;
    return event('content_block_stop', { index });
  };
  return {
    completion: messagesCompletion,
    chunk(chunk) {
      let out = '';
      if (!started) {
        started = true;
        const message = { id: messageId(chunk.id), type: 'message', role: 'assistant', model: chunk.model, content: [], stop_reason: null, stop_sequence: null, usage: messagesUsage(undefined) };
        out += event('message_start', { message });
      }
      const choice = chunk.choices?.[0];
      const delta = choice?.delta ?? {};
      if (typeof delta.reasoning === 'string' && delta.reasoning !== '') {
        if (open !== 'thinking') out += open_('thinking', { type: 'thinking', thinking: '' });
        out += event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: delta.reasoning } });
      }
      for (const detail of delta.reasoning_details ?? []) {
        if (typeof detail?.signature === 'string' && detail.signature !== '' && open === 'thinking') out += event('content_block_delta', { index, delta: { type: 'signature_delta', signature: detail.signature } });
        // Encrypted thinking is one whole block: started with its data, and closed.
        if (detail?.type === 'reasoning.encrypted' && typeof detail.data === 'string') out += open_('redacted_thinking', { type: 'redacted_thinking', data: detail.data }) + close();
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        if (open !== 'text') out += open_('text', { type: 'text', text: '' });
        out += event('content_block_delta', { index, delta: { type: 'text_delta', text: delta.content } });
      }
      for (const call of delta.tool_calls ?? []) {
        if (!tools.has(call.index) && call.id !== undefined) {
          out += open_('tool_use', { type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: {} });
          tools.set(call.index, index);
        }
        const args = call.function?.arguments;
        if (typeof args === 'string' && args !== '' && tools.get(call.index) === index) out += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: args } });
      }
      if (typeof choice?.finish_reason === 'string') stopReason = STOP_REASONS[choice.finish_reason] ?? 'end_turn';
      return out;
    },
    end(usageChunk) {
      const head = started ? '' : this.chunk({ ...usageChunk, choices: [] });
      return `${head}${close()}${event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: messagesUsage(usageChunk.usage) })}${event('message_stop', {})}`;
    },
    streamError(errorChunk) {
      const status = typeof errorChunk.error?.code === 'number' ? errorChunk.error.code : 500;
      return event('error', messagesError(status, String(errorChunk.error?.message ?? 'The provider failed')));
    },
    error(error, options) {
      const { status, body, headers } = toErrorBody(error, options);
      return { status, body: messagesError(status, body.error.message), ...(headers ? { headers } : {}) };
    },
  };
}
