import { join } from 'node:path';
import { quietSdkNodeNotice } from './sdk-node-notice';
import { localRuntimeOptionsFromEnvironment } from './environment';
import { AlreadyRunningError } from './instance-lock';
import { startLocalRuntime } from './runtime';

/**
 * `npm start`: the local service on http://127.0.0.1:8787/api/v1, configured by the environment
 * variables local/environment.ts reads (`PORT`, `MODELGATE_DATA_DIR`, ...).
 */
async function main(): Promise<void> {
  quietSdkNodeNotice();
  const options = localRuntimeOptionsFromEnvironment(process.env);
  // Handlers first: demo.json (the ready signal) is written inside startLocalRuntime, and a
  // Ctrl-C right after it must stop the runtime cleanly rather than kill the process.
  let stopping: string | undefined;
  let runtime: Awaited<ReturnType<typeof startLocalRuntime>> | undefined;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = signal;
    if (!runtime) return; // still starting: stopped as soon as the start completes
    console.log(`\n${signal}: stopping`);
    await runtime.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  runtime = await startLocalRuntime(options);
  if (stopping) {
    console.log(`\n${stopping}: stopping`);
    await runtime.stop();
    process.exit(0);
  }
  console.log(`modelgate listening on ${runtime.baseUrl}`);
  console.log(`demo organization and keys: ${options.dataDir}/demo.json`);
  const demoFile = join(runtime.dataDir, 'demo.json');
  console.log(`try: curl -H "Authorization: Bearer $(node -p "require('${demoFile}').keys.workspace")" ${runtime.baseUrl}/models/user?limit=3`);
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
