import type { FunctionRequirements } from '../config';
import { bodyText, header } from '../http/request';
import type { Telemetry } from '../observability/telemetry';
import { oauthHandler } from '../oauth/oauth-handler';
import { OAuthError } from '../oauth/oauth-errors';
import { parseTokenExchangeRequest } from '../oauth/token-request';

/**
 * SPEC 4.2: federation policies and issuers, API keys, the rate counters, and the KMS key
 * that signs access tokens.
 */
export const TOKEN_EXCHANGE_FUNCTION = {
  tables: ['keys', 'policies', 'rateCounters'],
  settings: ['signingKeyArn'],
} as const satisfies FunctionRequirements;

export interface TokenExchangeHandlerDeps {
  telemetry: Telemetry;
}

/**
 * `POST /oauth/token`. The request is validated in full; no federation policy can be
 * configured yet, so every well-formed exchange is refused with the generic `invalid_grant`
 * (SPEC 7.2).
 */
export function createTokenExchangeHandler(deps: TokenExchangeHandlerDeps) {
  return oauthHandler(async (event) => {
    parseTokenExchangeRequest(bodyText(event), header(event, 'content-type'));
    throw new OAuthError(400, 'invalid_grant', 'The subject token or federation policy is not valid');
  }, deps.telemetry);
}
