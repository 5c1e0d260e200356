import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { powertools } from '../observability/middleware';
import { requestLog } from './request-log';
import type { Telemetry } from '../observability/telemetry';
import { toErrorBody, type ErrorSerializerOptions } from './api-errors';
import { corsHeaders } from './cors';
import { header, requestIdOf } from './request';
import { json } from './responses';

/** What a route handler is: a proxy event in, a proxy result out. */
export type ApiHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * Serializes every thrown error as a body in the common error shape (docs/reference.md#the-common-error-body). Unexpected errors are logged with their
 * stack and answered with a bare 500, so internals never reach the caller.
 */
export function apiErrors(telemetry: Telemetry, options: ErrorSerializerOptions = {}): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      const { status, body, headers } = toErrorBody(request.error, options);
      if (status >= 500) telemetry.logger.error('unhandled error', request.error as Error);
      request.response = json(status, body, headers);
    },
  };
}

/**
 * The CORS headers of every answer, errors included (lambdas/http/cors.ts), for the origin the
 * request names. Used before the error serializer, so it runs after it (middy calls `onError`
 * in reverse order of use) and sees the answer it shaped.
 */
export function crossOrigin(allowedOrigins: readonly string[]): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const add = async (request: { event: APIGatewayProxyEvent; response?: APIGatewayProxyResult | null }) => {
    if (request.response) request.response.headers = { ...request.response.headers, ...corsHeaders(allowedOrigins, header(request.event, 'origin')) };
  };
  return { after: add, onError: add };
}

/**
 * `X-Request-Id` on every answer, errors included: the id support asks for and the `openai`
 * client reports as `_request_id`. Used before the error serializer, so it sees its answer too.
 */
export function requestIdHeader(): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const add = async (request: { event: APIGatewayProxyEvent; context: Context; response?: APIGatewayProxyResult | null }) => {
    if (request.response) request.response.headers = { ...request.response.headers, 'X-Request-Id': requestIdOf(request.event, request.context) };
  };
  return { after: add, onError: add };
}

/** What {@link apiHandler} adds to every answer beyond the error body: the challenge's metadata URL and the CORS origins. */
export interface ApiHandlerOptions extends ErrorSerializerOptions {
  /** The origins whose pages may read the answers; none for a same-origin page (the settings page). */
  readonly corsAllowedOrigins?: readonly string[];
}

/**
 * The one wrapper of every non-OAuth route: Powertools (context, traces, metrics), one log
 * line per request, the CORS headers of an API route, and the serializer of the common error body (docs/reference.md#the-common-error-body), the
 * boundary where domain errors become HTTP statuses. Functions that serve protected routes
 * pass the protected resource metadata URL their 401 challenges name.
 */
export function apiHandler(handler: ApiHandler, telemetry: Telemetry, { corsAllowedOrigins, ...errors }: ApiHandlerOptions = {}) {
  const wrapped = middy<APIGatewayProxyEvent, APIGatewayProxyResult>().use(powertools(telemetry)).use(requestLog(telemetry)).use(requestIdHeader());
  if (corsAllowedOrigins) wrapped.use(crossOrigin(corsAllowedOrigins));
  return wrapped.use(apiErrors(telemetry, errors)).handler(handler);
}
