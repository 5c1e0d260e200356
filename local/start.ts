import { startLocalRuntime } from './runtime';

/**
 * `npm start`: the local service on http://127.0.0.1:8787/api/v1. `PORT` overrides the port
 * and `MODELGATE_DATA_DIR` the data folder (`.local`).
 */
async function main(): Promise<void> {
  const port = process.env.PORT ? Number(process.env.PORT) : 8787;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number, got "${process.env.PORT}"`);
  const starting = startLocalRuntime({ port, dataDir: process.env.MODELGATE_DATA_DIR || '.local' });

  // Installed before the service is up: demo.json tells a client the service is ready, and a
  // Ctrl-C right after must stop it cleanly, not kill it mid-write.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping`);
    await (await starting.catch(() => undefined))?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const runtime = await starting;
  console.log(`modelgate listening on ${runtime.baseUrl}`);
  console.log(`demo organization and keys: ${process.env.MODELGATE_DATA_DIR || '.local'}/demo.json`);
  console.log(`try: curl -H "Authorization: Bearer $(node -p "require('./.local/demo.json').keys.workspace")" ${runtime.baseUrl}/models/user?limit=3`);
}

main().catch((error: Error) => {
  console.error(`modelgate failed to start: ${error.message}`);
  process.exit(1);
});
