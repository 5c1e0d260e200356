import { randomUUID } from 'node:crypto';
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Writable, type Duplex } from 'node:stream';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { PayloadTooLargeError } from '../lambdas/errors';
import { toErrorBody } from '../lambdas/http/api-errors';
import { ANY_ORIGIN, corsHeaders, preflightHeaders } from '../lambdas/http/cors';
import { isStreamingHandler, type StreamingHandler } from '../lambdas/http/streaming';
import { toOAuthResponse } from '../lambdas/oauth/oauth-errors';
import { tokenRequestTooLarge } from '../lambdas/oauth/token-request';
import { API_BASE_PATH, PAGES_BASE_PATH, matchRoute, resourcePath, servedMethods, type FunctionId, type RouteDefinition } from '../lambdas/routes';
import type { RouteMatch } from '../lambdas/routes';
import { requestScope } from './aws-calls';

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

export type ExchangeObserver = (exchange: ObservedExchange) => void;

/** API Gateway's own payload cap. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** How much of a body past the cap is read and dropped before the 413 (see readBody). */
const MAX_DISCARDED_BYTES = 100 * 1024 * 1024;

/**
 * API Gateway's REST API limit on the request line and headers together (10,240 bytes).
 * Node enforces it while parsing, before any handler runs; see {@link answerClientError}.
 */
export const MAX_HEADER_BYTES = 10 * 1024;

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

export const DEFAULT_REQUEST_TIMEOUTS: RequestTimeouts = Object.freeze({ headersMs: 10_000, requestMs: 30_000, checkIntervalMs: 1_000 });

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

