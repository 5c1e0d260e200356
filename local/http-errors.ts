import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { PayloadTooLargeError } from '../lambdas/errors';
import { toErrorBody } from '../lambdas/http/api-errors';
import { toOAuthResponse } from '../lambdas/oauth/oauth-errors';
import { tokenRequestTooLarge } from '../lambdas/oauth/token-request';
import { API_BASE_PATH, resourcePath, type RouteDefinition } from '../lambdas/routes';
import { errorBody, ownAnswerCors, send } from './http-answers';

/** API Gateway's own payload cap. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * API Gateway's REST API limit on the request line and headers together (10,240 bytes), counted
 * on the request's head as sent: the request line and each header line with their CRLFs, and the
 * empty line that ends them (see {@link headBytes}).
 */
export const MAX_HEADER_BYTES = 10 * 1024;

/**
 * The size of a request's head: `METHOD target HTTP/x.y`, each header as `Name: value`, every
 * line ended by CRLF, and the final CRLF. Node's parser counts only the target, the names and
 * the values against its `maxHeaderSize` (1,000 short headers, 10.9 KB on the wire, pass a
 * 10 KB limit there), so it is only the backstop for heads so large it stops reading them.
 */
export function headBytes(request: IncomingMessage): number {
  let size = Buffer.byteLength(`${request.method} ${request.url} HTTP/${request.httpVersion}\r\n\r\n`, 'latin1');
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) size += Buffer.byteLength(raw[i]!, 'latin1') + Buffer.byteLength(raw[i + 1]!, 'latin1') + 4;
  return size;
}

/** The 431 of a head past {@link MAX_HEADER_BYTES}: the connection closes, and what body there is goes unread. */
export function answerHeadersTooLarge(request: IncomingMessage, response: ServerResponse, cors: Record<string, string>): void {
  request.resume();
  send(response, { statusCode: 431, headers: cors, body: errorBody(431, `Request headers are larger than ${MAX_HEADER_BYTES} bytes`) }, { close: true });
}

/** What the server knows of a connection's request under way, for an error Node reports on the socket. */
export interface SocketRequest {
  path: string;
  origin: string | undefined;
}

/**
 * The answer to what Node refuses while parsing (a head past its limit, a malformed request, one
 * that stops arriving): the JSON error body and the CORS headers of every other error, where
 * Node would answer a bare status. The path and origin are the request's when Node had read its
 * head (`known`), else read from what it had of it.
 */
export function clientErrorAnswerer(allowedOrigins: readonly string[], known: WeakMap<Duplex, SocketRequest>) {
  return (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void => {
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
    const { path, origin } = known.get(socket) ?? readHead(error.rawPacket);
    const headers = { 'Content-Type': 'application/json', 'X-Request-Id': randomUUID(), ...ownAnswerCors(path, origin, allowedOrigins) };
    const body = errorBody(status, message);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  };
}

/** The path and `Origin` in what Node had of a request's head, as far as it goes. */
function readHead(raw: Buffer | undefined): SocketRequest {
  const text = raw?.toString('latin1') ?? '';
  const target = /^[A-Z]+ (\S+)/.exec(text)?.[1];
  const origin = /\r\norigin:[ \t]*([^\r\n]*?)[ \t]*\r\n/i.exec(text)?.[1];
  return { path: target?.startsWith('/') ? target.split('?')[0]! : `${API_BASE_PATH}/`, origin };
}

/**
 * API Gateway's 413 for a body past its payload cap, in the route's error shape (one error shape per protocol): the
 * token endpoint's own OAuth refusal of an oversized body, the common error body elsewhere.
 */
export function bodyTooLarge(route: RouteDefinition): Pick<APIGatewayProxyResult, 'statusCode' | 'body' | 'headers'> {
  if (resourcePath(route).startsWith(`${API_BASE_PATH}/oauth/`)) return toOAuthResponse(tokenRequestTooLarge());
  const { status, body } = toErrorBody(new PayloadTooLargeError(`Request body is larger than ${MAX_BODY_BYTES} bytes`));
  return { statusCode: status, body: JSON.stringify(body) };
}
