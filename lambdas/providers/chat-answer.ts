/**
 * A provider's answer in the chat-completions shape the gateway relays (docs/providers.md, "How
 * an answer comes back"): each provider API's answer is read as {@link AnswerEvent}s, and one
 * writer turns them into chunks or a whole completion, so tool-call indexes, finish reasons and
 * usage are made in one place for every API.
 */
import { countOf } from '../counts';

/** Tokens as a provider counts them: `input` is the fresh prompt, cache reads and writes apart. */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** The public finish reasons a translated answer ends with. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** Stop reasons that are not `stop`, in Anthropic's words, which Bedrock's Converse shares. */
const FINISH_OF_STOP: Readonly<Record<string, FinishReason>> = {
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/** The public finish reason of an Anthropic or Bedrock stop reason: `end_turn`, `stop_sequence` and the rest are `stop`. */
export function finishOfStop(reason: unknown): FinishReason {
  return typeof reason === 'string' && Object.prototype.hasOwnProperty.call(FINISH_OF_STOP, reason) ? FINISH_OF_STOP[reason]! : 'stop';
}

/** One step of a provider's answer, in the terms every API shares. */
export type AnswerEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text?: string; signature?: string }
  /** Thinking the provider encrypted (Anthropic's `redacted_thinking`), passed on as `reasoning.encrypted`. */
  | { type: 'redacted_reasoning'; data: string }
  /** A tool call begins; `block` is the provider's position of it, which its input pieces name. */
  | { type: 'tool_start'; block: number; id: string; name: string }
  | { type: 'tool_input'; block: number; json: string }
  | { type: 'finish'; reason: FinishReason }
  /** Counts reported so far; later reports replace the members they give. */
  | { type: 'usage'; usage: Partial<TokenUsage> }
  /** The provider is alive but has nothing to say (Anthropic's `ping`). */
  | { type: 'keepalive' }
  /** The provider failed after it began to answer. */
  | { type: 'error'; message: string };

type Json = Record<string, unknown>;

/** How answers are shaped besides the events: the forced tool whose input is the JSON answer (`response_format`), if any. */
export interface AnswerOptions {
  answerTool?: string;
}

/** The public usage of provider counts: `prompt_tokens` counts fresh input, cache reads and cache writes, the details name the last two. */
export function chatUsage(usage: TokenUsage): Json {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output,
    total_tokens: prompt + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, cache_write_tokens: usage.cacheWrite },
  };
}

/**
 * Turns answer events into `chat.completion.chunk` objects. Each tool call gets the next public
 * `index` and keeps its own id, so parallel calls stream apart; the forced answer tool's input
 * streams as content. A failure after the answer began ends with a usage chunk (what was
 * generated, see {@link ChunkWriter.generatedBytes}) and the error chunk.
 */
export class ChunkWriter {
  private readonly toolIndexes = new Map<number, number>();
  private readonly answerBlocks = new Set<number>();
  private usage: TokenUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  private usageReported = false;
  private finish: FinishReason | undefined;
  private started = false;
  /** Bytes of content, reasoning and tool input generated: an upper bound of their tokens. */
  generatedBytes = 0;

  constructor(private readonly options: AnswerOptions = {}) {}

  /** The chunks one event makes (none for usage, finish and most starts). */
  chunks(event: AnswerEvent): Json[] {
    switch (event.type) {
      case 'text':
        this.generatedBytes += Buffer.byteLength(event.text);
        return event.text === '' ? [] : [this.delta({ content: event.text })];
      case 'reasoning': {
        this.generatedBytes += Buffer.byteLength(event.text ?? '');
        const detail: Json = { type: 'reasoning.text', format: 'anthropic-claude-v1', index: 0 };
        if (event.text !== undefined) detail.text = event.text;
        if (event.signature !== undefined) detail.signature = event.signature;
        return [this.delta({ ...(event.text !== undefined ? { reasoning: event.text } : {}), reasoning_details: [detail] })];
      }
      case 'redacted_reasoning':
        return [this.delta({ reasoning_details: [encryptedDetail(event.data)] })];
      case 'tool_start':
        if (event.name === this.options.answerTool) {
          this.answerBlocks.add(event.block);
          return [];
        }
        this.toolIndexes.set(event.block, this.toolIndexes.size);
        return [this.delta({ tool_calls: [{ index: this.toolIndexes.get(event.block), id: event.id, type: 'function', function: { name: event.name, arguments: '' } }] })];
      case 'tool_input': {
        this.generatedBytes += Buffer.byteLength(event.json);
        if (event.json === '') return [];
        if (this.answerBlocks.has(event.block)) return [this.delta({ content: event.json })];
        const index = this.toolIndexes.get(event.block);
        return index === undefined ? [] : [this.delta({ tool_calls: [{ index, function: { arguments: event.json } }] })];
      }
      case 'finish':
        this.finish = event.reason === 'tool_calls' && this.toolIndexes.size === 0 ? 'stop' : event.reason;
        return [];
      case 'usage':
        this.usage = { ...this.usage, ...definedCounts(event.usage) };
        this.usageReported = true;
        return [];
      case 'keepalive':
        return [];
      case 'error':
        return this.failure(event.message);
    }
  }

  /** The last chunks of an answer that ended: its finish reason, then its usage. */
  end(): Json[] {
    const last = this.delta({}, this.finish ?? 'stop');
    return [last, { object: 'chat.completion.chunk', choices: [], usage: chatUsage(this.usage) }];
  }

