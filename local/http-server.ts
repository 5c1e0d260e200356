import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { gunzipSync, inflateSync } from 'node:zlib';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { ANY_ORIGIN, preflightHeaders } from '../lambdas/http/cors';
import { isStreamingHandler, type StreamingHandler } from '../lambdas/http/streaming';
import { PAGES_BASE_PATH, matchRoute, servedMethods, type FunctionId, type RouteMatch } from '../lambdas/routes';
import { requestScope } from './aws-calls';
import { errorBody, ownAnswerCors, requestUrl, send, type Answer } from './http-answers';
import { MAX_BODY_BYTES, MAX_HEADER_BYTES, answerHeadersTooLarge, bodyTooLarge, clientErrorAnswerer, headBytes, type SocketRequest } from './http-errors';
import { serveStreaming } from './http-streaming';
import { lambdaContext, proxyEvent, type LocalContext } from './proxy-event';
import { INFERENCE_TIMEOUT_SECONDS } from '../lambdas/spending/ledgers';

export { MAX_HEADER_BYTES } from './http-errors';
export { proxyEventIdentity } from './proxy-event';

/** A buffered function handler, as Lambda calls it behind an API Gateway proxy integration. */
export type LambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** What serves a function id: a buffered handler, or a streaming one (`awslambda.streamifyResponse`). */
export type FunctionHandler = LambdaHandler | StreamingHandler;

/** One finished request and its answer, for an observer of the local server (the test suites' conformance check). */
export interface ObservedExchange {
  readonly method: string;
  /** The route's resource template, e.g. `/api/v1/keys/{hash}`. */
  readonly resource: string;
  /** The query string, `?` included, or empty. */
  readonly search: string;
  readonly requestContentType: string | undefined;
  readonly requestBody: string;
  readonly status: number;
  readonly contentType: string | undefined;
  /** The whole answer body, streamed ones included. */
  readonly body: string;
}

/** Told of each finished request, once its answer is sent. */
export type ExchangeObserver = (exchange: ObservedExchange) => void;

/** How much of a body past the cap is read and dropped before the 413 (see readBody). */
const MAX_DISCARDED_BYTES = 100 * 1024 * 1024;

/**
 * An HTTP server that plays API Gateway's part: it matches the route table, builds a REST
 * API proxy event (socket address as `sourceIp`, Host passed through) and calls the
 * function's handler export.
 */
export interface LocalApiServer extends Server {
  /**
   * Settles once every handler invocation under way has returned. A handler may go on after
   * its answer is sent (usage is recorded then), so the database must outlive it.
   */
  idle(): Promise<void>;
  /**
   * Stops the server the way a deployment drains: no new connection is accepted and idle ones
   * close at once; the requests under way get up to `drainMs` to finish and send their answers
   * (a completion that was charged reaches its client); then whatever is left is cut, and the
   * handlers get `drainMs` more to return. Settles when the server is closed.
   */
  shutdown(drainMs?: number): Promise<void>;
}

/** How long Ctrl-C lets the requests under way finish before their connections are cut. */
export const DEFAULT_DRAIN_MS = 10_000;
/** What handlers cut off at the end of a drain get to record their answers. */
const SETTLE_MS = 2_000;

/**
 * How long a client may take to send a request: its request line and headers, and the whole
 * request with its body. Past either the server answers 408 and closes the connection, on every
 * route (Node checks every `checkIntervalMs`), so a body that stops arriving holds nothing. A
 * slow handler is another matter: these bound the request, not the answer.
 */
export interface RequestTimeouts {
  /** @default 10_000 */
  headersMs: number;
  /** @default 30_000 */
  requestMs: number;
  /** @default 1_000 */
  checkIntervalMs: number;
}

/** How long an idle connection stays open, as load balancers commonly keep them. */
const KEEP_ALIVE_MS = 65_000;

/** 10 s for the request head, 30 s for the whole request, checked every second. */
export const DEFAULT_REQUEST_TIMEOUTS: RequestTimeouts = Object.freeze({ headersMs: 10_000, requestMs: 30_000, checkIntervalMs: 1_000 });

/** The stage, request timeouts, observers and CORS origins of {@link createLocalApiServer}. */
export interface LocalApiServerOptions {
  /** @default 'local' */
  stage?: string;
  /** @default DEFAULT_REQUEST_TIMEOUTS */
  timeouts?: RequestTimeouts;
  observe?: ExchangeObserver;
  /**
   * Runs each invocation in {@link requestScope}, so the functions' AWS calls name the request
   * they served (local/aws-calls.ts). Only for an observer of those calls: the scope's async
   * context tracking slows every promise of the process. @default false
   */
  scopeRequests?: boolean;
  /**
   * The origins whose pages may call the API, as the functions are told them: the server's own
   * answers (preflights, unknown paths) name them as API Gateway's do. @default ['*']
   */
  corsAllowedOrigins?: readonly string[];
}

