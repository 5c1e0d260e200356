import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import { randomId, systemClock, type Clock, type Random } from '../lambdas/clock';
import { settingsFromEnvironment } from '../lambdas/config';
import { DEFAULT_SETTINGS, DEVELOPMENT_PROVIDER, SETTINGS, settingsEnvironment, type EnvironmentSettingName, type SettingName, type Settings } from '../lambdas/settings';
import { createIssuerKeySource } from '../lambdas/federation/issuer-keys';
import { createCatalogHandler } from '../lambdas/functions/catalog/handler';
import { createInferenceHandler } from '../lambdas/functions/inference/handler';
import { createJwksHandler } from '../lambdas/functions/jwks/handler';
import { createManagementHandler } from '../lambdas/functions/management/handler';
import { createSettingsPageHandler } from '../lambdas/functions/settings-page/handler';
import { createTokenExchangeHandler } from '../lambdas/functions/token-exchange/handler';
import { fileCredentials } from '../lambdas/inference/provider-credentials';
import { createTelemetry, SERVICE_NAME, type Telemetry } from '../lambdas/observability/telemetry';
import { API_BASE_PATH, type FunctionId } from '../lambdas/routes';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { LOCAL_KEY_REF_PREFIX, signerForRecord } from '../lambdas/wiring/signer-for-record';
import { registerDeployedSigningKey } from '../lambdas/signing/signing-key-registry';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { DynamoCatalogStore } from '../lambdas/aws/dynamo-catalog-store';
import { createDocumentClient, createDynamoDbClient } from '../lambdas/aws/dynamo-client';
import { DynamoSigningKeyStore } from '../lambdas/aws/dynamo-signing-key-store';
import { DynamoUsageFold } from '../lambdas/aws/dynamo-usage-fold';
import { rollUpUsage, type RollupSummary } from '../lambdas/usage/rollup';
import { TABLE_SCHEMAS, type TableId } from '../lambdas/aws/table-schemas';
import { catalogDependencies } from '../lambdas/functions/catalog/dependencies';
import type { FunctionContext } from '../lambdas/wiring/context';
import { inferenceDependencies } from '../lambdas/functions/inference/dependencies';
import { jwksDependencies } from '../lambdas/functions/jwks/dependencies';
import { managementDependencies } from '../lambdas/functions/management/dependencies';
import { tokenExchangeDependencies } from '../lambdas/functions/token-exchange/dependencies';
import { buildSettingsPage } from '../web/build';
import { ensureDevCertificateAuthority } from './dev-ca';
import { LOCAL_AWS_ENV, startEmbeddedDynamoDb, type EmbeddedDynamoDb } from './embedded-dynamodb';
import { RUNTIME_FILE, writeFileAtomically } from './files';
import { DEMO_CREDENTIALS_FILE, publishDemo, withdrawInstanceFiles } from './instance-files';
import { claimDataFolder } from './instance-lock';
import { functionCredentials, type StackFunctionId } from './function-principals';
import { createLocalApiServer, type ExchangeObserver, type FunctionHandler, type LocalApiServer } from './http-server';
import { ReadableLogger } from './readable-logger';
import { LOCAL_SIGNING_KEY_FILE } from './signing-keys';
import { reconcileIndexes } from './reconcile-indexes';
import type { Signer, SigningKeyRecord } from '../lambdas/signing/signer';
import { observeClientCalls, observeSigner, type AwsCallObserver, type CallRecording } from './aws-calls';
import { ensureDemoOrganization, seedCatalog, type DemoCredentials } from './seed';
import { createTables } from './tables';

/**
 * The settings the local runtime's functions read, under their names of the table
 * (lambdas/settings.ts); `stageName` is the runtime's own (`local`) and `apiBaseUrl` the address
 * it binds.
 */
export type LocalSettingName = Exclude<EnvironmentSettingName, 'stageName' | 'apiBaseUrl'>;

/**
 * What the local runtime sets over the table's defaults: an EU hostname that
 * resolves to this machine, a catalog that refreshes within seconds (a demo sees its own traffic
 * in the sorts), and the development provider for every model.
 */
const LOCAL_DEFAULTS: Partial<Settings> = {
  regionalHostnames: { eu: 'eu.localhost' },
  catalogCacheSeconds: 2,
  catalogReloadSpreadSeconds: 0,
  inferenceUpstreams: { '*': DEVELOPMENT_PROVIDER },
};