export function createLocalApiServer(
  handlers: Readonly<Record<FunctionId, FunctionHandler>> | Promise<Readonly<Record<FunctionId, FunctionHandler>>>,
  { stage = 'local', observe, scopeRequests = false, timeouts = DEFAULT_REQUEST_TIMEOUTS, corsAllowedOrigins = [ANY_ORIGIN] }: LocalApiServerOptions = {},
): LocalApiServer {
  const pending = new Set<Promise<void>>();
  const serverOptions = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    connectionsCheckingInterval: timeouts.checkIntervalMs,
  };
  const server = createServer(serverOptions, (request, response) => {
    // Handlers built once the port is bound (the API base URL is their issuer): a request that
    // comes first waits for them.
    const invocation = Promise.resolve(handlers)
      .then((ready) => serve(request, response, ready, { stage, observe, scopeRequests, corsAllowedOrigins }))
      .catch((error: Error) => {
        console.error(JSON.stringify({ level: 'error', message: 'local server error', error: error.message }));
        if (!response.headersSent) {
          const cors = gatewayCors(new URL(request.url ?? '/', 'http://local').pathname, request.headers.origin, corsAllowedOrigins);
          send(response, { statusCode: 500, headers: cors, body: errorBody(500, 'Internal Server Error') });
        }
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
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await settledWithin(server.idle(), drainMs);
    server.closeAllConnections();
    await closed;
    await settledWithin(server.idle(), drainMs);
  };
  server.on('clientError', answerClientError);
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
 * Requests Node refuses while parsing (oversized headers, a malformed request line) get
 * the SPEC 7.1 error body like every other error, where Node would answer a bare status.
 */
function answerClientError(error: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `Request headers are larger than ${MAX_HEADER_BYTES} bytes`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timed out']
        : [400, 'Malformed HTTP request'];
  const body = errorBody(status, message);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
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
): { match: RouteMatch } | { answer: Parameters<typeof send>[1] } {
  const cors = gatewayCors(path, origin, allowedOrigins);
  const match = matchRoute(method, path);
  if (!match) return { answer: { statusCode: 404, headers: cors, body: errorBody(404, 'Resource not found') } };
  if ('route' in match) return { match };
  const methods = servedMethods(match.allowed);
  if (method === 'OPTIONS' && !path.startsWith(`${PAGES_BASE_PATH}/`)) {
    return { answer: { statusCode: 204, headers: preflightHeaders(allowedOrigins, origin, methods), body: '' } };
  }
  return { answer: { statusCode: 405, headers: { ...cors, Allow: methods.join(', ') }, body: errorBody(405, 'Method not allowed') } };
}

/** The CORS headers of the server's own answers: on API paths; the settings page is same-origin only. */
function gatewayCors(path: string, origin: string | undefined, allowedOrigins: readonly string[]): Record<string, string> {
  return path.startsWith(`${PAGES_BASE_PATH}/`) ? {} : corsHeaders(allowedOrigins, origin);
}

interface ServeOptions {
  stage: string;
  observe: ExchangeObserver | undefined;
  scopeRequests: boolean;
  corsAllowedOrigins: readonly string[];
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  handlers: Readonly<Record<FunctionId, FunctionHandler>>,
  { stage, observe, scopeRequests, corsAllowedOrigins }: ServeOptions,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://local');
  const method = request.method ?? 'GET';
  const gateway = gatewayAnswer(method, url.pathname, request.headers.origin, corsAllowedOrigins);
  if ('answer' in gateway) return send(response, gateway.answer);
  const { match } = gateway;

  const body = await readBody(request);
  // The client is gone (a timed-out body was answered 408 by Node, or it hung up): nobody to answer.
  if (body === null) return;
  if (body === undefined) {
    const refusal = bodyTooLarge(match.route);
    return send(response, { ...refusal, headers: { ...refusal.headers, ...corsHeaders(corsAllowedOrigins, request.headers.origin) } }, { close: true });
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
  const context = lambdaContext(match.route.function, requestId);
  const invoke = async () => {
    if (isStreamingHandler(handler)) return serveStreaming(handler, event, context, response);
    const result = await (handler as LambdaHandler)(event, context);
    send(response, result);
  };
  // The functions' AWS calls are attributed to the request they serve (local/aws-calls.ts).
  await (scopeRequests ? requestScope.run(requestId, invoke) : invoke());
}

/** What API Gateway knows of a routed request when it builds the proxy event. */
interface RoutedRequest {
  url: URL;
  method: string;
  match: RouteMatch;
  body: Buffer;
  stage: string;
  requestId: string;
}

/** The REST API proxy event API Gateway hands the function of a routed request. */
function proxyEvent(request: IncomingMessage, { url, method, match, body, stage, requestId }: RoutedRequest): APIGatewayProxyEvent {
  const { single: headers, multi: multiValueHeaders } = valueMaps(pairs(request.rawHeaders), (known, value) => `${known},${value}`);
  const { single: query, multi: multiQuery } = valueMaps(url.searchParams, (_known, value) => value);
  const hasQuery = Object.keys(query).length > 0;
  const pathParameters: Record<string, string> = Object.assign(Object.create(null), match.pathParameters);
  return {
    resource: match.resource,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    stageVariables: null,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: method,
      path: `/${stage}${url.pathname}`,
      stage,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: match.resource,
      identity: proxyEventIdentity(normalizeAddress(request.socket.remoteAddress), request.headers['user-agent']),
    },
  };
}

/** Node's raw headers, `[name, value, name, value, …]`, as pairs. */
function* pairs(raw: readonly string[]): Iterable<[string, string]> {
  for (let i = 0; i < raw.length; i += 2) yield [raw[i]!, raw[i + 1]!];
}

/**
 * A proxy event's single-value and multi-value maps of headers or query parameters: every
 * value in the multi-value map, and in the single one the values a name repeats `join`ed.
 * The maps are keyed by client-chosen names, so they have no prototype: a name like
 * `constructor` or `__proto__` is a plain entry, not an inherited member.
 */
function valueMaps(entries: Iterable<[string, string]>, join: (known: string, value: string) => string) {
  const single: Record<string, string> = Object.create(null);
  const multi: Record<string, string[]> = Object.create(null);
  for (const [name, value] of entries) {
    single[name] = single[name] === undefined ? value : join(single[name], value);
    (multi[name] ??= []).push(value);
  }
  return { single, multi };
}

/** Copies what is written to `response` and hands it over once the answer is complete. */
function recordAnswer(response: ServerResponse, done: (status: number, body: string, contentType: string | undefined) => void): void {
  const written: Buffer[] = [];
  // Headers given to writeHead go straight to the wire, so getHeader cannot tell them afterwards.
  let contentType: string | undefined;
  const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
  response.writeHead = ((...args: unknown[]) => {
    const headers = args.find((arg) => arg !== null && typeof arg === 'object') as Record<string, unknown> | undefined;
    const given = headers && Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    contentType = given === undefined ? undefined : String(given);
    return writeHead(...args);
  }) as typeof response.writeHead;
  const copy = (chunk: unknown) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') written.push(Buffer.from(chunk as string | Uint8Array));
  };
  const write = response.write.bind(response) as (...args: unknown[]) => boolean;
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  response.write = ((...args: unknown[]) => (copy(args[0]), write(...args))) as typeof response.write;
  response.end = ((...args: unknown[]) => (copy(args[0]), end(...args))) as typeof response.end;
  response.once('finish', () =>
    done(response.statusCode, Buffer.concat(written).toString('utf8'), contentType ?? response.getHeader('content-type')?.toString()),
  );
}

/**
 * A streaming function (`awslambda.streamifyResponse`): the handler writes the Lambda
 * response-stream protocol (JSON prelude, eight NUL bytes, body) and the bytes go to the
 * client as they come. A client that hangs up destroys the handler's stream, as in Lambda.
 */
async function serveStreaming(handler: StreamingHandler, event: APIGatewayProxyEvent, context: Context, response: ServerResponse): Promise<void> {
  const stream = new PreludeResponseStream(response);
  response.once('close', () => {
    if (!response.writableFinished) stream.destroy();
  });
  try {
    await handler(event, stream, context);
  } finally {
    if (!stream.writableEnded && !stream.destroyed) stream.end();
  }
}

class PreludeResponseStream extends Writable {
  private head: Buffer | null = Buffer.alloc(0);

  constructor(private readonly response: ServerResponse) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.head === null) return this.forward(chunk, callback);
    this.head = Buffer.concat([this.head, chunk]);
    // The prelude is JSON, which holds no NUL byte: the first NUL starts the delimiter.
    const delimiter = this.head.indexOf(0);
    if (delimiter < 0 || this.head.length < delimiter + 8) return callback();
    let prelude: { statusCode?: number; headers?: Record<string, string> };
    try {
      prelude = JSON.parse(this.head.subarray(0, delimiter).toString('utf8'));
    } catch {
      return callback(new Error('streaming handler wrote an invalid response prelude'));
    }
    const rest = this.head.subarray(delimiter + 8);
    this.head = null;
    this.response.writeHead(prelude.statusCode ?? 200, prelude.headers ?? {});
    this.response.flushHeaders();
    if (rest.length === 0) return callback();
    this.forward(rest, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.head !== null) {
      send(this.response, { statusCode: 500, body: errorBody(500, 'Internal Server Error') });
      return callback();
    }
    this.response.end(() => callback());
  }

  private forward(chunk: Buffer, callback: (error?: Error | null) => void): void {
    if (this.response.write(chunk)) callback();
    else this.response.once('drain', () => callback());
  }
}

