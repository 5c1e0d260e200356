import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import { systemClock } from '../lambdas/clock';
import { API_BASE_PATH, type FunctionId } from '../lambdas/routes';
import type { RollupSummary } from '../lambdas/usage/rollup';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from './embedded-dynamodb';
import { RUNTIME_FILE, writeFileAtomically } from './files';
import { buildHandlers, functionContexts } from './function-wiring';
import { createLocalApiServer, type FunctionHandler, type LocalApiServer } from './http-server';
import { DEMO_CREDENTIALS_FILE, publishDemo, withdrawInstanceFiles } from './instance-files';
import { claimDataFolder } from './instance-lock';
import { prepareData, stopDynamoDb } from './runtime-data';
import { localSettings, type InterposedDynamoDb, type LocalRuntimeOptions } from './runtime-options';
import { ensureDemoOrganization, type DemoCredentials } from './seed';
import { LOCAL_ROLLUP_EVERY_MS, startRollup } from './usage-rollup';

/** A running local runtime: where it serves, its demo credentials, and how to stop it. */
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
    // The upstreams too: `ops upstreams check` reports what this runtime routes.
    writeFileAtomically(join(dataDir, RUNTIME_FILE), `${JSON.stringify({ dynamoEndpoint: functionsEndpoint, baseUrl, pid: process.pid, inferenceUpstreams: settings.inferenceUpstreams }, null, 2)}\n`);
    const demo = await ensureDemoOrganization(new AccountsService({ store: operatorAccounts, clock }), operatorAccounts, join(dataDir, DEMO_CREDENTIALS_FILE), baseUrl, warn);
    // Ready once the run at start has recorded what an earlier process left open: every view agrees from the first request.
    const rollup = await startRollup(contextOf('usageRollup'), clock, { everyMs: options.usageRollupEveryMs ?? LOCAL_ROLLUP_EVERY_MS, kept: options.persist !== false }, telemetryOf('usageRollup'));
    // Last: its presence means the service is ready to serve.
    publishDemo(dataDir, demo);

    return {
      baseUrl,
      dataDir,
      demo,
      dynamoEndpoint: functionsEndpoint,
      idle: () => server.idle(),
      rollUpUsage: rollup.rollUp,
      stop: async () => {
        withdrawInstanceFiles(dataDir);
        await rollup.stop();
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

/** Binds the server; returns the API base URL it serves. */
async function listen(server: LocalApiServer, port: number, host: string): Promise<string> {
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolvePromise());
  });
  return `http://${host}:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
}
