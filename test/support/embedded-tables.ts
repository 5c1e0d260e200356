import { createDocumentClient } from '../../lambdas/aws/dynamo-client';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { createTables } from '../../local/tables';

/** The embedded DynamoDB with the service's tables, for store adapter tests. */
export async function startEmbeddedTables(): Promise<EmbeddedDynamoDb & { documentClient: ReturnType<typeof createDocumentClient> }> {
  const dynamo = await startEmbeddedDynamoDb();
  await createTables(dynamo.client);
  return { ...dynamo, documentClient: createDocumentClient(dynamo.client) };
}
