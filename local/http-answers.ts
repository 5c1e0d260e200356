import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { corsHeaders } from '../lambdas/http/cors';
import { PAGES_BASE_PATH } from '../lambdas/routes';
import { encodeAnswer } from './http-compression';

/** A buffered answer: a function's result, or one the server gives itself. */
export type Answer = Pick<APIGatewayProxyResult, 'statusCode' | 'body'> & { headers?: APIGatewayProxyResult['headers']; isBase64Encoded?: boolean };

/** Writes a buffered answer whole, compressed as API Gateway would for the request it answers. */
export function send(response: ServerResponse, result: Answer, { close = false }: { close?: boolean } = {}): void {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  // A function's answer names its request; one the server gives itself gets an id of its own, as API Gateway's do.
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'x-request-id')) headers['X-Request-Id'] = randomUUID();
  if (close) headers.Connection = 'close';
  const raw = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body ?? '', 'utf8');
  const body = response.req ? encodeAnswer(response.req, result.statusCode, headers, raw) : raw;
  headers['Content-Length'] = String(body.length);
  response.writeHead(result.statusCode, headers);
  response.end(body);
}

/** The error body of every answer but the token endpoint's: `{"error":{"code","message"}}`. */
export function errorBody(code: number, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/**
 * The CORS headers of the answers the server gives itself, as API Gateway's gateway responses
 * carry them: on API paths only (the settings page is same-origin only).
 */
export function ownAnswerCors(path: string, origin: string | undefined, allowedOrigins: readonly string[]): Record<string, string> {
  return path.startsWith(`${PAGES_BASE_PATH}/`) ? {} : corsHeaders(allowedOrigins, origin);
}

/**
 * The URL of a request target. An origin-form target is a path even when it starts with `//`
 * (which a URL parser would read as a host); a target no URL can be built from is read as `/`.
 */
export function requestUrl(target: string | undefined): URL {
  const value = target ?? '/';
  try {
    return new URL(value.startsWith('/') ? `http://local${value}` : value, 'http://local');
  } catch {
    return new URL('http://local/');
  }
}
