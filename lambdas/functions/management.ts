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
import { createTelemetry } from '../observability/telemetry';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoUsageStore } from '../store/dynamo-usage-store';
import { DynamoFederationStore } from '../store/dynamo-federation-store';

const config = loadConfig(process.env, MANAGEMENT_FUNCTION);
const telemetry = createTelemetry({ functionName: 'management', logLevel: config.logLevel });
const documentClient = createDocumentClient(telemetry.tracer.captureAWSv3Client(new DynamoDBClient({})));
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

export const handler = createManagementHandler({
  accounts,
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
  // The token endpoint's per-address counter is not wired here yet: every evaluation is allowed.
  exchangeRate: async () => ({ allowed: true }),
  clock: systemClock,
  telemetry,
});
