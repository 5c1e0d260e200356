/** Lambda entry of the inference function; see catalog.ts for the shape every entry follows. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CatalogCache } from '../catalog/catalog-cache';
import { randomId, systemClock } from '../clock';
import { loadConfig } from '../config';
import { INFERENCE_FUNCTION, createInferenceHandler } from '../handlers/inference';
import { secretsManagerCredentials } from '../inference/secrets-manager-credentials';
import { upstreamOptions } from '../inference/upstream-options';
import { catalogLoadRecorder, createTelemetry } from '../observability/telemetry';
import { traced } from '../observability/tracing';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { DynamoCatalogStore } from '../store/dynamo-catalog-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import { SigningKeyAccessTokenVerifier } from '../oauth/access-token-verifier';
import { DynamoUsageStore } from '../store/dynamo-usage-store';
import { USAGE_FIGURES_SECONDS, USAGE_SORT_DAYS } from '../usage/usage';

const config = loadConfig(process.env, INFERENCE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'inference', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, new DynamoDBClient({})));
const usage = new DynamoUsageStore(documentClient, config.tables.usage);
const secretArn = config.inference.providerCredentialsSecretArn;

// Access tokens from the exchange, verified against the signing-key records (SPEC 5 rule 5).
const accessTokens = new SigningKeyAccessTokenVerifier({
  signingKeys: new DynamoSigningKeyStore(documentClient, config.tables.keys),
  clock: systemClock,
  issuer: config.apiBaseUrl,
  maxTokenLifetimeSeconds: config.accessTokenMaxLifetimeSeconds,
});

export const handler = createInferenceHandler({
  accounts: new DynamoAccountStore(documentClient, config.tables.keys),
  accessTokens,
  usage,
  catalog: new CatalogCache(new DynamoCatalogStore(documentClient, config.tables.models), systemClock, config.catalogCacheSeconds, catalogLoadRecorder(telemetry), {
    recent: (now) => usage.modelUsage(now, USAGE_SORT_DAYS),
    maxAgeSeconds: USAGE_FIGURES_SECONDS,
  }),
  clock: systemClock,
  regionalHostnames: config.regionalHostnames,
  upstream: upstreamOptions(config.inference, {
    clock: systemClock,
    newId: randomId,
    credentials: secretArn
      ? secretsManagerCredentials(traced(telemetry, new SecretsManagerClient({})), secretArn, systemClock)
      : undefined,
  }),
  telemetry,
});
