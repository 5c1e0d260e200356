import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ALL_TABLES, type TableSchema } from '../lambdas/aws/table-schemas';

/** Creates the service's tables in the embedded DynamoDB from the schema module the stack uses. */
export async function createTables(client: DynamoDBClient, tables: readonly TableSchema[] = ALL_TABLES): Promise<void> {
  for (const table of tables) {
    const exists = await client.send(new DescribeTableCommand({ TableName: table.localName })).then(
      () => true,
      (error: { name?: string }) => {
        if (error.name === 'ResourceNotFoundException') return false;
        throw error;
      },
    );
    if (!exists) await client.send(new CreateTableCommand(createTableInput(table)));
    await waitUntilActive(client, table.localName);
  }
}

function createTableInput(table: TableSchema) {
  const attributes = new Set([table.partitionKey, ...(table.sortKey ? [table.sortKey] : [])]);
  for (const index of table.globalIndexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  return {
    TableName: table.localName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: table.partitionKey, KeyType: 'HASH' as const },
      ...(table.sortKey ? [{ AttributeName: table.sortKey, KeyType: 'RANGE' as const }] : []),
    ],
    GlobalSecondaryIndexes:
      table.globalIndexes.length > 0
        ? table.globalIndexes.map((index) => ({
            IndexName: index.indexName,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
              { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
            ],
            Projection: { ProjectionType: 'ALL' as const },
          }))
        : undefined,
  };
}

async function waitUntilActive(client: DynamoDBClient, name: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Table ${name} did not become ACTIVE`);
}
