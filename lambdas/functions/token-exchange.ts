/** Lambda entry of the token exchange function; see catalog.ts for the shape every entry follows. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { randomId, systemClock } from '../clock';
import { loadConfig } from '../config';
import { evaluateCondition } from '../federation/condition';
import { evaluateExchange } from '../federation/evaluate-exchange';
import { createIssuerKeySource } from '../federation/issuer-keys';
import { TOKEN_EXCHANGE_FUNCTION, createTokenExchangeHandler } from '../handlers/token-exchange';
import { createTelemetry } from '../observability/telemetry';
import { traced } from '../observability/tracing';
import { ActiveSigner } from '../signing/active-signer';
import { signerForRecord } from '../signing/signer-for-record';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoExchangeEventStore } from '../store/dynamo-exchange-event-store';
import { DynamoFederationStore } from '../store/dynamo-federation-store';
import { DynamoJtiStore } from '../store/dynamo-jti-store';
import { DynamoRateCounterStore } from '../store/dynamo-rate-counter-store';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';

// Fails the cold start when a table or setting the exchange relies on is not configured.
const config = loadConfig(process.env, TOKEN_EXCHANGE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, new DynamoDBClient({})));
// Signing keys are KMS keys named by their records, so a rotated key needs no redeploy.
const kms = traced(telemetry, new KMSClient({}));
const clock = systemClock;

const evaluationDeps = {
  federation: new DynamoFederationStore(documentClient, config.tables.policies, clock),
  accounts: new DynamoAccountStore(documentClient, config.tables.keys),
  issuerKeys: createIssuerKeySource({ clock, allowLoopback: config.allowLoopbackIssuers }),
  clock,
  evaluateCondition,
};
const signers = new ActiveSigner(new DynamoSigningKeyStore(documentClient, config.tables.keys), signerForRecord({ kms }), clock);

export const handler = createTokenExchangeHandler({
  config: {
    issuer: config.apiBaseUrl,
    maxLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
    rateLimit: { limit: config.exchangeRateLimit, windowSeconds: config.exchangeRateWindowSeconds },
  },
  clock,
  newId: randomId,
  rateCounters: new DynamoRateCounterStore(documentClient, config.tables.rateCounters),
  evaluate: (request) => evaluateExchange(evaluationDeps, request),
  jtis: new DynamoJtiStore(documentClient, config.tables.policies),
  events: new DynamoExchangeEventStore(documentClient, config.tables.policies),
  signer: () => signers.signer(),
  telemetry,
});
