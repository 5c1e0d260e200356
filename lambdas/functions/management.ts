/** Lambda entry of the management function; see catalog.ts for the shape every entry follows. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AccountsService } from '../accounts/accounts-service';
import { systemClock } from '../clock';
import { loadConfig } from '../config';
import { FederationService } from '../federation/federation-service';
import { MANAGEMENT_FUNCTION, createManagementHandler } from '../handlers/management';
import { createTelemetry } from '../observability/telemetry';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import { SigningKeyAccessTokenVerifier } from '../oauth/access-token-verifier';
import { DynamoExchangeEventStore } from '../store/dynamo-exchange-event-store';
import { DynamoUsageStore } from '../store/dynamo-usage-store';
import { DynamoFederationStore } from '../store/dynamo-federation-store';

const config = loadConfig(process.env, MANAGEMENT_FUNCTION);
const telemetry = createTelemetry({ functionName: 'management', logLevel: config.logLevel });
const documentClient = createDocumentClient(telemetry.tracer.captureAWSv3Client(new DynamoDBClient({})));
const accounts = new DynamoAccountStore(documentClient, config.tables.keys);

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
    store: new DynamoFederationStore(documentClient, config.tables.policies, systemClock),
    accounts,
    // False on every deployed stage: loadConfig refuses the flag outside the local one.
    hosts: { allowLoopback: config.allowLoopbackIssuers },
    clock: systemClock,
  }),
  clock: systemClock,
  exchangeEvents: new DynamoExchangeEventStore(documentClient, config.tables.policies),
  telemetry,
});