  /**
   * A failure after the answer began: the usage chunk charges the prompt the provider reported
   * and, as completion, the bytes generated (a token is at least a byte); without a reported
   * prompt no usage goes out, and the completion is charged its maximum.
   */
  failure(message: string): Json[] {
    const usage = { ...this.usage, output: Math.max(this.usage.output, this.generatedBytes) };
    const chunks: Json[] = this.usageReported ? [{ object: 'chat.completion.chunk', choices: [], usage: chatUsage(usage) }] : [];
    return [...chunks, { object: 'chat.completion.chunk', choices: [], error: { code: 502, message } }];
  }

  private delta(delta: Json, finishReason: FinishReason | null = null): Json {
    if (!this.started && finishReason === null) {
      this.started = true;
      delta = { role: 'assistant', ...delta };
    }
    return { object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] };
  }
}

/** A whole answer's events as one `chat.completion`. */
export function completionOf(events: readonly AnswerEvent[], options: AnswerOptions = {}): Json {
  let content = '';
  let reasoning: string | undefined;
  const details: Json[] = [];
  const encrypted: Json[] = [];
  const calls = new Map<number, { id: string; type: 'function'; function: { name: string; arguments: string } }>();
  const answerBlocks = new Set<number>();
  let usage: TokenUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  let finish: FinishReason = 'stop';
  for (const event of events) {
    if (event.type === 'text') content += event.text;
    else if (event.type === 'reasoning') {
      if (event.text !== undefined) reasoning = (reasoning ?? '') + event.text;
      details.push({ type: 'reasoning.text', format: 'anthropic-claude-v1', index: 0, ...(event.text !== undefined ? { text: event.text } : {}), ...(event.signature !== undefined ? { signature: event.signature } : {}) });
    } else if (event.type === 'redacted_reasoning') encrypted.push(encryptedDetail(event.data));
    else if (event.type === 'tool_start') {
      if (event.name === options.answerTool) answerBlocks.add(event.block);
      else calls.set(event.block, { id: event.id, type: 'function', function: { name: event.name, arguments: '' } });
    } else if (event.type === 'tool_input') {
      if (answerBlocks.has(event.block)) content += event.json;
      else {
        const call = calls.get(event.block);
        if (call) call.function.arguments += event.json;
      }
    } else if (event.type === 'finish') finish = event.reason === 'tool_calls' && calls.size === 0 ? 'stop' : event.reason;
    else if (event.type === 'usage') usage = { ...usage, ...definedCounts(event.usage) };
  }
  const message: Json = { role: 'assistant', content: content === '' && calls.size > 0 ? null : content, refusal: null };
  if (calls.size > 0) message.tool_calls = [...calls.values()];
  if (reasoning !== undefined) message.reasoning = reasoning;
  if (details.length + encrypted.length > 0) message.reasoning_details = [...(details.length > 0 ? mergedDetails(details) : []), ...encrypted];
  return { object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage: chatUsage(usage) };
}

/** Encrypted thinking as the public `reasoning.encrypted` detail. */
const encryptedDetail = (data: string): Json => ({ type: 'reasoning.encrypted', format: 'anthropic-claude-v1', index: 0, data });

/** Reasoning details of one block, its text pieces and signature joined as one `reasoning.text`. */
function mergedDetails(details: Json[]): Json[] {
  const text = details.map((detail) => detail.text ?? '').join('');
  const signature = details.map((detail) => detail.signature).find((value) => typeof value === 'string');
  return [{ type: 'reasoning.text', format: 'anthropic-claude-v1', index: 0, text, ...(signature !== undefined ? { signature } : {}) }];
}

/** The members of a usage report that are counts: a provider's null or negative is not a count. */
function definedCounts(usage: Partial<TokenUsage>): Partial<TokenUsage> {
  const out: Partial<TokenUsage> = {};
  for (const key of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    const value = countOf(usage[key]);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The answer as the relay reads an upstream's: a stream of `data:` chunks ending `[DONE]` (a
 * keepalive as an SSE comment), or one JSON completion. The events are read as the relay reads
 * the body, so the provider is read no faster than the client takes the answer.
 */
export function chatResponse(events: AsyncIterable<AnswerEvent>, stream: boolean, options: AnswerOptions = {}): Response {
  if (!stream) {
    const readable = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const all: AnswerEvent[] = [];
          for await (const event of events) {
            if (event.type === 'error') throw new Error(event.message);
            all.push(event);
          }
          controller.enqueue(new TextEncoder().encode(JSON.stringify(completionOf(all, options))));
          controller.close();
        } catch (error) {
          controller.error(error);
        }
      },
    });
    return new Response(readable, { status: 200, headers: { 'Content-Type': 'application/json' } });
  }
  const writer = new ChunkWriter(options);
  const iterator = events[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  const readable = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        let next: IteratorResult<AnswerEvent>;
        try {
          next = await iterator.next();
        } catch (error) {
          controller.error(error);
          return;
        }
        if (next.done) {
          controller.enqueue(encoder.encode(sse([...writer.end()]) + 'data: [DONE]\n\n'));
          controller.close();
          return;
        }
        if (next.value.type === 'keepalive') {
          controller.enqueue(encoder.encode(': keep-alive\n\n'));
          return;
        }
        const chunks = writer.chunks(next.value);
        if (next.value.type === 'error') {
          controller.enqueue(encoder.encode(sse(chunks)));
          controller.close();
          return;
        }
        if (chunks.length > 0) {
          controller.enqueue(encoder.encode(sse(chunks)));
          return;
        }
      }
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
  return new Response(readable, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
}

const sse = (chunks: Json[]): string => chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