/**
 * Every setting defaults as in the table (lambdas/settings.ts), except `regionalHostnames`
 * (`{ eu: 'eu.localhost' }`), `catalogCacheSeconds` (2), `catalogReloadSpreadSeconds` (0: one
 * process reloads at once) and `inferenceUpstreams` (the built-in
 * development provider for every model). Settings are checked as a function checks its
 * environment in AWS: a value out of range fails the start, naming its variable.
 */
export interface LocalRuntimeOptions extends Partial<Pick<Settings, LocalSettingName>> {
  /** @default 8787 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Where keys, data and demo.json live. @default '.local' */
  dataDir?: string;
  /** Keep DynamoDB data on disk under dataDir. @default true */
  persist?: boolean;
  /** Where log lines go. @default standard error */
  log?: (line: string) => void;
  /** @default the system clock */
  clock?: Clock;
  /** Which copy of a hot item each request reads, which shard of a counter it writes. @default Math.random */
  random?: Random;
  /**
   * Accept loopback issuer and JWKS hosts, so a development identity provider on this machine
   * can be configured (`npm start` reads `MODELGATE_ALLOW_LOOPBACK_ISSUERS`, local/environment.ts).
   * @default true
   */
  allowLoopbackIssuers?: boolean;
  /** How long `stop()` (Ctrl-C) lets the requests under way finish before cutting them. @default 10,000 */
  drainMs?: number;
  /** Sees every routed request and its whole answer once sent (the test suites check them against the OpenAPI document). */
  observe?: ExchangeObserver;
  /**
   * Puts a server between the functions and the embedded DynamoDB (the test suites' IAM gate,
   * test/support/iam/): given the embedded server's endpoint, returns the one the functions'
   * clients call, which `dynamoEndpoint` reports. Start-up administration calls the embedded
   * server directly. @default none: the functions call the embedded server
   */
  interposeDynamoDb?: (endpoint: string) => Promise<InterposedDynamoDb>;
  /**
   * Starts the DynamoDB the runtime keeps its data in, empty, in place of the embedded dynalite:
   * the test suites run against AWS's DynamoDB Local with it (test/support/dynamodb-local.ts).
   * Only for a runtime that keeps no data (`persist: false`). @default the embedded dynalite
   */
  startDynamoDb?: () => Promise<EmbeddedDynamoDb>;
  /**
   * Told of every AWS call the functions make, with the request it served, and of every
   * signature (KMS `Sign` in AWS): what a request costs in round trips (local/aws-calls.ts).
   */
  observeAwsCalls?: AwsCallObserver;
  /** How often the usage rollup runs on its own; 0: only when {@link LocalRuntime.rollUpUsage} is called. @default an hour */
  usageRollupEveryMs?: number;
  /**
   * What {@link observeAwsCalls} is told of each DynamoDB call: its timing, or also the items
   * it read and wrote with their sizes (the scale model, local/scale-model.ts). @default 'timing'
   */
  awsCallRecording?: CallRecording;
}

/** A server in front of the embedded DynamoDB, see {@link LocalRuntimeOptions.interposeDynamoDb}. */
export interface InterposedDynamoDb {
  endpoint: string;
  stop(): Promise<void>;
}

export interface LocalRuntime {
  baseUrl: string;
  /** Where data, keys and the development CA live. */
  dataDir: string;
  demo: DemoCredentials;
  /** Where the functions' DynamoDB clients send requests. */
  dynamoEndpoint: string;
  /** Settles once every invocation under way has returned: a function may go on after its answer has ended, as in Lambda. */
  idle(): Promise<void>;
  /**
   * Runs the usage rollup now, as its schedule does (at start, then every hour): folds closed
   * days and rebuilds the popularity figures (lambdas/usage/rollup.ts).
   */
  rollUpUsage(): Promise<RollupSummary>;
  stop(): Promise<void>;
}

/** How often the local runtime runs the usage rollup, as the stack's schedule does. */
export const LOCAL_ROLLUP_EVERY_MS = 60 * 60 * 1000;


/** Provider API keys of the local runtime, under the data folder: `{"<provider or *>": "<key>"}`. */
export const PROVIDER_CREDENTIALS_FILE = 'provider-credentials.json';

