/** Lambda entry of the token exchange function; see catalog.ts for the shape every entry follows. */
import { KMSClient } from '@aws-sdk/client-kms';
import { randomId, systemClock } from '../../clock';
import { loadConfig } from '../../config';
import { createIssuerKeySource } from '../../federation/issuer-keys';
import { TOKEN_EXCHANGE_FUNCTION, createTokenExchangeHandler } from './handler';
import { createTelemetry } from '../../observability/telemetry';
import { traced } from '../../observability/tracing';
import { signerForRecord } from '../../wiring/signer-for-record';
import { createDocumentClient, createDynamoDbClient } from '../../aws/dynamo-client';
import { tokenExchangeDependencies } from './dependencies';

// Fails the cold start when a table or setting the exchange relies on is not configured.
const config = loadConfig(process.env, TOKEN_EXCHANGE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, createDynamoDbClient()));
// Signing keys are KMS keys named by their records, so a rotated key needs no redeploy.
const kms = traced(telemetry, new KMSClient({}));

export const handler = createTokenExchangeHandler(
  tokenExchangeDependencies(
    { documentClient, tables: config.tables, clock: systemClock, telemetry },
    {
      ...config,
      issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: config.allowLoopbackIssuers }),
      signerForRecord: signerForRecord({ kms }),
      newId: randomId,
    },
  ),
);
