import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { createDocumentClient, createDynamoDbClient, SDK_LOGGER_MIDDLEWARE } from '../../../lambdas/aws/dynamo-client';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../../local/embedded-dynamodb';

let db: EmbeddedDynamoDb;
beforeAll(async () => {
  db = await startEmbeddedDynamoDb();
});
afterAll(() => db.stop());

const config = () => ({ endpoint: db.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
const middlewareNames = (client: { middlewareStack: { identify(): string[] } }) => client.middlewareStack.identify().map((entry) => entry.split(' ')[0]);

describe('the DynamoDB client', () => {
  it('leaves out the SDK logger middleware when no logger is given, for the document client too, and still answers', async () => {
    const client = createDynamoDbClient(config());
    expect(middlewareNames(client)).not.toContain(SDK_LOGGER_MIDDLEWARE);
    const documents = createDocumentClient(client);
    expect(middlewareNames(documents)).not.toContain(SDK_LOGGER_MIDDLEWARE);
    await expect(client.send(new ListTablesCommand({}))).resolves.toHaveProperty('TableNames');
  });

  it('keeps it, and logs through it, when a logger is given', async () => {
    const lines: unknown[] = [];
    const logger = { debug: () => undefined, info: (line: unknown) => void lines.push(line), warn: () => undefined, error: () => undefined };
    const client = createDynamoDbClient({ ...config(), logger });
    expect(middlewareNames(client)).toContain(SDK_LOGGER_MIDDLEWARE);
    await client.send(new ListTablesCommand({}));
    expect(lines).toEqual([expect.objectContaining({ commandName: 'ListTablesCommand' })]);
  });
});
