import { KMSClient } from '@aws-sdk/client-kms';
import { randomId } from '../clock';
import { ConfigError } from '../config';
import type { ExchangeEvaluation } from '../federation/exchange-types';
import { consoleLogger } from '../http/middleware';
import { createTokenExchangeHandler } from '../oauth/token-exchange-handler';
import { ActiveSigner } from '../signing/active-signer';
import { localKeyDirOf, signerForRecord } from '../signing/signer-for-record';
import { DynamoExchangeEventStore } from '../store/dynamo-exchange-event-store';
import { DynamoJtiStore } from '../store/dynamo-jti-store';
import { DynamoRateCounterStore } from '../store/dynamo-rate-counter-store';
import { buildDependencies } from './dependencies';

// Fails the cold start when a table or setting the exchange relies on is not configured.
const deps = buildDependencies(process.env, ['keys', 'policies', 'rateCounters']);
const { config, documentClient, clock } = deps;
if (!config.apiBaseUrl) throw new ConfigError('API_BASE_URL is not set');

const signers = new ActiveSigner(
  deps.signingKeys,
  signerForRecord({ kms: config.signingKeyArn ? new KMSClient({}) : undefined, localKeyDir: localKeyDirOf(config.localSigningKeyPath) }),
  clock,
);

/** Until policies can be configured, no policy id resolves. */
const noPolicyConfigured = async (): Promise<ExchangeEvaluation> => ({
  result: 'fail',
  reason: 'policy_not_found',
  steps: [],
  policy: null,
  issuer: null,
  organization: null,
  key: null,
  claims: null,
  unverifiedSubject: null,
});

/** SPEC 4.2: `POST /oauth/token`. */
export const handler = createTokenExchangeHandler({
  config: {
    issuer: config.apiBaseUrl,
    maxLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
    rateLimit: { limit: config.exchangeRateLimit, windowSeconds: config.exchangeRateWindowSeconds },
  },
  clock,
  newId: randomId,
  rateCounters: new DynamoRateCounterStore(documentClient, config.tables.rateCounters!),
  evaluate: noPolicyConfigured,
  jtis: new DynamoJtiStore(documentClient, config.tables.policies!),
  events: new DynamoExchangeEventStore(documentClient, config.tables.policies!),
  signer: () => signers.signer(),
  logger: consoleLogger,
});