/**
 * The local composition root, the second one beside the Lambda entries
 * (lambdas/functions/<function>/entry.ts): the embedded DynamoDB with the stack's tables, a local ES256
 * signer, the development inference provider and readable log lines. Each function's
 * dependencies are built by the same modules the Lambda entries call
 * (lambdas/functions/<function>/dependencies.ts), over its own DynamoDB client signed with its own access key id
 * (local/function-principals.ts), as in Lambda. Nothing is read from or written to
 * `process.env` (`npm start` reads its variables in local/environment.ts), so several runtimes
 * can share a process.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  // Checked before anything starts, as a function's cold start checks its environment.
  const settings = localSettings(options);
  const dataDir = resolve(options.dataDir ?? '.local');
  mkdirSync(dataDir, { recursive: true });
  const clock = options.clock ?? systemClock;
  if (options.startDynamoDb && options.persist !== false) throw new Error('startDynamoDb serves a runtime that keeps no data (persist: false)');
  // Whatever wrote to the data folder before this instant was another process, gone now.
  const writersSince = clock.now();
  // One process at a time opens the folder's database files: a second start is told who has them.
  const release = options.persist === false ? () => undefined : claimDataFolder(dataDir);
  // What an instance that did not stop left (kill -9) describes nothing that runs.
  withdrawInstanceFiles(dataDir, { starting: true });
  let dynamo: EmbeddedDynamoDb;
  try {
    dynamo = options.startDynamoDb ? await options.startDynamoDb() : await startEmbeddedDynamoDb(options.persist === false ? {} : { path: join(dataDir, 'dynamodb') });
  } catch (error) {
    release();
    throw error;
  }
  const functionClients: DynamoDBClient[] = [];
  let interposed: InterposedDynamoDb | undefined;
  try {
    // Messages for whoever started the service; log lines once it serves go to the logger.
    const warn = options.log ?? ((line: string) => console.warn(line));
    const operatorAccounts = await prepareData(dynamo, dataDir, options.persist !== false, clock, warn);

    interposed = options.interposeDynamoDb ? await options.interposeDynamoDb(dynamo.endpoint) : undefined;
    const functionsEndpoint = interposed?.endpoint ?? dynamo.endpoint;
    const { contextOf, telemetryOf } = functionContexts(functionsEndpoint, settings.logLevel, { ...options, clock, writersSince }, functionClients);

    // The handlers need the API base URL, the `iss` and `aud` of access tokens (docs/reference.md#access-tokens), known
    // once the port is bound: requests that arrive before they are built wait for them.
    let built!: { resolve: (handlers: Record<FunctionId, FunctionHandler>) => void; reject: (error: unknown) => void };
    const handlers = new Promise<Record<FunctionId, FunctionHandler>>((resolvePromise, reject) => (built = { resolve: resolvePromise, reject }));
    // A start that fails rejects it; requests waiting on it answer 500, none is left unhandled.
    handlers.catch(() => undefined);
    const server = createLocalApiServer(handlers, {
      observe: options.observe,
      scopeRequests: options.observeAwsCalls !== undefined,
      corsAllowedOrigins: settings.corsAllowedOrigins,
    });
    const baseUrl = await listen(server, options.port ?? 8787, options.host ?? '127.0.0.1');
    try {
      built.resolve(await buildHandlers(contextOf, telemetryOf, { ...settings, apiBaseUrl: baseUrl }, dataDir, options));
    } catch (error) {
      built.reject(error);
      await server.shutdown(0);
      throw error;
    }
    writeFileAtomically(join(dataDir, RUNTIME_FILE), `${JSON.stringify({ dynamoEndpoint: functionsEndpoint, baseUrl, pid: process.pid }, null, 2)}\n`);
    const demo = await ensureDemoOrganization(new AccountsService({ store: operatorAccounts, clock }), operatorAccounts, join(dataDir, DEMO_CREDENTIALS_FILE), baseUrl, warn);
    const rollup = usageRollup(contextOf('usageRollup'), clock);
    const scheduled = scheduleRollup(rollup, options.usageRollupEveryMs ?? LOCAL_ROLLUP_EVERY_MS, telemetryOf('usageRollup'));
    // Last: its presence means the service is ready to serve.
    publishDemo(dataDir, demo);

    return {
      baseUrl,
      dataDir,
      demo,
      dynamoEndpoint: functionsEndpoint,
      idle: () => server.idle(),
      rollUpUsage: rollup,
      stop: async () => {
        withdrawInstanceFiles(dataDir);
        await scheduled.stop();
        await server.shutdown(options.drainMs);
        await stopDynamoDb(dynamo, functionClients, interposed);
        release();
      },
    };
  } catch (error) {
    withdrawInstanceFiles(dataDir);
    await stopDynamoDb(dynamo, functionClients, interposed);
    release();
    throw error;
  }
}

/**
 * Each function's context, as its Lambda entry builds it: its own DynamoDB client, signed with
 * its own access key id (and observed when asked), and its telemetry on the runtime's logger.
 * The clients are added to `clients`, which the runtime destroys when it stops.
 */
