import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { bodyText, header } from '../http/request';
import { NO_STORE, toOAuthResponse } from './oauth-errors';
import { exchangeToken, type TokenExchangeDeps } from './token-exchange';

/**
 * `POST /oauth/token` (SPEC 4.2) over API Gateway proxy events: it reads the body, the
 * content type, the source address and the request id, calls {@link exchangeToken} and
 * serializes the answer. Every response carries `X-Request-Id` and is never cached.
 */
export function createTokenExchangeHandler(deps: TokenExchangeDeps) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use({
      onError: async (request) => {
        const requestId = requestIdOf(request.event, request.context);
        const error = request.error as Error & { expose?: boolean };
        if (!error || error.expose !== true) {
          deps.logger.error('unhandled token endpoint error', { requestId, error: error?.name, detail: error?.message, stack: error?.stack });
        }
        request.response = toOAuthResponse(request.error, requestId);
      },
    })
    .handler(async (event, context) => {
      const requestId = requestIdOf(event, context);
      const body = await exchangeToken(deps, {
        body: bodyText(event),
        contentType: header(event, 'content-type'),
        sourceIp: event.requestContext.identity.sourceIp,
        requestId,
      });
      return {
        statusCode: 200,
        headers: { 'Content-Type': 'application/json', ...NO_STORE, 'X-Request-Id': requestId },
        body: JSON.stringify(body),
      };
    });
}

/** API Gateway's request id (the one its access logs show), else the invocation's. */
function requestIdOf(event: APIGatewayProxyEvent | undefined, context: Context | undefined): string {
  return event?.requestContext?.requestId || context?.awsRequestId || 'unknown';
}
