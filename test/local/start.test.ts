import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { followStart } from '../support/local-process';

const ROOT = join(__dirname, '..', '..');
/** The command `npm start` runs (package.json), word by word. */
const START: string[] = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start.split(' ');
/** Its node arguments, after `exec node`. */
const NODE_ARGUMENTS = START.slice(2);

/** `npm start` as a user runs it: a child process, stopped with Ctrl-C (SIGINT). */
describe('npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-start-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs node itself in place of the shell npm starts (exec), tsx its loader, so no process stands between a signal and the service', () => {
    expect(START.slice(0, 4)).toEqual(['exec', 'node', '--import', 'tsx']);
  });

  /**
   * The command of `npm start` on the suite's data folder, its output collected, in a process
   * group of its own as a terminal's foreground job is (npm itself is left out: it reports a
   * Ctrl-C as its own exit by signal, whatever the service's status).
   */
  function start() {
    const child = spawn(process.execPath, NODE_ARGUMENTS, {
      cwd: ROOT,
      detached: true,
      // Without the jest configuration's silencing of the AWS SDK's Node.js notice: npm start's own applies.
      env: { ...process.env, PORT: '0', MODELGATE_DATA_DIR: dataDir, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = {
      child,
      output: '',
      exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))),
      /** True once the service printed its hints (after writing demo.json), false if it exited first. */
      ready: undefined as unknown as Promise<boolean>,
    };
    run.ready = followStart(run, run.exited);
    return run;
  }

  /** Ctrl-C in a terminal: SIGINT to every process of the foreground job. */
  const ctrlC = (run: ReturnType<typeof start>) => process.kill(-run.child.pid!, 'SIGINT');

  async function runOnce(
    whileServing: (demo: { baseUrl: string }) => Promise<void> = async () => undefined,
  ): Promise<{ demo: { baseUrl: string; organizationId: string; keys: Record<string, string> }; exitCode: number | null; output: string }> {
    const run = start();
    if (!(await run.ready)) throw new Error(`npm start did not start:\n${run.output}`);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    const response = await fetch(`${demo.baseUrl}/models/user?limit=1`, { headers: { Authorization: `Bearer ${demo.keys.workspace}` } });
    expect(response.status).toBe(200);
    await whileServing(demo);
    ctrlC(run);
    const exitCode = await run.exited;
    return { demo, exitCode, output: run.output };
  }

  it('serves, writes demo.json when ready, stops cleanly on Ctrl-C, and keeps its data across restarts', async () => {
    const first = await runOnce();
    expect(first.exitCode).toBe(0);
    // What describes a running instance goes with it; the demo credentials stay for the next start.
    expect(['demo.json', 'runtime.json', 'runtime.lock'].filter((file) => existsSync(join(dataDir, file)))).toEqual([]);
    expect(first.output).toContain(`modelgate listening on ${first.demo.baseUrl}`);
    expect(first.output).toContain('SIGINT: stopping');
    // The hints name the data folder MODELGATE_DATA_DIR gave, not the default one.
    expect(first.output).toContain(`demo organization and keys: ${dataDir}/demo.json`);
    expect(first.output).toContain(`try: curl -H "Authorization: Bearer $(node -p "require('${join(dataDir, 'demo.json')}').keys.workspace")" ${first.demo.baseUrl}/models/user?limit=3`);
    expect(first.output).not.toContain('.local/demo.json');
    // The AWS SDK's notice about the local Node.js says nothing about the service (Lambda runs Node.js 24).
    expect(first.output).not.toContain('NodeVersionSupportWarning');

    const second = await runOnce();
    expect(second.exitCode).toBe(0);
    expect(second.demo.organizationId).toBe(first.demo.organizationId);
    expect(second.demo.keys).toEqual(first.demo.keys);
  }, 120_000);

  it('refuses a second start on the same data folder, naming the running one, and leaves it serving', async () => {
    let second: { exitCode: number | null; output: string } | undefined;
    let pid: number | undefined;
    const first = await runOnce(async (demo) => {
      pid = JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')).pid;
      const run = start();
      second = { exitCode: await run.exited, output: run.output };
      const still = await fetch(`${demo.baseUrl}/openapi.json`);
      expect(still.status).toBe(200);
    });
    expect(second!.exitCode).toBe(1);
    // The holder by pid and command line (its start time names it in the lock).
    expect(second!.output).toMatch(
      new RegExp(`modelgate already runs on ${escape(dataDir)} \\(pid ${pid}, [^\\n]*local/start\\.ts, at ${escape(first.demo.baseUrl)}\\): stop it first \\(Ctrl-C where it runs, or kill ${pid}\\), or set MODELGATE_DATA_DIR to another folder`),
    );
    expect(second!.output).not.toMatch(/Database is closed|\n\s+at /);
    expect(first.exitCode).toBe(0);
  }, 120_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
