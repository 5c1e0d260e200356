import { systemClock } from '../clock';
import { loadConfig, type FunctionRequirements, type FunctionValueName, type ServiceConfig } from '../config';
import { createDocumentClient, createDynamoDbClient } from '../aws/dynamo-client';
import type { TableId } from '../aws/table-schemas';
import { createTelemetry, type Telemetry } from '../observability/telemetry';
import { traced } from '../observability/tracing';
import type { FunctionContext } from '../wiring/context';

/** What an entry builds its function from: its configuration, its telemetry, and the context its dependencies take. */
export interface LambdaEntry<T extends TableId, S extends FunctionValueName> {
  readonly config: ServiceConfig<T, S>;
  readonly telemetry: Telemetry;
  readonly context: FunctionContext<T>;
}

/**
 * Steps 1 and 2 of every entry that reads DynamoDB (catalog/entry.ts): the configuration from
 * the environment, naming exactly the tables and settings the function needs (a missing one
 * fails the cold start, not a request), the function's telemetry, and its DynamoDB client,
 * built once and traced, in the context its dependencies are built from.
 */
export function lambdaEntry<T extends TableId, S extends FunctionValueName = never>(
  functionName: string,
  requirements: FunctionRequirements<T, S>,
): LambdaEntry<T, S> {
  const config = loadConfig(process.env, requirements);
  const telemetry = createTelemetry({ functionName, logLevel: config.logLevel });
  const documentClient = createDocumentClient(traced(telemetry, createDynamoDbClient()));
  return { config, telemetry, context: { documentClient, tables: config.tables, clock: systemClock, telemetry } };
}