/** The {@link LocalApiServer} over the functions' handlers; they may be a promise, built once the port is bound. */
export function createLocalApiServer(
  handlers: Readonly<Record<FunctionId, FunctionHandler>> | Promise<Readonly<Record<FunctionId, FunctionHandler>>>,
  { stage = 'local', observe, scopeRequests = false, timeouts = DEFAULT_REQUEST_TIMEOUTS, corsAllowedOrigins = [ANY_ORIGIN] }: LocalApiServerOptions = {},
): LocalApiServer {
  const pending = new Set<Promise<void>>();
  // The invocations under way, whose deadline a stop brings forward.
  const contexts = new Set<LocalContext>();
  const serverOptions = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: timeouts.checkIntervalMs,
  };
  // The request each connection has under way, for the answer to an error Node reports on its socket.
  const underWay = new WeakMap<Duplex, SocketRequest>();
  const server = createServer(serverOptions, (request, response) => {
    const under: SocketRequest = { path: requestUrl(request.url).pathname, origin: request.headers.origin };
    const cors = ownAnswerCors(under.path, under.origin, corsAllowedOrigins);
    if (headBytes(request) > MAX_HEADER_BYTES) return answerHeadersTooLarge(request, response, cors);
    underWay.set(request.socket, under);
    response.once('close', () => {
      if (underWay.get(request.socket) === under) underWay.delete(request.socket);
    });
    // Handlers built once the port is bound (the API base URL is their issuer): a request that
    // comes first waits for them.
    const invocation = Promise.resolve(handlers)
      .then((ready) => serve(request, response, ready, { stage, observe, scopeRequests, corsAllowedOrigins, contexts }))
      .catch((error: Error) => {
        console.error(JSON.stringify({ level: 'error', message: 'local server error', error: error.message }));
        if (!response.headersSent) send(response, { statusCode: 500, headers: cors, body: errorBody(500, 'Internal Server Error') });
        else response.end();
      })
      .finally(() => pending.delete(invocation));
    pending.add(invocation);
  }) as LocalApiServer;
  // Longer than any client's idle pool: a client whose event loop was busy past Node's 5 s default
  // would otherwise send on a connection the server had just closed ("other side closed").
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.idle = async () => {
    await Promise.allSettled([...pending]);
  };
  server.shutdown = async (drainMs = DEFAULT_DRAIN_MS) => {
    // One bound in all: the requests under way get the drain less a last moment, then their
    // clients are cut off and that moment lets the handlers record what they had answered.
    const settleMs = Math.min(SETTLE_MS, drainMs / 4);
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await settledWithin(server.idle(), drainMs - settleMs);
    server.closeAllConnections();
    // What is still under way has the last moment left, as a function has at its timeout.
    for (const context of contexts) context.endBy(Date.now() + settleMs);
    await closed;
    await settledWithin(server.idle(), settleMs);
  };
  server.on('clientError', clientErrorAnswerer(corsAllowedOrigins, underWay));
  return server;
}