function lambdaContext(functionName: string, requestId: string): Context {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
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

/**
 * API Gateway's 413 for a body past its payload cap, in the route's error shape (STYLE 3): the
 * token endpoint's own OAuth refusal of an oversized body (SPEC 7.2), the SPEC 7.1 body elsewhere.
 */
function bodyTooLarge(route: RouteDefinition): Pick<APIGatewayProxyResult, 'statusCode' | 'body' | 'headers'> {
  if (resourcePath(route).startsWith(`${API_BASE_PATH}/oauth/`)) return toOAuthResponse(tokenRequestTooLarge());
  const { status, body } = toErrorBody(new PayloadTooLargeError(`Request body is larger than ${MAX_BODY_BYTES} bytes`));
  return { statusCode: status, body: JSON.stringify(body) };
}

function send(
  response: ServerResponse,
  result: Pick<APIGatewayProxyResult, 'statusCode' | 'body'> & { headers?: APIGatewayProxyResult['headers']; isBase64Encoded?: boolean },
  { close = false }: { close?: boolean } = {},
): void {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  if (close) headers.Connection = 'close';
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  headers['Content-Length'] = String(body.length);
  response.writeHead(result.statusCode, headers);
  response.end(body);
}

function errorBody(code: number, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** `::ffff:127.0.0.1` is how node reports IPv4 on a dual-stack socket; API Gateway says `127.0.0.1`. */
function normalizeAddress(address: string | undefined): string {
  if (!address) return '0.0.0.0';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * `requestContext.identity` of a REST API proxy event for an unauthenticated caller: the
 * connection's address and the User-Agent, every IAM and Cognito field null.
 */
export function proxyEventIdentity(sourceIp: string, userAgent: string | undefined): APIGatewayProxyEvent['requestContext']['identity'] {
  return {
    sourceIp,
    userAgent: userAgent ?? null,
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    user: null,
    userArn: null,
  };
}
