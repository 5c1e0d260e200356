import { createDocumentClient } from '../../lambdas/aws/dynamo-client';
import type { EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { createTables } from '../../local/tables';
import { startTestDynamoDb } from './dynamodb-local';

/** The test DynamoDB (./dynamodb-local.ts) with the service's tables, for store adapter tests. */
export async function startEmbeddedTables(): Promise<EmbeddedDynamoDb & { documentClient: ReturnType<typeof createDocumentClient> }> {
  const dynamo = await startTestDynamoDb();
  await createTables(dynamo.client);
  return { ...dynamo, documentClient: createDocumentClient(dynamo.client) };
}
