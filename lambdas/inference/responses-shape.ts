/**
 * The Responses API's answer (docs/api.md#the-responses-api): a `response` object of output
 * items, and its event stream, written from the public chat answer the relay makes.
 */
import { toErrorBody, type ErrorSerializerOptions } from '../http/api-errors';
import type { AnswerShape } from './answer-shapes';

type Json = Record<string, any>;

/** What a response repeats of its request, and whether it is kept. */
export interface ResponseEcho {
  readonly instructions: string | null;
  readonly max_output_tokens: number | null;
  readonly metadata: Json;
  readonly parallel_tool_calls: boolean;
  readonly previous_response_id: string | null;
  readonly reasoning: Json | null;
  readonly store: boolean;
  readonly temperature: number | null;
  readonly text: Json;
  readonly tool_choice: unknown;
  readonly tools: readonly unknown[];
  readonly top_p: number | null;
  readonly user: string | null;
}

/** The echo of a request's fields (defaults as OpenAI answers them); `store` says whether the response is kept. */
export function responseEcho(body: Readonly<Json>, store: boolean): ResponseEcho {
  const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
  return {
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: orNull(body.max_output_tokens),
    metadata: body.metadata ?? {},
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: orNull(body.previous_response_id),
    reasoning: orNull(body.reasoning),
    store,
    temperature: orNull(body.temperature),
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: orNull(body.top_p),
    user: orNull(body.user),
  };
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'insufficient_quota', 403: 'permission_error', 404: 'not_found_error',
  409: 'conflict_error', 413: 'invalid_request_error', 415: 'invalid_request_error', 429: 'rate_limit_error', 503: 'server_error', 504: 'server_error',
};

/** OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`, with the common body's `metadata` kept. */
export function responsesError(status: number, error: { message: string; metadata?: Json | null }): Json {
  const { code, param, ...metadata } = error.metadata ?? {};
  return {
    error: {
      message: error.message,
      type: ERROR_TYPES[status] ?? 'server_error',
      param: typeof param === 'string' ? param : null,
      code: typeof code === 'string' ? code : null,
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    },
  };
}

/** The Responses usage of the public chat usage: input with its cached part, output with its reasoning part, and the cost. */
function responsesUsage(usage: Json | undefined): Json {
  const input = usage?.prompt_tokens ?? 0;
  const output = usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
    ...(typeof usage?.cost === 'number' ? { cost: usage.cost } : {}),
  };
}

const INCOMPLETE: Readonly<Record<string, string>> = { length: 'max_output_tokens', content_filter: 'content_filter' };
/** A custom tool call's input: the `input` string of its JSON arguments, else the arguments as they are. */
function customInput(args: string): string {
  try {
    const input = (JSON.parse(args) as Json | null)?.input;
    return typeof input === 'string' ? input : args;
  } catch {
    return args;
  }
}

const OUTPUT_TEXT: Json = { type: 'output_text', text: '', annotations: [], logprobs: [] };

/** A Responses API answer in the making: its id, echo, and the stored form it ends in. */
export interface ResponsesShape extends AnswerShape {
  /** The request's fields the response repeats, and its custom tools by name; set once the request is read. */
  echo(fields: ResponseEcho, customTools?: ReadonlySet<string>): void;
  /** The whole response as it was answered, once its completion or stream's end was written. */
  final(): Json | undefined;
}

/**
 * The Responses API: a `response` (`resp_…`) whose output items are reasoning, a `message` of
 * `output_text`, and `function_call`s; a stream of its events, each with its `sequence_number`:
 * `response.created`, `response.in_progress`, per item `response.output_item.added`, its parts'
 * and deltas' events and `response.output_item.done`, then `response.completed` (or
 * `response.incomplete`); errors in OpenAI's shape. One per request.
 */
export function responsesShape(now: () => Date): ResponsesShape {
  return new ResponsesAnswer(now);
}

/** One response's answer: its output items as they grow, and the events they make. */
class ResponsesAnswer implements ResponsesShape {
  private fields: ResponseEcho = responseEcho({}, false);
  private id = 'resp_';
  private model = '';
  private last: Json | undefined;
  private sequence = 0;
  private readonly items: Json[] = [];
  /** Each tool call's output index, by its chat index. */
  private readonly tools = new Map<number, number>();
  /** A custom tool call's JSON arguments so far, by output index. */
  private readonly customArguments = new Map<number, string>();
  private open: number | undefined;
  private finish: string | null = null;
  private begun = false;
  private ending: ((answer: Json) => string) | undefined;
  private readonly createdAt: number;
  private customTools: ReadonlySet<string> = new Set();

  constructor(private readonly now: () => Date) {
    this.createdAt = this.seconds();
  }

