import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { OperationError, UsageError } from '../../ops/errors';
import { runOps } from '../../ops/run';
import { LOCAL_NOT_RUNNING, connectLocal, connectTarget } from '../../ops/target';
import { startTestDynamoDb } from '../support/dynamodb-local';
import { startEmbeddedTables } from '../support/embedded-tables';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ops target selection', () => {
  let dir: string;
  const writeRuntime = (dynamoEndpoint: string) =>
    writeFileSync(join(dir, 'runtime.json'), JSON.stringify({ dynamoEndpoint, baseUrl: 'http://127.0.0.1:1/api/v1', pid: 1 }));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'modelgate-ops-target-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('without runtime.json the local service is reported as not running', async () => {
    await expect(connectLocal(dir)).rejects.toEqual(
      new OperationError(`${LOCAL_NOT_RUNNING} (${join(dir, 'runtime.json')} does not exist)`),
    );
  });

  it('a runtime.json whose endpoint does not answer is reported as not running, exit 1', async () => {
    const port = await closedPort();
    writeRuntime(`http://127.0.0.1:${port}`);
    const err = jest.fn();

    const code = await runOps(['org', 'list', '--data-dir', dir], { out: jest.fn(), err }, (flags) => connectTarget(flags, {}));

    expect(code).toBe(1);
    expect(err.mock.calls).toEqual([
      [
        `error: the local service is not running: start it with npm start (nothing answers at http://127.0.0.1:${port}, named in ${join(dir, 'runtime.json')})`,
      ],
    ]);
  });

  it('a DynamoDB without the service tables is named as such', async () => {
    const dynamo = await startTestDynamoDb();
    try {
      writeRuntime(dynamo.endpoint);
      await expect(connectLocal(dir)).rejects.toEqual(
        new OperationError(`the DynamoDB at ${dynamo.endpoint} has no modelgate-keys table: is it the modelgate local service?`),
      );
    } finally {
      await dynamo.stop();
    }
  });

  it('connects to the DynamoDB runtime.json names, with the local table names', async () => {
    const tables = await startEmbeddedTables();
    try {
      writeRuntime(tables.endpoint);
      const out = jest.fn();

      const created = await runOps(['org', 'create', '--name', 'Acme', '--plan', 'free', '--json', '--data-dir', dir], { out, err: jest.fn() }, (flags) =>
        connectTarget(flags, {}),
      );

      expect(created).toBe(0);
      const id = JSON.parse(out.mock.calls[0][0]).data.id;
      const stored = await tables.documentClient.send(new GetCommand({ TableName: 'modelgate-keys', Key: { pk: `ORG#${id}`, sk: 'ORG' } }));
      expect(stored.Item).toMatchObject({ name: 'Acme', plan: 'free' });
    } finally {
      await tables.stop();
    }
  });

  it('--aws, or KEYS_TABLE/MODELS_TABLE without --data-dir, selects a deployed stack, which needs both variables', async () => {
    await expect(connectTarget({ json: false, aws: true }, {})).rejects.toEqual(
      new UsageError(
        'a deployed stack needs KEYS_TABLE and MODELS_TABLE (the stack outputs KeysTableName and ModelsTableName); missing: KEYS_TABLE, MODELS_TABLE',
      ),
    );
    await expect(connectTarget({ json: false, aws: false }, { KEYS_TABLE: 'k' })).rejects.toEqual(
      new UsageError(
        'a deployed stack needs KEYS_TABLE and MODELS_TABLE (the stack outputs KeysTableName and ModelsTableName); missing: MODELS_TABLE',
      ),
    );
    await expect(connectTarget({ json: false, aws: true, dataDir: dir }, {})).rejects.toEqual(
      new UsageError('--aws and --data-dir exclude each other'),
    );
  });

  it('MODELGATE_DATA_DIR names the local data folder, as for npm start and npm run demo; --data-dir wins over it', async () => {
    const runtimeFile = join(dir, 'runtime.json');
    await expect(connectTarget({ json: false, aws: false }, { MODELGATE_DATA_DIR: dir })).rejects.toEqual(new OperationError(`${LOCAL_NOT_RUNNING} (${runtimeFile} does not exist)`));
    // It names the local service even when the table variables are set, as --data-dir does.
    await expect(connectTarget({ json: false, aws: false }, { MODELGATE_DATA_DIR: dir, KEYS_TABLE: 'k', MODELS_TABLE: 'm' })).rejects.toEqual(
      new OperationError(`${LOCAL_NOT_RUNNING} (${runtimeFile} does not exist)`),
    );
    const other = join(dir, 'other');
    await expect(connectTarget({ json: false, aws: false, dataDir: other }, { MODELGATE_DATA_DIR: dir })).rejects.toEqual(
      new OperationError(`${LOCAL_NOT_RUNNING} (${join(other, 'runtime.json')} does not exist)`),
    );
  });

  it('--data-dir selects the local runtime even when the table variables are set', async () => {
    await expect(connectTarget({ json: false, aws: false, dataDir: dir }, { KEYS_TABLE: 'k', MODELS_TABLE: 'm' })).rejects.toEqual(
      new OperationError(`${LOCAL_NOT_RUNNING} (${join(dir, 'runtime.json')} does not exist)`),
    );
  });

  it('a deployed stack is reached with the default credential chain and the tables the variables name', async () => {
    const tables = await startEmbeddedTables();
    const saved = { ...process.env };
    // The default chain reads the endpoint, region and credentials from the environment.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: tables.endpoint,
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    try {
      const out = jest.fn();
      const env = { KEYS_TABLE: 'modelgate-keys', MODELS_TABLE: 'modelgate-models' };

      const code = await runOps(['catalog', 'list', '--aws'], { out, err: jest.fn() }, (flags) => connectTarget(flags, env));

      expect(code).toBe(0);
      expect(out.mock.calls).toEqual([['The catalog is empty.']]);
    } finally {
      process.env = saved;
      await tables.stop();
    }
  });
});
