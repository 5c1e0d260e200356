/**
 * Lambda entry of the catalog function. Every entry in this folder is a composition root
 * and reads the same way:
 *   1. configuration from the environment, naming exactly the tables and settings the
 *      function needs (a missing one fails the cold start, not a request);
 *   2. telemetry, then the AWS clients it uses, each built once and traced;
 *   3. the stores and services those clients back;
 *   4. the handler factory of lambdas/handlers/, which the local runtime (local/runtime.ts)
 *      calls too with local clients.
 * Nothing else belongs here: no logic, no other module's wiring.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CatalogCache } from '../catalog/catalog-cache';
import { systemClock } from '../clock';
import { loadConfig } from '../config';
import { CATALOG_FUNCTION, createCatalogHandler } from '../handlers/catalog';
import { catalogLoadRecorder, createTelemetry } from '../observability/telemetry';
import { traced } from '../observability/tracing';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { DynamoCatalogStore } from '../store/dynamo-catalog-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import { SigningKeyAccessTokenVerifier } from '../oauth/access-token-verifier';
import { DynamoUsageStore } from '../store/dynamo-usage-store';
import { USAGE_FIGURES_SECONDS, USAGE_SORT_DAYS } from '../usage/usage';

const config = loadConfig(process.env, CATALOG_FUNCTION);
const telemetry = createTelemetry({ functionName: 'catalog', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, new DynamoDBClient({})));
const usage = new DynamoUsageStore(documentClient, config.tables.usage);

// Access tokens from the exchange, verified against the signing-key records (SPEC 5 rule 5).
const accessTokens = new SigningKeyAccessTokenVerifier({
  signingKeys: new DynamoSigningKeyStore(documentClient, config.tables.keys),
  clock: systemClock,
  issuer: config.apiBaseUrl,
  maxTokenLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
});

export const handler = createCatalogHandler({
  accounts: new DynamoAccountStore(documentClient, config.tables.keys),
  accessTokens,
  catalog: new CatalogCache(new DynamoCatalogStore(documentClient, config.tables.models), systemClock, config.catalogCacheSeconds, catalogLoadRecorder(telemetry), {
    recent: (now) => usage.modelUsage(now, USAGE_SORT_DAYS),
    maxAgeSeconds: USAGE_FIGURES_SECONDS,
  }),
  clock: systemClock,
  regionalHostnames: config.regionalHostnames,
  telemetry,
});
