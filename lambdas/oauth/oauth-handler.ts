import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { crossOrigin, requestIdHeader } from '../http/middleware';
import { requestIdOf } from '../http/request';
import { powertools } from '../observability/middleware';
import { requestLog } from '../http/request-log';
import type { Telemetry } from '../observability/telemetry';
import { OAuthError, toOAuthResponse } from './oauth-errors';

/** An OAuth route's handler: the proxy event in, the answer out; a refusal thrown as an {@link OAuthError}. */
export type OAuthRouteHandler = (event: APIGatewayProxyEvent, context: Context, requestId: string) => Promise<APIGatewayProxyResult>;

/**
 * The one wrapper of the OAuth routes (docs/reference.md#the-token-exchange, docs/reference.md#oauth-errors): the same Powertools middlewares and
 * request log line as {@link apiHandler}, with the RFC 6749 §5.2 error serializer. Errors
 * that are not {@link OAuthError}s are logged and answered as `server_error`. Every answer
 * carries the request id in `X-Request-Id`, and a refusal also at the end of its
 * `error_description`: a workload's logs then lead its admin to the recorded reason.
 */
export function oauthHandler(handler: OAuthRouteHandler, telemetry: Telemetry, corsAllowedOrigins: readonly string[]) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(powertools(telemetry))
    .use(requestLog(telemetry))
    // Browser apps exchange tokens too (lambdas/http/cors.ts); after the serializer, as in apiHandler.
    .use(crossOrigin(corsAllowedOrigins))
    .use(requestIdHeader())
    .use({
      onError: async (request) => {
        const requestId = requestIdOf(request.event, request.context);
        if (!(request.error instanceof OAuthError && request.error.expose)) {
          telemetry.logger.error('unhandled error', { requestId, error: request.error as Error });
        }
        request.response = toOAuthResponse(request.error, requestId);
      },
    })
    .handler((event, context) => handler(event, context, requestIdOf(event, context)));
}

