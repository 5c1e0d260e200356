import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DemoCredentials } from '../../local/seed';

const ROOT = join(__dirname, '..', '..');

/** `npm start` as its own process, for tests that `kill -9` it. */
export interface LocalProcess extends DemoCredentials {
  /** Everything the process wrote to standard output and error so far. */
  output(): string;
  /** `kill -9`, resolved once the process is gone. */
  killHard(): Promise<void>;
  /** Signals the process as a supervisor would; resolves with its exit code once it is gone. */
  signal(name: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts the local service on `dataDir` (any free port), with `env` over the test's environment,
 * and resolves once it is ready (its demo.json written by this start, its hints printed).
 */
export async function startLocalProcess(dataDir: string, env: Readonly<Record<string, string>> = {}): Promise<LocalProcess> {
  // node itself with tsx as a loader: the tsx command would run the service in a child
  // process of its own, which a SIGKILL of the command does not reach.
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', '--require', './local/esm-only-packages.cjs', 'local/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', MODELGATE_DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let code: number | null = null;
  const exited = new Promise<void>((resolve) => child.once('exit', (status) => resolve(void (code = status))));
  let gone = false;
  void exited.then(() => (gone = true));
  // Ready once it prints its hints, after writing demo.json; not if it exits first, or hangs.
  const ready = await new Promise<boolean>((resolve) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\ntry: curl')) resolve(true);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    void exited.then(() => resolve(false));
    setTimeout(() => resolve(false), 60_000).unref();
  });
  if (!ready) {
    child.kill('SIGKILL');
    throw new Error(`the local service did not start:\n${output}`);
  }
  const demoFile = join(dataDir, 'demo.json');
  return {
    ...(JSON.parse(readFileSync(demoFile, 'utf8')) as DemoCredentials),
    output: () => output,
    async killHard() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    async signal(name) {
      if (!gone) child.kill(name);
      await exited;
      return code;
    },
  };
}

/**
 * Collects what a started service prints into `run.output`, and resolves true once it printed
 * its hints (ready, demo.json written), false if `ended` settles first.
 */
export function followStart(run: { child: ChildProcess; output: string }, ended: Promise<unknown>): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const collect = (chunk: Buffer) => {
      run.output += chunk.toString();
      if (run.output.includes('\ntry: curl')) resolve(true);
    };
    run.child.stdout!.on('data', collect);
    run.child.stderr!.on('data', collect);
    void ended.then(() => resolve(false));
  });
}
