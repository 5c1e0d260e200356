import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** `npm start` as a user runs it: a child process, stopped with Ctrl-C (SIGINT). */
describe('npm start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-start-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function runOnce(): Promise<{ demo: { baseUrl: string; organizationId: string; keys: Record<string, string> }; exitCode: number | null; output: string }> {
    const startedAt = Date.now();
    // The tsx binary directly (not through npm) so SIGINT reaches the service itself.
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), ['--require', './local/esm-only-packages.cjs', 'local/start.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', MODELGATE_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const demoFile = join(dataDir, 'demo.json');
    // demo.json is (re)written once the service is ready to serve.
    const ready = () => existsSync(demoFile) && statSync(demoFile).mtimeMs >= startedAt;
    for (let waited = 0; !ready() && waited < 60_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    const demo = JSON.parse(readFileSync(demoFile, 'utf8'));
    const response = await fetch(`${demo.baseUrl}/models/user?limit=1`, { headers: { Authorization: `Bearer ${demo.keys.workspace}` } });
    expect(response.status).toBe(200);
    child.kill('SIGINT');
    return { demo, exitCode: await exited, output };
  }

  it('serves, writes demo.json when ready, stops cleanly on Ctrl-C, and keeps its data across restarts', async () => {
    const first = await runOnce();
    expect(first.exitCode).toBe(0);
    expect(first.output).toContain(`modelgate listening on ${first.demo.baseUrl}`);
    expect(first.output).toContain('SIGINT: stopping');

    const second = await runOnce();
    expect(second.exitCode).toBe(0);
    expect(second.demo.organizationId).toBe(first.demo.organizationId);
    expect(second.demo.keys).toEqual(first.demo.keys);
  }, 120_000);
});