  echo(fields: ResponseEcho, customTools: ReadonlySet<string> = new Set()): void {
    this.fields = fields;
    this.customTools = customTools;
  }

  final(): Json | undefined {
    return this.last;
  }

  completion(completion: Json): Json {
    this.identify(completion);
    const choice = completion.choices?.[0] ?? {};
    const message = choice.message ?? {};
    for (const detail of message.reasoning_details ?? []) {
      if (detail?.type === 'reasoning.encrypted' && typeof detail.data === 'string') this.items.push({ ...this.reasoningItem(), content: [], encrypted_content: detail.data, status: 'completed' });
      if (detail?.type !== 'reasoning.text') continue;
      this.items.push({ ...this.reasoningItem(), content: [{ type: 'reasoning_text', text: detail.text ?? '' }], ...(detail.signature ? { encrypted_content: detail.signature } : {}), status: 'completed' });
    }
    if (typeof message.content === 'string' && message.content !== '') {
      this.items.push({ ...this.messageItem(), status: 'completed', content: [{ ...OUTPUT_TEXT, text: message.content }] });
    }
    for (const call of message.tool_calls ?? []) {
      const name = call.function?.name ?? '';
      const args = call.function?.arguments ?? '';
      const item = this.customTools.has(name) ? { type: 'custom_tool_call', id: this.itemId('ctc'), call_id: call.id, name, input: customInput(args) } : { type: 'function_call', id: this.itemId('fc'), call_id: call.id, name, arguments: args };
      this.items.push({ ...item, status: 'completed' });
    }
    this.finish = choice.finish_reason ?? null;
    this.last = this.response(this.status(), responsesUsage(completion.usage));
    return this.last;
  }

