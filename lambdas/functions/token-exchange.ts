/** Lambda entry of the token exchange function; see catalog.ts for the shape every entry follows. */
import { loadConfig } from '../config';
import { TOKEN_EXCHANGE_FUNCTION, createTokenExchangeHandler } from '../handlers/token-exchange';
import { createTelemetry } from '../observability/telemetry';

// Fails the cold start when a table or the signing key the exchange relies on is not configured.
const config = loadConfig(process.env, TOKEN_EXCHANGE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: config.logLevel });

export const handler = createTokenExchangeHandler({ telemetry });
