import { join } from 'node:path';
import { quietSdkNodeNotice } from './sdk-node-notice';
import { localRuntimeOptionsFromEnvironment } from './environment';
import { AlreadyRunningError } from './instance-lock';
import { startLocalRuntime } from './runtime';

/** The signals that stop the service as Ctrl-C does: a terminal's, a process manager's, a closed terminal's. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** How often the service checks, under npm, that npm still runs (see {@link whenNpmIsGone}). */
const PARENT_CHECK_MS = 500;

/**
 * `npm start`: the local service on http://127.0.0.1:8787/api/v1, configured by the environment
 * variables local/environment.ts reads (`PORT`, `MODELGATE_DATA_DIR`, ...). The script `exec`s
 * node, so the process npm started is this one: the SIGINT and SIGTERM npm forwards reach it.
 * Any of {@link STOP_SIGNALS} stops it cleanly (the requests under way drain, the data folder is
 * released), and it exits 0.
 */
async function main(): Promise<void> {
  quietSdkNodeNotice();
  const options = localRuntimeOptionsFromEnvironment(process.env);
  // Handlers first: demo.json (the ready signal) is written inside startLocalRuntime, and a
  // signal right after it must stop the runtime cleanly rather than kill the process.
  let stopping: string | undefined;
  let runtime: Awaited<ReturnType<typeof startLocalRuntime>> | undefined;
  const stop = async (signal: string) => {
    if (stopping) return; // a Ctrl-C reaches this process twice under npm: from the terminal, and forwarded
    stopping = signal;
    // The terminal may be gone (SIGHUP): a failed write of a log line must not end the stop.
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    if (!runtime) return; // still starting: stopped as soon as the start completes
    await stopRuntime(runtime, signal);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, () => void stop(signal));
  whenNpmIsGone(() => void stop('SIGHUP'));

  runtime = await startLocalRuntime(options);
  if (stopping) return stopRuntime(runtime, stopping);
  console.log(`modelgate listening on ${runtime.baseUrl}`);
  console.log(`demo organization and keys: ${options.dataDir}/demo.json`);
  const demoFile = join(runtime.dataDir, 'demo.json');
  console.log(`try: curl -H "Authorization: Bearer $(node -p "require('${demoFile}').keys.workspace")" ${runtime.baseUrl}/models/user?limit=3`);
}

/** Drains and stops the runtime, then exits: 0, or 1 when the stop itself failed. */
async function stopRuntime(runtime: Awaited<ReturnType<typeof startLocalRuntime>>, signal: string): Promise<void> {
  console.log(`\n${signal}: stopping`);
  try {
    await runtime.stop();
  } catch (error) {
    console.error(`modelgate did not stop cleanly: ${(error as Error).message}`);
    process.exit(1);
  }
  process.exit(0);
}

/**
 * npm forwards SIGINT and SIGTERM to the script it runs, but not SIGHUP: a SIGHUP to npm alone
 * (a process manager's reload, `kill -HUP`) kills npm and leaves this process to init, still
 * serving and holding the data folder. So, when npm started it, npm going away (this process's
 * parent changes) stops it as a SIGHUP would.
 */
function whenNpmIsGone(stop: () => void): void {
  if (process.env.npm_lifecycle_event === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, PARENT_CHECK_MS);
  timer.unref();
}

main().catch((error: Error) => {
  if (error instanceof AlreadyRunningError) {
    const where = error.baseUrl ? `at ${error.baseUrl}` : 'still starting';
    const command = error.command ? `, ${error.command}` : '';
    console.error(
      `modelgate already runs on ${error.dataDir} (pid ${error.pid}${command}, ${where}): stop it first (Ctrl-C where it runs, or kill ${error.pid}), or set MODELGATE_DATA_DIR to another folder`,
    );
  } else {
    console.error(`modelgate failed to start: ${error.message}`);
  }
  process.exit(1);
});