  chunk(chunk: Json): string {
    let out = this.begun ? '' : this.begin(chunk);
    const choice = chunk.choices?.[0];
    const delta = choice?.delta ?? {};
    if (typeof delta.reasoning === 'string' && delta.reasoning !== '') {
      if (this.current()?.type !== 'reasoning') out += this.openItem(this.reasoningItem(), { type: 'reasoning_text', text: '' });
      out += this.append('response.reasoning_text.delta', delta.reasoning);
    }
    for (const detail of delta.reasoning_details ?? []) {
      const item = this.current();
      if (typeof detail?.signature === 'string' && detail.signature !== '' && item?.type === 'reasoning') item.encrypted_content = (item.encrypted_content ?? '') + detail.signature;
      if (detail?.type === 'reasoning.encrypted' && typeof detail.data === 'string') out += this.encryptedItem(detail.data);
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.current()?.type !== 'message') out += this.openItem(this.messageItem(), { ...OUTPUT_TEXT });
      out += this.append('response.output_text.delta', delta.content);
    }
    for (const call of delta.tool_calls ?? []) out += this.toolDelta(call);
    if (typeof choice?.finish_reason === 'string') this.finish = choice.finish_reason;
    return out;
  }

  end(usageChunk: Json): string {
    const head = this.begun ? '' : this.chunk({ ...usageChunk, choices: [] });
    let closing = this.closeOpen();
    this.items.forEach((_, index) => (closing += this.closeItem(index)));
    const status = this.status();
    this.last = this.response(status, responsesUsage(usageChunk.usage));
    const type = status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    const at = this.sequence;
    this.ending = (answer) => {
      this.sequence = at;
      return `${head}${closing}${this.send(type, { response: answer })}`;
    };
    return this.ending(this.last);
  }

  unkept(): string {
    this.last = { ...this.last, store: false };
    return this.ending!(this.last);
  }

  streamError(errorChunk: Json): string {
    const status = typeof errorChunk.error?.code === 'number' ? errorChunk.error.code : 500;
    const { error } = responsesError(status, { message: String(errorChunk.error?.message ?? 'The provider failed') });
    const head = this.begun ? '' : this.chunk({ ...errorChunk, choices: [] });
    const failed = this.response('failed', null, { error: { code: 'server_error', message: error.message } });
    return `${head}${this.send('error', { code: error.code ?? error.type, message: error.message, param: error.param })}${this.send('response.failed', { response: failed })}`;
  }

  error(error: unknown, options: ErrorSerializerOptions): ReturnType<AnswerShape['error']> {
    const { status, body, headers } = toErrorBody(error, options);
    return { status, body: responsesError(status, body.error), ...(headers ? { headers } : {}) };
  }

  private seconds(): number {
    return Math.floor(this.now().getTime() / 1000);
  }

  private identify(answer: Json): void {
    this.id = `resp_${String(answer.id).replace(/^gen-/, '')}`;
    this.model = answer.model ?? this.model;
  }

  private status(): 'completed' | 'incomplete' {
    return this.finish !== null && INCOMPLETE[this.finish] ? 'incomplete' : 'completed';
  }

  private response(status: string, usage: Json | null, extra: Json = {}): Json {
    const incomplete = status === 'incomplete' ? { reason: INCOMPLETE[this.finish ?? ''] } : null;
    const completed = status === 'in_progress' ? {} : { completed_at: this.seconds() };
    return { id: this.id, object: 'response', created_at: this.createdAt, status, ...completed, error: null, incomplete_details: incomplete, model: this.model, output: this.items, ...this.fields, truncation: 'disabled', usage, ...extra };
  }

  private send(type: string, body: Json): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...body })}\n\n`;
  }

  private begin(chunk: Json): string {
    this.begun = true;
    this.identify(chunk);
    const started = { ...this.response('in_progress', null), output: [] };
    return this.send('response.created', { response: started }) + this.send('response.in_progress', { response: started });
  }

  private itemId(prefix: string): string {
    return `${prefix}_${this.id.slice(5)}_${this.items.length}`;
  }

  private reasoningItem(): Json {
    return { type: 'reasoning', id: this.itemId('rs'), summary: [], content: [{ type: 'reasoning_text', text: '' }] };
  }

  /** Encrypted thinking: one whole reasoning item, its text none, its data the `encrypted_content` sent back. */
  private encryptedItem(data: string): string {
    const out = this.openItem({ ...this.reasoningItem(), content: [], encrypted_content: data });
    const index = this.open!;
    this.open = undefined;
    this.items[index]!.status = 'completed';
    return out + this.send('response.output_item.done', { output_index: index, item: this.items[index] });
  }

  private messageItem(): Json {
    return { type: 'message', id: this.itemId('msg'), role: 'assistant', content: [{ ...OUTPUT_TEXT }] };
  }

  private current(): Json | undefined {
    return this.open === undefined ? undefined : this.items[this.open];
  }

  /** A delta of the open item's one part (text or reasoning). */
  private append(type: string, delta: string): string {
    const item = this.current()!;
    item.content[0].text += delta;
    return this.send(type, { item_id: item.id, output_index: this.open, content_index: 0, delta, ...(item.type === 'message' ? { logprobs: [] } : {}) });
  }

  private toolDelta(call: Json): string {
    let out = '';
    if (!this.tools.has(call.index) && call.id !== undefined) {
      const name = call.function?.name ?? '';
      // A custom tool's input is a string inside the call's JSON arguments: it is sent whole, once they are.
      const item = this.customTools.has(name) ? { type: 'custom_tool_call', id: this.itemId('ctc'), call_id: call.id, name, input: '' } : { type: 'function_call', id: this.itemId('fc'), call_id: call.id, name, arguments: '' };
      out += this.openItem(item);
      this.tools.set(call.index, this.open!);
      if (item.type === 'custom_tool_call') this.customArguments.set(this.open!, '');
    }
    const index = this.tools.get(call.index);
    const args = call.function?.arguments;
    if (index === undefined || typeof args !== 'string' || args === '') return out;
    const item = this.items[index]!;
    if (item.type === 'custom_tool_call') {
      this.customArguments.set(index, this.customArguments.get(index)! + args);
      return out;
    }
    item.arguments += args;
    return out + this.send('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: args });
  }

  private openItem(item: Json, part?: Json): string {
    let out = this.closeOpen();
    this.items.push({ ...item, status: 'in_progress' });
    const index = this.items.length - 1;
    out += this.send('response.output_item.added', { output_index: index, item: { ...this.items[index], ...(part ? { content: [] } : {}) } });
    if (part) out += this.send('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part });
    this.open = index;
    return out;
  }

  private closeOpen(): string {
    if (this.open === undefined) return '';
    const index = this.open;
    this.open = undefined;
    return this.closeItem(index);
  }

  private closeItem(index: number): string {
    const item = this.items[index]!;
    if (item.status === 'completed') return '';
    item.status = 'completed';
    // Events are numbered as they are made: the item's own ends first, then its `output_item.done`.
    const done = () => this.send('response.output_item.done', { output_index: index, item });
    if (item.type === 'custom_tool_call') {
      item.input = customInput(this.customArguments.get(index) ?? '');
      const ids = { item_id: item.id, output_index: index };
      return this.send('response.custom_tool_call_input.delta', { ...ids, delta: item.input }) + this.send('response.custom_tool_call_input.done', { ...ids, input: item.input }) + done();
    }
    if (item.type === 'function_call') return this.send('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments }) + done();
    const part = item.content[0];
    const textDone = item.type === 'message' ? 'response.output_text.done' : 'response.reasoning_text.done';
    const partDone = this.send(textDone, { item_id: item.id, output_index: index, content_index: 0, text: part.text, ...(item.type === 'message' ? { logprobs: [] } : {}) }) + this.send('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
    return partDone + done();
  }
}
