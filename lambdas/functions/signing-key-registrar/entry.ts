/** Lambda entry of the deploy-time signing-key registrar; see catalog.ts for the shape every entry follows. */
import { KMSClient } from '@aws-sdk/client-kms';
import { systemClock } from '../../clock';
import { loadConfig } from '../../config';
import { SIGNING_KEY_REGISTRAR_FUNCTION, createSigningKeyRegistrar } from './handler';
import { createTelemetry } from '../../observability/telemetry';
import { traced } from '../../observability/tracing';
import { createDocumentClient, createDynamoDbClient } from '../../aws/dynamo-client';
import { DynamoSigningKeyStore } from '../../aws/dynamo-signing-key-store';

const config = loadConfig(process.env, SIGNING_KEY_REGISTRAR_FUNCTION);
const telemetry = createTelemetry({ functionName: 'signingKeyRegistrar', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, createDynamoDbClient()));

export const handler = createSigningKeyRegistrar({
  signingKeys: new DynamoSigningKeyStore(documentClient, config.tables.keys),
  kms: traced(telemetry, new KMSClient({})),
  clock: systemClock,
  telemetry,
});
