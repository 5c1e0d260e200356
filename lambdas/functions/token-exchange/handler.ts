import type { FunctionRequirements } from '../../config';
import { bodyText, proofRequest, requestMediaType } from '../../http/request';
import { recordTokenExchange, type Telemetry } from '../../observability/telemetry';
import { NO_STORE } from '../../oauth/oauth-errors';
import { oauthHandler } from '../../oauth/oauth-handler';
import { exchangeToken, type TokenExchangeDeps } from '../../oauth/exchange-token';

/**
 * docs/reference.md#the-token-exchange: federation policies and issuers (and the exchange's own events and `jti`
 * claims), API keys and signing-key records, the rate counters, and the API base URL that
 * issued tokens name as issuer and audience.
 */
export const TOKEN_EXCHANGE_FUNCTION = {
  tables: ['keys', 'policies', 'rateCounters'],
  // A DPoP proof may name the token endpoint on any hostname the deployment serves.
  settings: ['apiBaseUrl', 'accessTokenMaxLifetimeSeconds', 'regionalHostnames', 'exchangeRateLimit', 'exchangeRateWindowSeconds', 'corsAllowedOrigins'],
} as const satisfies FunctionRequirements;

/** What the token exchange handler uses: the exchange's dependencies (their logger and outcome metric are the telemetry's) and the origins whose pages may call it. */
export interface TokenExchangeHandlerDeps extends Omit<TokenExchangeDeps, 'logger' | 'onOutcome'> {
  corsAllowedOrigins: readonly string[];
  telemetry: Telemetry;
}

/**
 * `POST /oauth/token` over API Gateway proxy events: the body, the content type, the source
 * address and the request id go to {@link exchangeToken}; its answer is serialized here.
 */
export function createTokenExchangeHandler(deps: TokenExchangeHandlerDeps) {
  const { telemetry } = deps;
  const exchangeDeps: TokenExchangeDeps = {
    ...deps,
    logger: { error: (message, fields) => telemetry.logger.error(message, { ...fields }) },
    onOutcome: (outcome, reason) => recordTokenExchange(telemetry, outcome, reason ?? 'none'),
  };
  return oauthHandler(async (event, _context, requestId) => {
    const body = await exchangeToken(exchangeDeps, {
      body: bodyText(event),
      contentType: requestMediaType(event),
      sourceIp: event.requestContext.identity.sourceIp,
      requestId,
      ...proofRequest(event),
    });
    return { statusCode: 200, headers: { 'Content-Type': 'application/json', ...NO_STORE }, body: JSON.stringify(body) };
  }, telemetry, deps.corsAllowedOrigins);
}
