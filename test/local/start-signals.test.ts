import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { followStart } from '../support/local-process';

const ROOT = join(__dirname, '..', '..');

/**
 * `npm start` as systemd, Docker or a process manager runs it: the signal goes to the pid
 * `npm start` runs as, npm's, not to a terminal's whole process group. npm forwards SIGINT and
 * SIGTERM to its script and dies of a SIGHUP; either way the service stops as on Ctrl-C.
 */
describe('npm start, stopped by a signal to its pid', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-signals-'));
  const groups = new Set<number>();
  afterAll(() => {
    // Whatever a failed test left running: npm and the service share the group npm leads.
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** `npm start` in a process group of its own, its output collected. */
  function npmStart() {
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      detached: true,
      env: { ...process.env, PORT: '0', MODELGATE_DATA_DIR: dataDir, npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    groups.add(child.pid!);
    const run = {
      child,
      output: '',
      /** How npm ended. */
      exited: new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
      /** Once every process that held npm's output has ended: npm's and the service's. */
      closed: new Promise<void>((resolve) => child.once('close', () => resolve())),
      ready: undefined as unknown as Promise<boolean>,
    };
    run.ready = followStart(run, run.closed);
    return run;
  }

  const instanceFiles = () => ['demo.json', 'runtime.json', 'runtime.lock'].filter((file) => existsSync(join(dataDir, file)));

  it.each([
    ['SIGTERM', 'forwarded by npm'],
    ['SIGINT', 'forwarded by npm'],
    ['SIGHUP', 'of which npm dies'],
  ] as const)('%s to npm (%s) stops the service as Ctrl-C does, and the next start serves', async (signal, _how) => {
    const run = npmStart();
    if (!(await run.ready)) throw new Error(`npm start did not start:\n${run.output}`);
    const { baseUrl, pid } = JSON.parse(readFileSync(join(dataDir, 'runtime.json'), 'utf8')) as { baseUrl: string; pid: number };
    // The script execs node: npm's child is the service itself.
    expect(pid).not.toBe(run.child.pid);
    expect(execFileSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).trim()).toBe(String(run.child.pid));
    expect((await fetch(`${baseUrl}/openapi.json`)).status).toBe(200);

    process.kill(run.child.pid!, signal);
    const npm = await run.exited;
    await run.closed;
    expect(run.output).toContain(`${signal}: stopping`);
    // npm exits as its script did (0), or of the SIGHUP it does not handle.
    expect(npm).toEqual(signal === 'SIGHUP' ? { code: null, signal: 'SIGHUP' } : { code: 0, signal: null });
    expect(instanceFiles()).toEqual([]);
    await expect(fetch(`${baseUrl}/openapi.json`)).rejects.toThrow('fetch failed');
  }, 120_000);

  it('starts again on the folder the last one released, with the same demo organization', async () => {
    const credentials = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8')) as { organizationId: string };
    const run = npmStart();
    if (!(await run.ready)) throw new Error(`npm start did not start:\n${run.output}`);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as { baseUrl: string; organizationId: string; keys: { workspace: string } };
    expect(demo.organizationId).toBe(credentials.organizationId);
    const models = await fetch(`${demo.baseUrl}/models/user?limit=1`, { headers: { Authorization: `Bearer ${demo.keys.workspace}` } });
    expect(models.status).toBe(200);
    process.kill(run.child.pid!, 'SIGTERM');
    await run.closed;
    expect(instanceFiles()).toEqual([]);
  }, 120_000);
});
