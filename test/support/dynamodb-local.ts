import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import { DeleteTableCommand, DynamoDBClient, paginateListTables } from '@aws-sdk/client-dynamodb';
import { localDynamoDbClient, startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';

/**
 * The DynamoDB the integration suites run against, chosen by `MODELGATE_TEST_DYNAMODB`
 * (docs/architecture.md, "The tests on AWS's DynamoDB Local"): `dynalite` (the default, the
 * embedded server `npm start` uses) or `dynamodb-local` (AWS's DynamoDB Local, which refuses
 * what DynamoDB refuses where dynalite is lenient).
 */
export type TestDynamoDb = 'dynalite' | 'dynamodb-local';

export function testDynamoDb(): TestDynamoDb {
  const chosen = process.env.MODELGATE_TEST_DYNAMODB || 'dynalite';
  if (chosen !== 'dynalite' && chosen !== 'dynamodb-local') {
    throw new Error(`MODELGATE_TEST_DYNAMODB=${chosen}: expected dynalite or dynamodb-local`);
  }
  return chosen;
}

/** An empty in-memory DynamoDB of the kind {@link testDynamoDb} names, for one test server. */
export function startTestDynamoDb(): Promise<EmbeddedDynamoDb> {
  return testDynamoDb() === 'dynamodb-local' ? startDynamoDbLocal() : startEmbeddedDynamoDb();
}

/** The jar and its native libraries, as the npm package `amplify-dynamodb-simulator` ships them. */
const EMULATOR = join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');

/** Starts on a port another process took in the moment between our probe and its bind are retried. */
const START_ATTEMPTS = 3;

/**
 * JVMs of this test file that serve no server, empty: a JVM takes seconds to start, and some
 * suites start a server for each test. jest loads modules anew for each test file, so a JVM
 * serves one file only; once the file's tests are done, none is kept.
 */
const idleJvms: Jvm[] = [];
let fileDone = false;
// jest runs a file's top-level afterAll hooks in the order declared, this one (declared on
// import) first: a server stopped by a later one stops its JVM. Outside jest (a script), the
// JVMs end with the process, as every JVM does (see WATCHDOG).
if (typeof afterAll === 'function') {
  afterAll(async () => {
    fileDone = true;
    await Promise.all(idleJvms.splice(0).map((jvm) => jvm.stop()));
  });
}

/**
 * AWS's DynamoDB Local, in memory, empty. `-sharedDb` makes one database for every caller:
 * without it each access key id and region has its own, and each function signs with its own.
 * A JVM serves one test server at a time; stopped, the server's tables are deleted and its JVM
 * kept for the test file's next server ({@link idleJvms}).
 */
export async function startDynamoDbLocal(): Promise<EmbeddedDynamoDb> {
  const jvm = idleJvms.pop() ?? (await startJvm());
  const endpoint = `http://127.0.0.1:${jvm.port}`;
  const client = localDynamoDbClient(endpoint);
  let stopped = false;
  return {
    endpoint,
    client,
    stop: async () => {
      // Twice would hand the JVM to two later servers.
      if (stopped) return;
      stopped = true;
      const emptied = await deleteTables(client).then(
        () => true,
        () => false,
      );
      client.destroy();
      if (emptied && !fileDone) idleJvms.push(jvm);
      else await jvm.stop();
    },
  };
}

async function deleteTables(client: DynamoDBClient): Promise<void> {
  for await (const page of paginateListTables({ client }, {})) {
    for (const TableName of page.TableNames ?? []) await client.send(new DeleteTableCommand({ TableName }));
  }
}

/** A JVM of DynamoDB Local on a free port. */
async function startJvm(): Promise<Jvm> {
  for (let attempt = 1; ; attempt++) {
    const jvm = spawnJvm(await freePort());
    const outcome = await startedOrFailed(jvm);
    if (outcome === 'started') return jvm;
    await jvm.stop();
    if (outcome === 'port taken' && attempt < START_ATTEMPTS) continue;
    // Java is not an npm package: .ci/run installs Debian's default-jre-headless where it is missing.
    throw new Error(`DynamoDB Local did not start (${outcome}; it runs on Java 11 or newer):\n${jvm.output()}`);
  }
}

interface Jvm {
  port: number;
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The JVM runs under a shell that lasts as long as the JVM, and beside a watcher that stops the
 * JVM once the shell's standard input, a pipe from this process, closes: when `stop` ends it,
 * and when this process ends in any way (a jest worker killed included), so no JVM outlives
 * the test process that started it.
 */
const WATCHDOG = [
  'exec 3<&0',
  '"$@" 3<&- </dev/null & jvm=$!',
  '(cat <&3 >/dev/null; kill "$jvm") >/dev/null 2>&1 &',
  'wait "$jvm"',
].join('\n');

function spawnJvm(port: number): Jvm {
  const args = [
    // A short-lived test server: the quick compiler and a small heap start it fastest.
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    '-Xmx512m',
    // Jetty says when its connector listens: the sign the server is ready, on our port.
    '-Dorg.eclipse.jetty.server.AbstractConnector.LEVEL=INFO',
    `-Djava.library.path=${join(EMULATOR, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(EMULATOR, 'DynamoDBLocal.jar'),
    '-inMemory',
    '-sharedDb',
    '-disableTelemetry',
    '-port',
    String(port),
  ];
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'dynamodb-local', 'java', ...args], { cwd: EMULATOR, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // A spawn that fails (no shell) is reported by `startedOrFailed`; stdin errors once the shell is gone are moot.
  child.on('error', () => undefined);
  child.stdin!.on('error', () => undefined);
  return {
    port,
    process: child,
    output: () => output,
    stop: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}

type StartOutcome = 'started' | 'port taken' | 'exited' | 'timed out';

/** Waits for Jetty's "Started ServerConnector", a failed bind, the JVM's exit, or a minute. */
function startedOrFailed(jvm: Jvm): Promise<StartOutcome> {
  return new Promise((resolve) => {
    const settle = (outcome: StartOutcome) => {
      clearTimeout(timer);
      jvm.process.stdout!.off('data', check);
      jvm.process.stderr!.off('data', check);
      resolve(outcome);
    };
    const check = () => {
      const output = jvm.output();
      // The JVM does not exit when its bind fails: the caller stops it.
      if (/Failed to bind|Address already in use/.test(output)) settle('port taken');
      else if (/Started ServerConnector@/.test(output)) settle('started');
    };
    // A loaded machine starts a JVM in seconds; a minute means it will not.
    const timer = setTimeout(() => settle('timed out'), 60_000);
    jvm.process.stdout!.on('data', check);
    jvm.process.stderr!.on('data', check);
    jvm.process.once('close', () => settle('exited'));
  });
}

/** A port free on every interface (DynamoDB Local binds them all), as the kernel picks one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
