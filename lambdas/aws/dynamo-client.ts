import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { InvalidInputError } from '../errors';

/**
 * Connections one function's client may hold open at once. A usage view reads every shard of
 * a key's or an organization's counters side by side, and the catalog every shard of the
 * popularity figures (lambdas/aws/dynamo-usage-store.ts): more at once than the SDK's default 50,
 * which would queue the rest behind the first and make one round trip two or three.
 */
export const DYNAMODB_MAX_SOCKETS = 128;

/**
 * A function's DynamoDB client, built once per cold start.
 *
 * Without a logger of its own, the client leaves out the SDK's logger middleware: with its
 * default (a logger that drops everything) that middleware still copies every request and
 * answer, item by item, to hand the copies to the dropped log line, about a fifth of the
 * SDK's work on a read of a hundred items.
 */
export function createDynamoDbClient(config: DynamoDBClientConfig = {}): DynamoDBClient {
  const agent = { keepAlive: true, maxSockets: DYNAMODB_MAX_SOCKETS };
  const client = new DynamoDBClient({ ...config, requestHandler: { httpAgent: agent, httpsAgent: agent } });
  if (config.logger === undefined) client.middlewareStack.remove(SDK_LOGGER_MIDDLEWARE);
  return client;
}

/** The name the SDK gives its logger middleware. */
export const SDK_LOGGER_MIDDLEWARE = 'loggerMiddleware';

/**
 * The document client, built once per cold start. The endpoint comes from the SDK's own
 * `AWS_ENDPOINT_URL_DYNAMODB`, which the local runtime points at the embedded server.
 */
export function createDocumentClient(client: DynamoDBClient = createDynamoDbClient()): DynamoDBDocumentClient {
  const documentClient = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  // The document client shares the base client's stack: one translation for every store.
  documentClient.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        throw translateStoreError(error);
      }
    },
    { step: 'initialize', name: 'modelgateValidationErrors', override: true },
  );
  return documentClient;
}

/** Message of the 400 a request gets when DynamoDB refuses one of its values. */
export const UNSTORABLE_VALUE_MESSAGE = 'A value in the request cannot be stored: it is too long or malformed';

/**
 * The one store boundary for DynamoDB's `ValidationException`: a value the client sent
 * that DynamoDB cannot take (a key attribute over 2,048 bytes, an item over 400 KB) is
 * the client's error, a 400 (docs/reference.md#the-common-error-body), not a 500. Identifiers are checked before any
 * store call; this catches whatever slips past that check.
 */
export function translateStoreError(error: unknown): unknown {
  if ((error as { name?: string } | null)?.name !== 'ValidationException') return error;
  return new InvalidInputError(UNSTORABLE_VALUE_MESSAGE);
}