/** Waits for `work`, or `ms` at most (a timer that keeps nothing alive). */
async function settledWithin(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
  try {
    await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What API Gateway answers itself, before any function: an unknown path, a method the resource
 * does not serve, a preflight of an API resource (as the stack's mock integrations do), each
 * naming the allowed origin on API paths (the settings page is same-origin only). Undefined
 * when a function serves the request.
 */
function gatewayAnswer(
  method: string,
  path: string,
  origin: string | undefined,
  allowedOrigins: readonly string[],
): { match: RouteMatch } | { answer: Answer } {
  const cors = ownAnswerCors(path, origin, allowedOrigins);
  const match = matchRoute(method, path);
  if (!match) return { answer: { statusCode: 404, headers: cors, body: errorBody(404, 'Resource not found') } };
  if ('route' in match) return { match };
  const methods = servedMethods(match.allowed);
  if (method === 'OPTIONS' && !path.startsWith(`${PAGES_BASE_PATH}/`)) {
    return { answer: { statusCode: 204, headers: preflightHeaders(allowedOrigins, origin, methods), body: '' } };
  }
  return { answer: { statusCode: 405, headers: { ...cors, Allow: methods.join(', ') }, body: errorBody(405, 'Method not allowed') } };
}

interface ServeOptions {
  stage: string;
  observe: ExchangeObserver | undefined;
  scopeRequests: boolean;
  corsAllowedOrigins: readonly string[];
  contexts: Set<LocalContext>;
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  handlers: Readonly<Record<FunctionId, FunctionHandler>>,
  { stage, observe, scopeRequests, corsAllowedOrigins, contexts }: ServeOptions,
): Promise<void> {
  const url = requestUrl(request.url);
  const method = request.method ?? 'GET';
  const gateway = gatewayAnswer(method, url.pathname, request.headers.origin, corsAllowedOrigins);
  if ('answer' in gateway) return send(response, gateway.answer);
  const { match } = gateway;

  const body = await readBody(request);
  // The client is gone (a timed-out body was answered 408 by Node, or it hung up): nobody to answer.
  if (body === null) return;
  if (body === undefined) {
    const refusal = bodyTooLarge(match.route);
    return send(response, { ...refusal, headers: { ...refusal.headers, ...ownAnswerCors(url.pathname, request.headers.origin, corsAllowedOrigins) } }, { close: true });
  }
  if (observe) recordAnswer(response, (status, answer, contentType) =>
    observe({
      method,
      resource: match.resource,
      search: url.search,
      requestContentType: request.headers['content-type'],
      requestBody: body.toString('utf8'),
      status,
      contentType,
      body: answer,
    }),
  );

  const requestId = randomUUID();
  const event = proxyEvent(request, { url, method, match, body, stage, requestId });
  const handler = handlers[match.route.function];
  // The streaming function is the inference function, whose timeout is longer than the others'.
  const context = lambdaContext(match.route.function, requestId, isStreamingHandler(handler) ? INFERENCE_TIMEOUT_SECONDS * 1000 : undefined);
  contexts.add(context);
  const invoke = async () => {
    try {
      if (isStreamingHandler(handler)) return await serveStreaming(handler, event, context, response, ownAnswerCors(url.pathname, request.headers.origin, corsAllowedOrigins));
      const result = await (handler as LambdaHandler)(event, context);
      send(response, result);
    } finally {
      contexts.delete(context);
    }
  };
  // The functions' AWS calls are attributed to the request they serve (local/aws-calls.ts).
  await (scopeRequests ? requestScope.run(requestId, invoke) : invoke());
}

/**
 * Copies what is written to `response` and hands it over once the answer is complete, decoded
 * when it went compressed.
 */
function recordAnswer(response: ServerResponse, done: (status: number, body: string, contentType: string | undefined) => void): void {
  const written: Buffer[] = [];
  // Headers given to writeHead go straight to the wire, so getHeader cannot tell them afterwards.
  let given: Record<string, unknown> = {};
  const header = (name: string) => {
    const value = Object.entries(given).find(([key]) => key.toLowerCase() === name)?.[1] ?? response.getHeader(name);
    return value === undefined ? undefined : String(value);
  };
  const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
  response.writeHead = ((...args: unknown[]) => {
    given = (args.find((arg) => arg !== null && typeof arg === 'object') as Record<string, unknown> | undefined) ?? {};
    return writeHead(...args);
  }) as typeof response.writeHead;
  const copy = (chunk: unknown) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') written.push(Buffer.from(chunk as string | Uint8Array));
  };
  const write = response.write.bind(response) as (...args: unknown[]) => boolean;
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  response.write = ((...args: unknown[]) => (copy(args[0]), write(...args))) as typeof response.write;
  response.end = ((...args: unknown[]) => (copy(args[0]), end(...args))) as typeof response.end;
  response.once('finish', () => {
    const sent = Buffer.concat(written);
    const coding = header('content-encoding');
    const body = coding === 'gzip' ? gunzipSync(sent) : coding === 'deflate' ? inflateSync(sent) : sent;
    done(response.statusCode, body.toString('utf8'), header('content-type'));
  });
}

/**
 * The request body, or undefined past {@link MAX_BODY_BYTES}, or null when the request ends
 * before its body does (the client hung up, or took longer than the request timeout and was
 * answered 408). Past the cap the rest is read and dropped before the answer, up to
 * {@link MAX_DISCARDED_BYTES} more: an answer sent, and the connection closed, while the client
 * is still sending reaches it as a broken pipe (EPIPE) instead of the 413. Beyond that bound (or
 * a Content-Length beyond it) the answer goes at once, and what the client still sends is its
 * own problem.
 */
function readBody(request: IncomingMessage): Promise<Buffer | undefined | null> {
  const bound = MAX_BODY_BYTES + MAX_DISCARDED_BYTES;
  if (Number(request.headers['content-length'] ?? 0) > bound) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > bound) {
        request.off('data', onData);
        request.pause();
        resolve(undefined);
      }
    };
    request.on('data', onData);
    request.once('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    request.once('error', () => resolve(null));
    request.once('close', () => {
      if (!request.complete) resolve(null);
    });
  });
}
