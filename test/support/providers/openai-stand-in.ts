import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Token counts a scripted answer reports; `input` excludes `cacheRead`, which OpenAI counts in `prompt_tokens`. */
export interface StandInUsage { input?: number; output?: number; cacheRead?: number; cacheWrite?: number }

/**
 * One scripted answer to the next request. Unscripted requests get { kind: 'text' }. `stream-error` streams the first
 * `afterDeltas` chunks of the default answer (role chunk first), then OpenAI's error event; without `stream`, a 500.
 */
export type OpenAIReply =
  | { kind: 'text'; text?: string; finishReason?: 'stop' | 'length' | 'content_filter'; usage?: StandInUsage }
  | { kind: 'tools'; calls: { name: string; input: Record<string, unknown> }[]; text?: string; usage?: StandInUsage }
  | { kind: 'status'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  | { kind: 'stream-error'; afterDeltas: number; errorType: string; message: string };

/** A request as it arrived: headers, and the body parsed (or its raw text when it is not JSON). */
export interface ReceivedOpenAIRequest { headers: import('node:http').IncomingHttpHeaders; body: any }

/** A running stand-in for OpenAI's Chat Completions API. */
export interface OpenAIStandIn {
  /** `http://127.0.0.1:<port>/v1`: both the SDK's baseURL and the gateway's baseUrl (it posts to `<baseUrl>/chat/completions`). */
  baseUrl: string;
  /** Every request, refused ones included, in order of arrival. */
  received: ReceivedOpenAIRequest[];
  /** Queues answers for the next valid requests (a refused request takes none). */
  script(...replies: OpenAIReply[]): void;
  /** Forgets the queued answers and the received requests. */
  reset(): void;
  stop(): Promise<void>;
}

type Json = Record<string, any>;
type StandInOptions = { apiKey: string; models: readonly string[] };
type Answer = { text: string | null; calls: { id: string; name: string; arguments: string }[]; finish: string };

/** The request body's fields, as the API reference names them. */
const PARAMETERS = new Set([
  'model', 'messages', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs', 'max_completion_tokens', 'max_tokens', 'metadata', 'modalities',
  'n', 'parallel_tool_calls', 'prediction', 'presence_penalty', 'prompt_cache_key', 'reasoning_effort', 'response_format', 'safety_identifier', 'seed', 'service_tier',
  'stop', 'store', 'stream', 'stream_options', 'temperature', 'tool_choice', 'tools', 'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options',
]);
/** Fields of a simple type (`|` between the types allowed), and the bounds of numbers. */
const SCALARS: Record<string, [kind: string, min?: number, max?: number]> = {
  frequency_penalty: ['decimal', -2, 2], presence_penalty: ['decimal', -2, 2], temperature: ['decimal', 0, 2], top_p: ['decimal', 0, 1],
  max_tokens: ['integer', 1], max_completion_tokens: ['integer', 1], n: ['integer', 1, 128], seed: ['integer'], top_logprobs: ['integer', 0, 20],
  logprobs: ['boolean'], parallel_tool_calls: ['boolean'], store: ['boolean'], stream: ['boolean'], user: ['string'], prompt_cache_key: ['string'], safety_identifier: ['string'],
  audio: ['object'], logit_bias: ['object'], metadata: ['object'], prediction: ['object'], web_search_options: ['object'], functions: ['array'], modalities: ['array'],
  stop: ['string|array'], function_call: ['string|object'],
};
const ENUMS: Record<string, string[]> = {
  reasoning_effort: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'], service_tier: ['auto', 'default', 'flex', 'scale', 'priority'], verbosity: ['low', 'medium', 'high'],
};
/** The fields a message of each role may carry, and the content parts it may hold. */
const ROLES: Record<string, { fields: string[]; parts: string[] }> = {
  system: { fields: ['role', 'content', 'name'], parts: ['text'] },
  developer: { fields: ['role', 'content', 'name'], parts: ['text'] },
  user: { fields: ['role', 'content', 'name'], parts: ['text', 'image_url', 'input_audio', 'file'] },
  assistant: { fields: ['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call'], parts: ['text', 'refusal'] },
  tool: { fields: ['role', 'content', 'tool_call_id'], parts: ['text'] },
};
const NO_KEY =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), " +
  "or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. " +
  'You can obtain an API key from https://platform.openai.com/account/api-keys.';
const NOT_JSON =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, " +
  'but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)';
const UNANSWERED =
  "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ";
