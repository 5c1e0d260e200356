/** Lambda entry of the inference function; see catalog.ts for the shape every entry follows. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CatalogCache } from '../catalog/catalog-cache';
import { randomId, systemClock } from '../clock';
import { loadConfig } from '../config';
import { INFERENCE_FUNCTION, createInferenceHandler } from '../handlers/inference';
import { upstreamNamed } from '../inference/upstream';
import { createTelemetry } from '../observability/telemetry';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { DynamoCatalogStore } from '../store/dynamo-catalog-store';
import { createDocumentClient } from '../store/dynamo-client';

const config = loadConfig(process.env, INFERENCE_FUNCTION);
const telemetry = createTelemetry({ functionName: 'inference', logLevel: config.logLevel });
const documentClient = createDocumentClient(telemetry.tracer.captureAWSv3Client(new DynamoDBClient({})));

export const handler = createInferenceHandler({
  accounts: new DynamoAccountStore(documentClient, config.tables.keys),
  catalog: new CatalogCache(new DynamoCatalogStore(documentClient, config.tables.models), systemClock, config.catalogCacheSeconds),
  clock: systemClock,
  regionalHostnames: config.regionalHostnames,
  upstream: upstreamNamed(config.inferenceUpstream),
  newId: randomId,
  telemetry,
});
