/** Lambda entry of the management function; see catalog.ts for the shape every entry follows. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AccountsService } from '../accounts/accounts-service';
import { systemClock } from '../clock';
import { loadConfig } from '../config';
import { evaluateCondition } from '../federation/condition';
import { evaluateExchange } from '../federation/evaluate-exchange';
import { FederationService } from '../federation/federation-service';
import { createIssuerKeySource } from '../federation/issuer-keys';
import { MANAGEMENT_FUNCTION, createManagementHandler } from '../handlers/management';
import { checkExchangeRate } from '../oauth/exchange-rate-limit';
import { createTelemetry } from '../observability/telemetry';
import { traced } from '../observability/tracing';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import { SigningKeyAccessTokenVerifier } from '../oauth/access-token-verifier';
import { DynamoExchangeEventStore } from '../store/dynamo-exchange-event-store';
import { DynamoUsageStore } from '../store/dynamo-usage-store';
import { DynamoFederationStore } from '../store/dynamo-federation-store';
import { DynamoRateCounterStore } from '../store/dynamo-rate-counter-store';

const config = loadConfig(process.env, MANAGEMENT_FUNCTION);
const telemetry = createTelemetry({ functionName: 'management', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, new DynamoDBClient({})));
const accounts = new DynamoAccountStore(documentClient, config.tables.keys);
const federationStore = new DynamoFederationStore(documentClient, config.tables.policies, systemClock);
// The policy tester runs the exchange's own decision over the same stores and key source.
const evaluationDeps = {
  federation: federationStore,
  accounts,
  issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: config.allowLoopbackIssuers }),
  clock: systemClock,
  evaluateCondition,
};

const rateCounters = new DynamoRateCounterStore(documentClient, config.tables.rateCounters);
const exchangeRateLimit = { limit: config.exchangeRateLimit, windowSeconds: config.exchangeRateWindowSeconds };

// Access tokens from the exchange, verified against the signing-key records (SPEC 5 rule 5).
const accessTokens = new SigningKeyAccessTokenVerifier({
  signingKeys: new DynamoSigningKeyStore(documentClient, config.tables.keys),
  clock: systemClock,
  issuer: config.apiBaseUrl,
  maxTokenLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
});

export const handler = createManagementHandler({
  accounts,
  accessTokens,
  service: new AccountsService({ store: accounts, clock: systemClock }),
  usage: new DynamoUsageStore(documentClient, config.tables.usage),
  federation: new FederationService({
    store: federationStore,
    accounts,
    // False on every deployed stage: loadConfig refuses the flag outside the local one.
    hosts: { allowLoopback: config.allowLoopbackIssuers },
    clock: systemClock,
  }),
  policyTester: {
    evaluate: (request) => evaluateExchange(evaluationDeps, request),
    clock: systemClock,
    maxLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
  },
  // The token endpoint's own counters and limit: tester calls and exchanges share one budget per address.
  exchangeRate: (sourceIp) => checkExchangeRate(rateCounters, sourceIp, systemClock.now(), exchangeRateLimit),
  clock: systemClock,
  exchangeEvents: new DynamoExchangeEventStore(documentClient, config.tables.policies),
  telemetry,
});
