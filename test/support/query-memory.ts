import { CreateTableCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { startEmbeddedDynamoDb } from '../../local/embedded-dynamodb';

/**
 * Runs `queries` DynamoDB Queries against the embedded DynamoDB through the SDK, 8 in flight, and
 * prints as JSON how much memory outside the JavaScript heap grew across them (after a warm-up,
 * each side of the measurement after a full garbage collection). Run by
 * test/local/embedded-dynamodb.test.ts in a process of its own, with `--expose-gc`.
 */
async function main(queries: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const db = await startEmbeddedDynamoDb();
  try {
    await db.client.send(
      new CreateTableCommand({
        TableName: 'queried',
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    for (let i = 0; i < 5; i++) await db.client.send(new PutItemCommand({ TableName: 'queried', Item: { pk: { S: 'p' }, sk: { S: `s${i}` } } }));
    // A page smaller than the partition, as the stores' reads often are: the query stops early.
    const query = () => db.client.send(new QueryCommand({ TableName: 'queried', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'p' } }, Limit: 2 }));
    const run = async (count: number) => {
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next++ < count) await query();
      }));
    };
    // Buffers are freed by the collections after the one that finds them unreachable: collect
    // until the figures settle, each side of the measurement.
    const settle = async () => {
      for (let i = 0; i < 4; i++) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
      }
      return process.memoryUsage();
    };
    await run(500);
    const before = await settle();
    await run(queries);
    const after = await settle();
    const grown = (key: 'rss' | 'external' | 'arrayBuffers' | 'heapUsed') => after[key] - before[key];
    process.stdout.write(JSON.stringify({ queries, external: grown('external'), arrayBuffers: grown('arrayBuffers'), rss: grown('rss'), heapUsed: grown('heapUsed') }));
  } finally {
    await db.stop();
  }
}

main(Number(process.argv[2] ?? 4000)).catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
