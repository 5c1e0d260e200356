import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AnthropicRefusal, checkMessagesRequest, type CheckedBlock, type CheckedRequest } from './anthropic-request-checks';

/** Token counts a scripted reply reports in place of the counted ones. */
export interface StandInUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/**
 * One scripted answer to the next request. Unscripted requests get { kind: 'text' }.
 * A refused request takes none. `text` without `text` echoes the last user turn (`echo: ...`);
 * `stream-error` streams that echo and sends an `error` event in place of delta `afterDeltas + 1`
 * (a request without `stream` gets the error with its status instead, 500 for an unknown type).
 */
export type AnthropicReply =
  | { kind: 'text'; text?: string; stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'refusal'; usage?: StandInUsage }
  | { kind: 'tools'; calls: { name: string; input: Record<string, unknown> }[]; text?: string; thinking?: string; usage?: StandInUsage }
  | { kind: 'thinking'; thinking: string; text: string; redacted?: string; usage?: StandInUsage }
  | { kind: 'status'; status: number; errorType: string; message: string; headers?: Record<string, string> }
  | { kind: 'stream-error'; afterDeltas: number; errorType: string; message: string };

/** A request as the stand-in received it: its headers and its parsed JSON body (the raw text when it is not JSON). */
export interface ReceivedAnthropicRequest {
  headers: IncomingHttpHeaders;
  body: any;
}

/** A running stand-in for Anthropic's Messages API on a loopback port. */
export interface AnthropicStandIn {
  /** `http://127.0.0.1:<port>/v1`: what the gateway's configuration takes as baseUrl (it posts to `<baseUrl>/messages`). */
  baseUrl: string;
  /** `http://127.0.0.1:<port>`: the SDK's baseURL (it appends /v1/messages). */
  sdkBaseUrl: string;
  /** Every request received, in order, refused ones included. */
  received: ReceivedAnthropicRequest[];
  /** Queues answers for the next requests that pass the checks, in order. */
  script(...replies: AnthropicReply[]): void;
  /** Clears the queued answers and the received requests. */
  reset(): void;
  /** Closes the server and its open connections. */
  stop(): Promise<void>;
}

type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

