import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { LOCAL_AWS_ENV, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { createTables } from '../../local/tables';
import { startDynamoDbLocal, testDynamoDb } from './dynamodb-local';
import { eventually } from './eventually';

// Where the suites run on DynamoDB Local (MODELGATE_TEST_DYNAMODB=dynamodb-local), the only
// runs that need Java.
const describeOnDynamoDbLocal = testDynamoDb() === 'dynamodb-local' ? describe : describe.skip;

// A server this file stops in a top-level afterAll, which jest runs after the one
// ./dynamodb-local.ts declared on import: its JVM ends with it, none is kept for a server to come.
if (testDynamoDb() === 'dynamodb-local') {
  let lastServer: EmbeddedDynamoDb;
  beforeAll(async () => {
    lastServer = await startDynamoDbLocal();
  });
  afterAll(async () => {
    await lastServer.stop();
    expect(await accepts(Number(new URL(lastServer.endpoint).port))).toBe(false);
  });
}

describeOnDynamoDbLocal('DynamoDB Local for the test suites', () => {
  it("is AWS's DynamoDB Local: its tables' ARNs name its own region, ddblocal", async () => {
    const dynamo = await startDynamoDbLocal();
    try {
      await createTables(dynamo.client);
      const { Table } = await dynamo.client.send(new DescribeTableCommand({ TableName: TABLE_SCHEMAS.keys.localName }));
      expect(Table?.TableArn).toMatch(/^arn:aws:dynamodb:ddblocal:/);
    } finally {
      await dynamo.stop();
    }
  });

  it('serves every caller one database, whatever its access key id (as functions sign with their own)', async () => {
    const dynamo = await startDynamoDbLocal();
    const asFunction = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: LOCAL_AWS_ENV.AWS_REGION,
      credentials: { accessKeyId: 'Catalog', secretAccessKey: 'local' },
    });
    try {
      await createTables(dynamo.client);
      const { TableNames } = await asFunction.send(new ListTablesCommand({}));
      expect(TableNames).toContain(TABLE_SCHEMAS.keys.localName);
    } finally {
      asFunction.destroy();
      await dynamo.stop();
    }
  });

  it("starts each server empty, where the test file's earlier server had tables", async () => {
    const first = await startDynamoDbLocal();
    await createTables(first.client);
    await first.stop();
    const second = await startDynamoDbLocal();
    try {
      expect((await second.client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it('ends with the process that started it, a killed one too', async () => {
    const script = "require('./test/support/dynamodb-local.ts').startDynamoDbLocal().then((dynamo) => console.log(dynamo.endpoint))";
    const owner = spawn(process.execPath, ['--import', 'tsx', '--eval', script], { cwd: join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(owner.stdout!, 'data')) as [Buffer];
    const { port } = new URL(line.toString().trim());
    await expect(accepts(Number(port))).resolves.toBe(true);

    owner.kill('SIGKILL');
    await eventually(async () => expect(await accepts(Number(port))).toBe(false), 20_000);
  });
});

/** Whether something listens on the loopback port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
