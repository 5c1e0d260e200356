/** Lambda entry of the JWKS function; see catalog.ts for the shape every entry follows. */
import { systemClock } from '../../clock';
import { loadConfig } from '../../config';
import { JWKS_FUNCTION, createJwksHandler } from './handler';
import { createTelemetry } from '../../observability/telemetry';
import { traced } from '../../observability/tracing';
import { createDocumentClient, createDynamoDbClient } from '../../aws/dynamo-client';
import { jwksDependencies } from './dependencies';

const config = loadConfig(process.env, JWKS_FUNCTION);
const telemetry = createTelemetry({ functionName: 'jwks', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, createDynamoDbClient()));

export const handler = createJwksHandler(
  jwksDependencies(
    { documentClient, tables: config.tables, clock: systemClock, telemetry },
    config,
  ),
);