interface Answer {
  content: ContentBlock[];
  stopReason: string;
  stopSequence: string | null;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

type StreamEvent = { type: string } & Record<string, unknown>;

const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** An id shaped like the API's (`msg_01` and 22 base62 characters, for `msg_`). */
const newId = (prefix: string): string => `${prefix}01${[...randomBytes(22)].map((byte) => BASE62[byte % 62]).join('')}`;
const words = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** Every text of a request (system, text blocks, string contents, tool results), in order. */
function requestTexts(request: CheckedRequest): string[] {
  const ofContent = (content: string | CheckedBlock[] | undefined): string[] =>
    content === undefined ? [] : typeof content === 'string' ? [content] : content.flatMap((block) => (block.type === 'text' ? [block.text ?? ''] : ofContent(block.content)));
  const system = request.system === undefined ? [] : typeof request.system === 'string' ? [request.system] : request.system.map((block) => block.text);
  return [...system, ...request.messages.flatMap((message) => ofContent(message.content))];
}

function lastUserText(request: CheckedRequest): string {
  const last = request.messages.findLast((message) => message.role === 'user');
  return last ? requestTexts({ ...request, system: undefined, messages: [last] }).join(' ') : '';
}

function answerTo(request: CheckedRequest, reply: Exclude<AnthropicReply, { kind: 'status' | 'stream-error' }>): Answer {
  const content: ContentBlock[] = [];
  let stopReason = 'end_turn';
  if (reply.kind === 'text') {
    content.push({ type: 'text', text: reply.text ?? `echo: ${lastUserText(request)}` });
    stopReason = reply.stopReason ?? 'end_turn';
  } else if (reply.kind === 'tools') {
    if (reply.thinking !== undefined) content.push({ type: 'thinking', thinking: reply.thinking, signature: randomBytes(96).toString('base64') });
    if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
    for (const call of reply.calls) content.push({ type: 'tool_use', id: newId('toolu_'), name: call.name, input: call.input });
    stopReason = 'tool_use';
  } else {
    content.push({ type: 'thinking', thinking: reply.thinking, signature: randomBytes(96).toString('base64') });
    if (reply.redacted !== undefined) content.push({ type: 'redacted_thinking', data: reply.redacted });
    content.push({ type: 'text', text: reply.text });
  }
  const answered = content.map((block) => (block.type === 'text' ? block.text : block.type === 'thinking' ? block.thinking : block.type === 'redacted_thinking' ? '' : JSON.stringify(block.input))).join(' ');
  const counted = { input: Math.max(1, words(requestTexts(request).join(' '))), output: Math.max(1, words(answered)), cacheRead: 0, cacheWrite: 0 };
  const stopSequence = stopReason === 'stop_sequence' ? (request.stop_sequences?.[0] ?? null) : null;
  return { content, stopReason, stopSequence, usage: { ...counted, ...definedMembers(reply.usage) } };
}

function definedMembers(usage: StandInUsage | undefined): StandInUsage {
  return Object.fromEntries(Object.entries(usage ?? {}).filter(([, value]) => value !== undefined));
}

function usageOf(answer: Answer, outputTokens: number) {
  return {
    input_tokens: answer.usage.input,
    cache_creation_input_tokens: answer.usage.cacheWrite,
    cache_read_input_tokens: answer.usage.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: answer.usage.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}

function messageOf(id: string, model: string, answer: Answer) {
  return {
    model,
    id,
    type: 'message',
    role: 'assistant',
    content: answer.content,
    stop_reason: answer.stopReason,
    stop_sequence: answer.stopSequence,
    usage: usageOf(answer, answer.usage.output),
  };
}

/** `text` cut into `count` pieces or fewer (whole characters, none empty unless `text` is). */
function pieces(text: string, count: number): string[] {
  const characters = Array.from(text);
  const size = Math.max(1, Math.ceil(characters.length / count));
  const cut: string[] = [];
  for (let i = 0; i < characters.length; i += size) cut.push(characters.slice(i, i + size).join(''));
  return cut.length > 0 ? cut : [''];
}

/** The events of a streamed answer, in the order the API sends them (a `ping` after the first block starts); text in `textPieces` deltas. */
function streamEvents(id: string, model: string, answer: Answer, textPieces = 3): StreamEvent[] {
  const events: StreamEvent[] = [{ type: 'message_start', message: { ...messageOf(id, model, answer), content: [], stop_reason: null, stop_sequence: null, usage: usageOf(answer, 1) } }];
  answer.content.forEach((block, index) => {
    // Redacted thinking comes whole in its start event, with no delta.
    const start = block.type === 'text' ? { type: 'text', text: '' } : block.type === 'tool_use' ? { ...block, input: {} } : block.type === 'redacted_thinking' ? block : { type: 'thinking', thinking: '', signature: '' };
    events.push({ type: 'content_block_start', index, content_block: start });
    if (index === 0) events.push({ type: 'ping' });
    const delta = (payload: Record<string, unknown>): StreamEvent => ({ type: 'content_block_delta', index, delta: payload });
    if (block.type === 'text') {
      events.push(...pieces(block.text, textPieces).map((text) => delta({ type: 'text_delta', text })));
    } else if (block.type === 'tool_use') {
      events.push(delta({ type: 'input_json_delta', partial_json: '' }));
      events.push(...pieces(JSON.stringify(block.input), 3).map((json) => delta({ type: 'input_json_delta', partial_json: json })));
    } else if (block.type === 'thinking') {
      events.push(...pieces(block.thinking, 3).map((thinking) => delta({ type: 'thinking_delta', thinking })));
      events.push(delta({ type: 'signature_delta', signature: block.signature }));
    }
    events.push({ type: 'content_block_stop', index });
  });
  const { input, cacheWrite, cacheRead, output } = answer.usage;
  const finalUsage = { input_tokens: input, cache_creation_input_tokens: cacheWrite, cache_read_input_tokens: cacheRead, output_tokens: output };
  events.push({ type: 'message_delta', delta: { stop_reason: answer.stopReason, stop_sequence: answer.stopSequence }, usage: finalUsage });
  events.push({ type: 'message_stop' });
  return events;
}

const errorBody = (errorType: string, message: string, requestId: string) => ({ type: 'error', error: { type: errorType, message }, request_id: requestId });

function sendError(response: ServerResponse, requestId: string, status: number, errorType: string, message: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { ...headers, 'content-type': 'application/json', 'request-id': requestId });
  response.end(JSON.stringify(errorBody(errorType, message, requestId)));
}

const sseFrame = (event: StreamEvent): string => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

/**
 * Writes the events one by one, each its own chunk. With `failure`, an `error` event takes the
 * place of the delta after `afterDeltas` of them (or of `message_delta`, when there are fewer) and ends the stream.
 */
async function sendStream(response: ServerResponse, requestId: string, events: StreamEvent[], failure?: { afterDeltas: number; errorType: string; message: string }): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId });
  let deltas = 0;
  for (const event of events) {
    if (response.destroyed) return;
    if (failure && ((event.type === 'content_block_delta' && deltas === failure.afterDeltas) || event.type === 'message_delta')) {
      response.end(sseFrame({ type: 'error', error: { type: failure.errorType, message: failure.message } }));
      return;
    }
    if (event.type === 'content_block_delta') deltas++;
    response.write(sseFrame(event));
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

function credentialOf(headers: IncomingHttpHeaders): { given: string[]; missing: boolean } {
  const given: string[] = [];
  if (typeof headers['x-api-key'] === 'string') given.push(headers['x-api-key']);
  const bearer = /^Bearer (.+)$/i.exec(headers.authorization ?? '');
  if (bearer) given.push(bearer[1]!);
  return { given, missing: given.length === 0 };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Starts a stand-in for Anthropic's Messages API (`POST /v1/messages`) on 127.0.0.1: it checks
 * the key (`x-api-key` or `Authorization: Bearer`), `anthropic-version` and the body as the API
 * does, refusing in the API's error shape, and answers JSON or a server-sent event stream from
 * the scripted replies (an echo of the last user text when none is queued).
 */
export async function startAnthropicStandIn(options: { apiKey: string; models: readonly string[] }): Promise<AnthropicStandIn> {
  const queue: AnthropicReply[] = [];
  const received: ReceivedAnthropicRequest[] = [];

  /** Answers one request; a refusal is thrown as an {@link AnthropicRefusal}. */
  async function serve(request: IncomingMessage, response: ServerResponse, requestId: string): Promise<void> {
    const raw = await readBody(request);
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // kept as text: refused below
    }
    received.push({ headers: request.headers, body });
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    if (request.method !== 'POST' || path !== '/v1/messages') throw new AnthropicRefusal(404, 'not_found_error', `${request.method} ${path}: Not Found`);
    const credential = credentialOf(request.headers);
    if (credential.missing) throw new AnthropicRefusal(401, 'authentication_error', 'x-api-key header is required');
    if (credential.given.some((key) => key !== options.apiKey)) throw new AnthropicRefusal(401, 'authentication_error', 'invalid x-api-key');
    const version = request.headers['anthropic-version'];
    if (version === undefined) throw new AnthropicRefusal(400, 'invalid_request_error', 'anthropic-version: header is required');
    if (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version)) throw new AnthropicRefusal(400, 'invalid_request_error', `anthropic-version: invalid version ${String(version)}`);
    if (typeof body === 'string') throw new AnthropicRefusal(400, 'invalid_request_error', 'body: Input should be a valid JSON object');
    const checked = checkMessagesRequest(body, options.models);
    const reply = queue.shift() ?? { kind: 'text' };
    const streamed = checked.stream === true;
    if (reply.kind === 'status') {
      sendError(response, requestId, reply.status, reply.errorType, reply.message, reply.headers);
    } else if (reply.kind === 'stream-error' && !streamed) {
      sendError(response, requestId, ERROR_STATUS[reply.errorType] ?? 500, reply.errorType, reply.message);
    } else if (reply.kind === 'stream-error') {
      const answer = answerTo(checked, { kind: 'text' });
      await sendStream(response, requestId, streamEvents(newId('msg_'), checked.model, answer, Math.max(3, reply.afterDeltas + 1)), reply);
    } else if (streamed) {
      await sendStream(response, requestId, streamEvents(newId('msg_'), checked.model, answerTo(checked, reply)));
    } else {
      response.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId });
      response.end(JSON.stringify(messageOf(newId('msg_'), checked.model, answerTo(checked, reply))));
    }
  }

  const server = createServer((request, response) => {
    const requestId = newId('req_');
    serve(request, response, requestId).catch((error: unknown) => {
      if (response.headersSent) response.destroy();
      else if (error instanceof AnthropicRefusal) sendError(response, requestId, error.status, error.errorType, error.message);
      else sendError(response, requestId, 500, 'api_error', error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    sdkBaseUrl: `http://127.0.0.1:${port}`,
    received,
    script: (...replies) => void queue.push(...replies),
    reset: () => {
      queue.length = 0;
      received.length = 0;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
