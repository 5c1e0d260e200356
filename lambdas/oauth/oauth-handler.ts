import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { powertools, requestLog } from '../observability/middleware';
import type { Telemetry } from '../observability/telemetry';
import { OAuthError, toOAuthResponse } from './oauth-errors';

export type OAuthRouteHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The one wrapper of the OAuth routes (SPEC 4.2, 7.2): the same Powertools middlewares and
 * request log line as {@link apiHandler}, with the RFC 6749 §5.2 error serializer. Errors
 * that are not {@link OAuthError}s are logged and answered as `server_error`.
 */
export function oauthHandler(handler: OAuthRouteHandler, telemetry: Telemetry) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(powertools(telemetry))
    .use(requestLog(telemetry))
    .use({
      onError: async (request) => {
        if (!(request.error instanceof OAuthError && request.error.expose)) {
          telemetry.logger.error('unhandled error', request.error as Error);
        }
        request.response = toOAuthResponse(request.error);
      },
    })
    .handler(handler);
}
