import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { bodyText, header } from '../http/request';
import { OAuthError, toOAuthResponse } from '../oauth/oauth-errors';
import { parseTokenExchangeRequest } from '../oauth/token-request';
import { buildDependencies } from './dependencies';

// Fails the cold start when a table the exchange relies on is not configured.
buildDependencies(process.env, ['keys', 'policies', 'rateCounters']);

/**
 * SPEC 4.2. The request is validated in full; no federation policy can be configured yet,
 * so every well-formed exchange is refused with the generic `invalid_grant` (SPEC 7.2).
 */
export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use({ onError: async (request) => void (request.response = toOAuthResponse(request.error)) })
  .handler(async (event) => {
    parseTokenExchangeRequest(bodyText(event), header(event, 'content-type'));
    throw new OAuthError(400, 'invalid_grant', 'The subject token or federation policy is not valid');
  });