function functionContexts(
  endpoint: string,
  logLevel: Settings['logLevel'],
  options: Pick<LocalRuntimeOptions, 'log' | 'random' | 'observeAwsCalls' | 'awsCallRecording'> & { clock: Clock; writersSince: Date },
  clients: DynamoDBClient[],
) {
  const logger = new ReadableLogger({ serviceName: SERVICE_NAME, logLevel }, options.log);
  const telemetryOf = (functionName: StackFunctionId) => createTelemetry({ functionName, logLevel, localLogger: logger });
  const contextOf = <T extends TableId>(fn: StackFunctionId): FunctionContext<T> => {
    const client = createDynamoDbClient({ endpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: functionCredentials(fn) });
    if (options.observeAwsCalls) observeClientCalls(client, fn, 'DynamoDB', options.observeAwsCalls, options.awsCallRecording);
    clients.push(client);
    const { clock, writersSince, random } = options;
    return { documentClient: createDocumentClient(client), tables: LOCAL_TABLES, clock, telemetry: telemetryOf(fn), writersSince, random };
  };
  return { contextOf, telemetryOf };
}

/** The local tables by id, named as the schema module names them locally. */
const LOCAL_TABLES = Object.freeze(
  Object.fromEntries(Object.values(TABLE_SCHEMAS).map((schema) => [schema.id, schema.localName])) as Record<TableId, string>,
);

/**
 * What a deployment and an operator do before a service serves, on the operator's client: the
 * tables, repairs after an unclean stop, the catalog seed and the signing key's registration.
 * Returns the operator's account store, which creates the demo organization once the service serves.
 */
async function prepareData(dynamo: EmbeddedDynamoDb, dataDir: string, persisted: boolean, clock: Clock, warn: (line: string) => void): Promise<DynamoAccountStore> {
  const operator = createDocumentClient(dynamo.client);
  await createTables(dynamo.client);
  if (persisted) await reconcileAfterUncleanStop(dynamo.client, warn);
  await seedCatalog(new DynamoCatalogStore(operator, LOCAL_TABLES.models));
  // The same registration path as the deploy-time registrar: a new local key becomes the
  // active signing key (a replaced key file retires the previous one), and a restart keeps a
  // key rotated in since (`signing-key rotate`) active.
  const signer = await LocalSigner.fromFile(join(dataDir, LOCAL_SIGNING_KEY_FILE));
  await registerDeployedSigningKey(
    new DynamoSigningKeyStore(operator, LOCAL_TABLES.keys),
    { kid: signer.kid, keyRef: `${LOCAL_KEY_REF_PREFIX}${LOCAL_SIGNING_KEY_FILE}`, publicJwk: signer.publicJwk },
    'created',
    clock,
  );
  return new DynamoAccountStore(operator, LOCAL_TABLES.keys);
}

const LOCAL_SETTING_NAMES = (Object.keys(SETTINGS) as SettingName[]).filter(
  (name): name is LocalSettingName => 'env' in SETTINGS[name] && name !== 'stageName' && name !== 'apiBaseUrl',
);

/**
 * The settings of the runtime's functions: the options over the runtime's defaults over the
 * table's, written to an environment record and read back by the loader the Lambda entries use
 * (lambdas/config.ts), so they are checked against the same ranges and come out in the same form.
 */
function localSettings(options: LocalRuntimeOptions): Pick<Settings, LocalSettingName> {
  const given = Object.fromEntries(LOCAL_SETTING_NAMES.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]));
  const environment = settingsEnvironment({ ...DEFAULT_SETTINGS, ...LOCAL_DEFAULTS, ...given }, LOCAL_SETTING_NAMES);
  return settingsFromEnvironment(environment, LOCAL_SETTING_NAMES);
}

