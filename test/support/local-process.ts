import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DemoCredentials } from '../../local/seed';

const ROOT = join(__dirname, '..', '..');

/** `npm start` as its own process, for tests that `kill -9` it. */
export interface LocalProcess extends DemoCredentials {
  /** Everything the process wrote to standard output and error so far. */
  output(): string;
  /** `kill -9`, resolved once the process is gone. */
  killHard(): Promise<void>;
}

/**
 * Starts the local service on `dataDir` (any free port) and resolves once it is ready
 * (its demo.json written by this start).
 */
export async function startLocalProcess(dataDir: string): Promise<LocalProcess> {
  const startedAt = Date.now();
  // node itself with tsx as a loader: the tsx command would run the service in a child
  // process of its own, which a SIGKILL of the command does not reach.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', '--require', './local/esm-only-packages.cjs', 'local/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', MODELGATE_DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const demoFile = join(dataDir, 'demo.json');
  const ready = () => existsSync(demoFile) && statSync(demoFile).mtimeMs >= startedAt;
  for (let waited = 0; !ready(); waited += 100) {
    if (gone || waited >= 60_000) {
      child.kill('SIGKILL');
      throw new Error(`the local service did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    ...(JSON.parse(readFileSync(demoFile, 'utf8')) as DemoCredentials),
    output: () => output,
    async killHard() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
  };
}