const FINGERPRINT = 'fp_5a1b7c9e2d';

/** A request OpenAI turns away: its status and the `error` object of its body. */
class Refusal extends Error {
  constructor(readonly status: number, message: string, readonly param: string | null = null, readonly code: string | null = null) {
    super(message);
  }
}

/** Refuses the request with a 400 `invalid_request_error`. */
function refuse(message: string, param: string | null = null, code: string | null = null): never {
  throw new Refusal(400, message, param, code);
}
const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'decimal') : typeof value;
const article = (kind: string) => (kind === 'null' ? kind : `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`);
const quoted = (values: string[]) => values.map((value) => `'${value}'`).join(', ').replace(/, ([^,]+)$/, ', and $1');
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const token = (length: number) => Array.from(randomBytes(length), (byte) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[byte % 62]).join('');

function expectType(value: unknown, param: string, ...kinds: string[]): void {
  const kind = kindOf(value);
  if (kinds.includes(kind) || (kind === 'integer' && kinds.includes('decimal'))) return;
  refuse(`Invalid type for '${param}': expected ${kinds.map(article).join(' or ')}, but got ${article(kind)} instead.`, param, 'invalid_type');
}

function expectKeys(object: Json, param: string, allowed: readonly string[]): void {
  const unknown = Object.keys(object).find((key) => !allowed.includes(key));
  if (unknown !== undefined) refuse(`Unknown parameter: '${param}.${unknown}'.`, `${param}.${unknown}`, 'unknown_parameter');
}

function required(object: Json, key: string, param: string, ...kinds: string[]): any {
  const path = param ? `${param}.${key}` : key;
  if (object[key] === undefined) refuse(`Missing required parameter: '${path}'.`, path, 'missing_required_parameter');
  if (kinds.length) expectType(object[key], path, ...kinds);
  return object[key];
}

/** Checks that `value` is an object with none but these fields. */
function shape(value: unknown, param: string, fields: readonly string[]): Json {
  expectType(value, param, 'object');
  expectKeys(value as Json, param, fields);
  return value as Json;
}

/** Checks the type of each of these fields that is set. */
function optional(object: Json, param: string, kinds: Record<string, string>): void {
  for (const [key, kind] of Object.entries(kinds)) if (object[key] != null) expectType(object[key], `${param}.${key}`, kind);
}

function oneOf(value: unknown, param: string, values: string[]): void {
  if (!values.includes(value as string)) refuse(`Invalid value: '${String(value)}'. Supported values are: ${quoted(values)}.`, param, 'invalid_value');
}

/** Checks that `value` is an array of at least one element. */
function list(value: unknown, param: string): any[] {
  expectType(value, param, 'array');
  if ((value as unknown[]).length === 0) refuse(`Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`, param, 'empty_array');
  return value as any[];
}

/** The body parsed, or nothing when it is not JSON. */
function parseJson(raw: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(raw) };
  } catch {
    return undefined;
  }
}

/** The text of a message's content: a string, or its text and refusal parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((part: Json) => part.text ?? part.refusal ?? '').join(' ') : '';
}

function validateContent(message: Json, at: string): void {
  const { role, content } = message;
  const mayOmit = role === 'assistant' && (message.tool_calls != null || message.function_call != null || message.audio != null);
  if (mayOmit && content == null) return;
  required(message, 'content', at, 'string', 'array');
  if (typeof content === 'string') return;
  list(content, `${at}.content`).forEach((part: any, j: number) => {
    const where = `${at}.content[${j}]`;
    expectType(part, where, 'object');
    const type = required(part, 'type', where, 'string');
    oneOf(type, `${where}.type`, ROLES[role]!.parts);
    expectKeys(part, where, ['type', type]);
    required(part, type, where, type === 'text' || type === 'refusal' ? 'string' : 'object');
  });
}

/** Validates an assistant message's tool calls; returns their ids. */
function toolCallIds(calls: unknown, at: string): Set<string> {
  return new Set(
    list(calls, `${at}.tool_calls`).map((call, j) => {
      const where = `${at}.tool_calls[${j}]`;
      shape(call, where, ['id', 'type', 'function']);
      oneOf(required(call, 'type', where), `${where}.type`, ['function']);
      const fn = shape(required(call, 'function', where), `${where}.function`, ['name', 'arguments']);
      for (const key of ['name', 'arguments']) required(fn, key, `${where}.function`, 'string');
      return required(call, 'id', where, 'string') as string;
    }),
  );
}