/** Every function's handler, wired as its Lambda entry wires it, over the local clients and settings. */
async function buildHandlers(
  contextOf: <T extends TableId>(fn: StackFunctionId) => FunctionContext<T>,
  telemetryOf: (fn: StackFunctionId) => Telemetry,
  settings: Pick<Settings, LocalSettingName | 'apiBaseUrl'>,
  dataDir: string,
  options: LocalRuntimeOptions,
): Promise<Record<FunctionId, FunctionHandler>> {
  const clock = options.clock ?? systemClock;
  // Locally the popularity figures are read as often as the catalog: a rollup shows in the sorts within seconds.
  const catalog = { ...settings, usageFiguresSeconds: settings.catalogCacheSeconds };
  const allowLoopbackIssuers = options.allowLoopbackIssuers ?? true;
  // Identity providers on this machine present certificates from the development CA.
  const devCa = ensureDevCertificateAuthority(dataDir);
  const issuerKeys = () => createIssuerKeySource({ clock, allowLoopback: allowLoopbackIssuers, extraCaPems: [devCa.certPem] });
  return {
    catalog: createCatalogHandler(catalogDependencies(contextOf('catalog'), catalog)),
    tokenExchange: createTokenExchangeHandler(
      tokenExchangeDependencies(contextOf('tokenExchange'), {
        ...settings,
        issuerKeys: issuerKeys(),
        signerForRecord: observedSigners(signerForRecord({ localKeyDir: dataDir }), options.observeAwsCalls),
        newId: randomId,
      }),
    ),
    jwks: createJwksHandler(jwksDependencies(contextOf('jwks'), settings)),
    // One per-address budget for the token endpoint and the policy tester (docs/reference.md#oauth-errors, docs/reference.md#limits).
    management: createManagementHandler(managementDependencies(contextOf('management'), { ...settings, allowLoopbackIssuers, issuerKeys: issuerKeys() })),
    inference: createInferenceHandler(
      inferenceDependencies(contextOf('inference'), {
        ...catalog,
        credentials: fileCredentials(join(dataDir, PROVIDER_CREDENTIALS_FILE), clock),
        newId: randomId,
      }),
    ),
    // Built from the page's sources at start, with the same build the stack's bundling step runs.
    settingsPage: createSettingsPageHandler({ assets: await buildSettingsPage(), telemetry: telemetryOf('settingsPage') }),
  };
}

/** The usage rollup over the rollup function's own client, as its Lambda entry wires it. */
function usageRollup(context: FunctionContext<'keys' | 'usage'>, clock: Clock): () => Promise<RollupSummary> {
  const accounts = new DynamoAccountStore(context.documentClient, context.tables.keys);
  const folder = new DynamoUsageFold(context.documentClient, context.tables.usage);
  return () => rollUpUsage({ organizations: () => accounts.listOrganizations(), folder, clock });
}

/**
 * Runs the rollup at start and then every `everyMs` (0: never on its own), one run at a time;
 * a run that fails is logged and the next one folds what it left.
 */
function scheduleRollup(rollup: () => Promise<RollupSummary>, everyMs: number, telemetry: Telemetry): { stop(): Promise<void> } {
  if (everyMs <= 0) return { stop: async () => undefined };
  let running: Promise<void> = Promise.resolve();
  const run = () => {
    running = running.then(() =>
      rollup().then(
        (summary) => {
          if (summary.days > 0) telemetry.logger.info('usage rolled up', { ...summary });
        },
        (error: Error) => telemetry.logger.warn('usage rollup failed; the next run folds what is left', { error: error.name, detail: error.message }),
      ),
    );
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/** Binds the server; returns the API base URL it serves. */
async function listen(server: LocalApiServer, port: number, host: string): Promise<string> {
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolvePromise());
  });
  return `http://${host}:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
}

/** The embedded DynamoDB, what stands in front of it, and the functions' clients of it. */
async function stopDynamoDb(dynamo: EmbeddedDynamoDb, functionClients: readonly DynamoDBClient[], interposed: InterposedDynamoDb | undefined): Promise<void> {
  for (const client of functionClients) client.destroy();
  await interposed?.stop();
  await dynamo.stop();
}

/** Data kept from an earlier run may come from a process that was killed mid-write. */
async function reconcileAfterUncleanStop(client: Parameters<typeof reconcileIndexes>[0], warn: (line: string) => void): Promise<void> {
  const { restored, removed } = await reconcileIndexes(client);
  if (restored + removed > 0) {
    warn(`local data: repaired the listing index after an unclean stop (${restored} entries restored, ${removed} without their item removed)`);
  }
}

/** The local signer stands in for KMS: its signatures are reported as the `Sign` calls they are in AWS. */
function observedSigners(
  signerOf: (record: SigningKeyRecord) => Promise<Signer>,
  observe: AwsCallObserver | undefined,
): (record: SigningKeyRecord) => Promise<Signer> {
  if (!observe) return signerOf;
  return async (record) => observeSigner(await signerOf(record), 'tokenExchange', observe);
}
