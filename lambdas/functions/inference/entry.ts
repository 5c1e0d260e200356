/** Lambda entry of the inference function; see catalog.ts for the shape every entry follows. */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomId, systemClock } from '../../clock';
import { loadConfig } from '../../config';
import { INFERENCE_FUNCTION, createInferenceHandler } from './handler';
import { secretsManagerCredentials } from '../../aws/secrets-manager-credentials';
import { createTelemetry } from '../../observability/telemetry';
import { traced } from '../../observability/tracing';
import { createDocumentClient, createDynamoDbClient } from '../../aws/dynamo-client';
import { USAGE_FIGURES_SECONDS } from '../../usage/usage';
import { inferenceDependencies } from './dependencies';

const config = loadConfig(process.env, INFERENCE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'inference', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, createDynamoDbClient()));

export const handler = createInferenceHandler(
  inferenceDependencies(
    { documentClient, tables: config.tables, clock: systemClock, telemetry },
    {
      ...config,
      usageFiguresSeconds: USAGE_FIGURES_SECONDS,
      credentials: secretsManagerCredentials(traced(telemetry, new SecretsManagerClient({})), config.providerCredentialsSecretArn, systemClock),
      newId: randomId,
    },
  ),
);