function validateMessages(messages: unknown): void {
  let pending: { at: number; ids: Set<string> } | undefined;
  const unanswered = () => refuse(`${UNANSWERED}${[...pending!.ids].join(', ')}`, `messages.[${pending!.at}].role`);
  list(messages, 'messages').forEach((message, i) => {
    const at = `messages[${i}]`;
    expectType(message, at, 'object');
    const role = required(message, 'role', at);
    oneOf(role, `${at}.role`, Object.keys(ROLES));
    expectKeys(message, at, ROLES[role]!.fields);
    validateContent(message, at);
    if (role === 'tool') {
      if (!pending) refuse("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      const id = required(message, 'tool_call_id', at, 'string');
      if (!pending!.ids.delete(id)) refuse(`Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`, `messages.[${i}].tool_call_id`);
      return;
    }
    if (pending?.ids.size) unanswered();
    pending = role === 'assistant' && message.tool_calls != null ? { at: i, ids: toolCallIds(message.tool_calls, at) } : undefined;
  });
  if (pending?.ids.size) unanswered();
}

/** Validates the tool definitions, and a tool choice or `parallel_tool_calls` only along with them. */
function validateTools(body: Json): void {
  const names: string[] = (body.tools == null ? [] : list(body.tools, 'tools')).map((tool, i) => {
    const at = `tools[${i}]`;
    shape(tool, at, ['type', 'function']);
    oneOf(required(tool, 'type', at), `${at}.type`, ['function']);
    const fn = shape(required(tool, 'function', at), `${at}.function`, ['name', 'description', 'parameters', 'strict']);
    const name = required(fn, 'name', `${at}.function`, 'string');
    const pattern = `Invalid '${at}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) refuse(pattern, `${at}.function.name`, 'invalid_value');
    optional(fn, `${at}.function`, { description: 'string', parameters: 'object', strict: 'boolean' });
    return name;
  });
  for (const param of ['tool_choice', 'parallel_tool_calls']) {
    if (body[param] != null && !names.length) refuse(`Invalid value for '${param}': '${param}' is only allowed when 'tools' are specified.`, param);
  }
  const choice = body.tool_choice;
  if (choice == null) return;
  expectType(choice, 'tool_choice', 'string', 'object');
  if (typeof choice === 'string') return oneOf(choice, 'tool_choice', ['none', 'auto', 'required']);
  shape(choice, 'tool_choice', ['type', 'function']);
  oneOf(required(choice, 'type', 'tool_choice'), 'tool_choice.type', ['function']);
  const fn = shape(required(choice, 'function', 'tool_choice'), 'tool_choice.function', ['name']);
  const name = required(fn, 'name', 'tool_choice.function', 'string');
  if (!names.includes(name)) refuse(`Invalid value for 'tool_choice': function '${name}' is not among the provided 'tools'.`, 'tool_choice');
}

function validateFormat(body: Json): void {
  const format = body.response_format;
  if (format == null) return;
  expectType(format, 'response_format', 'object');
  const type = required(format, 'type', 'response_format');
  oneOf(type, 'response_format.type', ['text', 'json_object', 'json_schema']);
  expectKeys(format, 'response_format', type === 'json_schema' ? ['type', 'json_schema'] : ['type']);
  const saysJson = body.messages.some((message: Json) => /json/i.test(textOf(message.content)));
  if (type === 'json_object' && !saysJson) refuse("'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.", 'messages');
  if (type !== 'json_schema') return;
  const schema = shape(required(format, 'json_schema', 'response_format'), 'response_format.json_schema', ['name', 'description', 'schema', 'strict']);
  required(schema, 'name', 'response_format.json_schema', 'string');
  optional(schema, 'response_format.json_schema', { description: 'string', schema: 'object', strict: 'boolean' });
}

/** Throws the {@link Refusal} OpenAI would answer a request body with, if any. */
function validate(body: Json, models: readonly string[]): void {
  if (kindOf(body) !== 'object') return refuse(`Invalid type for request body: expected an object, but got ${article(kindOf(body))} instead.`);
  const unknown = Object.keys(body).filter((key) => !PARAMETERS.has(key));
  if (unknown.length) refuse(`Unrecognized request argument${unknown.length > 1 ? 's' : ''} supplied: ${unknown.join(', ')}`);
  if (body.model == null) refuse('you must provide a model parameter');
  expectType(body.model, 'model', 'string');
  const unavailable = `The model \`${body.model}\` does not exist or you do not have access to it.`;
  if (!models.includes(body.model)) throw new Refusal(404, unavailable, null, 'model_not_found');
  validateMessages(required(body, 'messages', ''));
  for (const [param, [kind, min = -Infinity, max = Infinity]] of Object.entries(SCALARS)) {
    const value = body[param];
    if (value == null) continue;
    expectType(value, param, ...kind.split('|'));
    if (typeof value !== 'number') continue;
    if (value < min) refuse(`Invalid '${param}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`, param, `${kind}_below_min_value`);
    if (value > max) refuse(`Invalid '${param}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`, param, `${kind}_above_max_value`);
  }
  for (const [param, values] of Object.entries(ENUMS)) if (body[param] != null) oneOf(body[param], param, values);
  if (body.stream_options != null) {
    if (body.stream !== true) refuse("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
    shape(body.stream_options, 'stream_options', ['include_usage', 'include_obfuscation']);
    optional(body.stream_options, 'stream_options', { include_usage: 'boolean', include_obfuscation: 'boolean' });
  }
  validateTools(body);
  validateFormat(body);
}

/** What the model answers to each of the `n` choices, by the reply scripted for the request. */
function answersTo(body: Json, reply: Extract<OpenAIReply, { kind: 'text' | 'tools' }>): Answer[] {
  const lastUser = [...body.messages].reverse().find((message: Json) => message.role === 'user');
  return Array.from({ length: body.n ?? 1 }, () => {
    if (reply.kind === 'text') return { text: reply.text ?? `echo: ${textOf(lastUser?.content)}`, calls: [], finish: reply.finishReason ?? 'stop' };
    const calls = reply.calls.map((call) => ({ id: `call_${token(24)}`, name: call.name, arguments: JSON.stringify(call.input) }));
    return { text: reply.text ?? null, calls, finish: 'tool_calls' };
  });
}

function usageOf(body: Json, answers: Answer[], usage: StandInUsage = {}): Json {
  const cached = usage.cacheRead ?? 0;
  const prompt = (usage.input ?? Math.max(1, words(body.messages.map((message: Json) => textOf(message.content)).join(' ')))) + cached;
  const answered = answers.map((answer) => words([answer.text ?? '', ...answer.calls.map((call) => call.arguments)].join(' ')));
  const completion = usage.output ?? answered.reduce((sum, count) => sum + count, 0);
  const details = { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 };
  const totals = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  return { ...totals, prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 }, completion_tokens_details: details };
}

/** An answer's stream deltas, as OpenAI cuts them: role first, text in word pieces, then each call's head and argument pieces. */
function deltasOf(answer: Answer): Json[] {
  const head: Json = { role: 'assistant', content: answer.text === null ? null : '', refusal: null };
  const deltas: Json[] = [head, ...(answer.text?.match(/\s*\S+|\s+$/g) ?? []).map((content) => ({ content }))];
  answer.calls.forEach((call, index) => {
    const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
    if (index === 0 && answer.text === null) head.tool_calls = [opening];
    else deltas.push({ tool_calls: [opening] });
    const size = Math.max(1, Math.min(8, Math.ceil(call.arguments.length / 2)));
    for (let at = 0; at < call.arguments.length; at += size) deltas.push({ tool_calls: [{ index, function: { arguments: call.arguments.slice(at, at + size) } }] });
  });
  return deltas;
}

/** The refusal OpenAI answers a request with, if any: path, key, then body, in that order. */
function refusalOf(request: IncomingMessage, body: { value: unknown } | undefined, options: StandInOptions): Refusal | undefined {
  try {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'POST' || path !== '/v1/chat/completions') return new Refusal(404, `Invalid URL (${request.method} ${path})`);
    const authorization = request.headers.authorization;
    if (authorization !== `Bearer ${options.apiKey}`) {
      const key = authorization?.replace(/^Bearer\s*/i, '') ?? '';
      const shown = `${key.slice(0, 3)}${'*'.repeat(Math.max(0, key.length - 7))}${key.slice(-4)}`;
      const message = key ? `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.` : NO_KEY;
      return new Refusal(401, message, null, 'invalid_api_key');
    }
    if (!body) return new Refusal(400, NOT_JSON);
    validate(body.value as Json, options.models);
  } catch (error) {
    if (error instanceof Refusal) return error;
    throw error;
  }
}

/** Writes the answers as OpenAI streams them: each choice's deltas and finish, the usage chunk if asked, `[DONE]`. */
function stream(response: ServerResponse, body: Json, meta: Json, answers: Answer[], usage: Json, failure?: { afterDeltas: number; error: Json }): void {
  const includeUsage = body.stream_options?.include_usage === true;
  const obfuscate = body.stream_options?.include_obfuscation !== false;
  const event = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
  const chunk = (choices: Json[], extra: Json = {}) =>
    event({ ...meta, choices, ...(includeUsage ? { usage: null } : {}), ...extra, ...(obfuscate ? { obfuscation: token(1 + (randomBytes(1)[0]! % 12)) } : {}) });
  const delta = (index: number, content: Json, finish: string | null = null) => chunk([{ index, delta: content, logprobs: null, finish_reason: finish }]);
  if (failure) {
    const [head, ...pieces] = deltasOf(answers[0]!);
    for (let i = 0; i < failure.afterDeltas; i++) delta(0, i === 0 ? head! : (pieces[(i - 1) % Math.max(1, pieces.length)] ?? { content: ' ' }));
    return void response.end(`data: ${JSON.stringify({ error: failure.error })}\n\n`);
  }
  answers.forEach((answer, index) => {
    for (const content of deltasOf(answer)) delta(index, content);
    delta(index, {}, answer.finish);
  });
  if (includeUsage) chunk([], { usage });
  response.end('data: [DONE]\n\n');
}

/** Starts a stand-in for `POST /v1/chat/completions` on a loopback port, refusing what OpenAI refuses. */
export async function startOpenAIStandIn(options: { apiKey: string; models: readonly string[] }): Promise<OpenAIStandIn> {
  const queue: OpenAIReply[] = [];
  const received: ReceivedOpenAIRequest[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const json = parseJson(raw);
    received.push({ headers: request.headers, body: json ? json.value : raw });
    const headers = { 'x-request-id': `req_${randomBytes(16).toString('hex')}`, 'openai-version': '2020-10-01', 'openai-processing-ms': '42' };
    const fail = (status: number, error: Json, extra: Record<string, string> = {}) =>
      void response.writeHead(status, { 'content-type': 'application/json', ...headers, ...extra }).end(JSON.stringify({ error }));
    const refusal = refusalOf(request, json, options);
    if (refusal) return fail(refusal.status, { message: refusal.message, type: 'invalid_request_error', param: refusal.param, code: refusal.code });
    const body = json!.value as Json;

    const reply = queue.shift() ?? { kind: 'text' };
    if (reply.kind === 'status') {
      const code = reply.errorType === 'insufficient_quota' ? 'insufficient_quota' : reply.status === 429 ? 'rate_limit_exceeded' : null;
      return fail(reply.status, { message: reply.message, type: reply.errorType, param: null, code }, reply.headers);
    }
    const failure = reply.kind === 'stream-error' ? { afterDeltas: reply.afterDeltas, error: { message: reply.message, type: reply.errorType, param: null, code: null } } : undefined;
    if (failure && body.stream !== true) return fail(500, failure.error);
    const answers = answersTo(body, reply.kind === 'stream-error' ? { kind: 'text' } : reply);
    const usage = usageOf(body, answers, reply.kind === 'stream-error' ? undefined : reply.usage);
    const [id, created, model] = [`chatcmpl-${token(29)}`, Math.floor(Date.now() / 1000), body.model];
    const tier = { service_tier: body.service_tier === 'flex' || body.service_tier === 'priority' ? body.service_tier : 'default', system_fingerprint: FINGERPRINT };
    if (body.stream === true) {
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
      return stream(response, body, { id, object: 'chat.completion.chunk', created, model, ...tier }, answers, usage, failure);
    }
    const choices = answers.map((answer, index) => {
      const calls = answer.calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
      const message = { role: 'assistant', content: answer.text, refusal: null, annotations: [], ...(calls.length ? { tool_calls: calls } : {}) };
      return { index, message, logprobs: null, finish_reason: answer.finish };
    });
    response.writeHead(200, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify({ id, object: 'chat.completion', created, model, choices, usage, ...tier }));
  }

  const server = createServer((request, response) => void handle(request, response).catch((error: Error) => response.destroy(error)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    received,
    script: (...replies) => void queue.push(...replies),
    reset() {
      queue.length = received.length = 0;
    },
    stop: () => new Promise<void>((resolve, reject) => void server.close((error) => (error ? reject(error) : resolve())).closeAllConnections()),
  };
}
