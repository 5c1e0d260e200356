/** Lambda entry of the management function; see catalog.ts for the shape every entry follows. */
import { systemClock } from '../../clock';
import { loadConfig } from '../../config';
import { createIssuerKeySource } from '../../federation/issuer-keys';
import { MANAGEMENT_FUNCTION, createManagementHandler } from './handler';
import { createTelemetry } from '../../observability/telemetry';
import { traced } from '../../observability/tracing';
import { createDocumentClient, createDynamoDbClient } from '../../aws/dynamo-client';
import { managementDependencies } from './dependencies';

const config = loadConfig(process.env, MANAGEMENT_FUNCTION);
const telemetry = createTelemetry({ functionName: 'management', logLevel: config.logLevel });
const documentClient = createDocumentClient(traced(telemetry, createDynamoDbClient()));

export const handler = createManagementHandler(
  managementDependencies(
    { documentClient, tables: config.tables, clock: systemClock, telemetry },
    {
      // allowLoopbackIssuers is false on every deployed stage: loadConfig refuses the flag outside the local one.
      ...config,
      issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: config.allowLoopbackIssuers }),
    },
  ),
);
