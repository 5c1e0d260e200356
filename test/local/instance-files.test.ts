import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRuntime, type LocalRuntime } from '../../local/runtime';
import type { LocalRuntimeOptions } from '../../local/runtime-options';

/**
 * demo.json and runtime.json describe a running instance: there once it is ready, gone once it
 * stops, and never the previous instance's, so waiting for demo.json waits for this start and the
 * operator CLI reads the instance that runs.
 */
describe('the files that describe a running local instance', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-instance-files-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const present = () => ['demo.json', 'runtime.json', 'demo-credentials.json'].filter((file) => existsSync(join(dataDir, file)));
  const readDemo = () => JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as { baseUrl: string; organizationId: string; keys: Record<string, string> };

  /** Starts on the folder, noting which files were there while it started (once its data was ready, before it listened). */
  async function start(): Promise<{ runtime: LocalRuntime; whileStarting: string[] }> {
    let whileStarting: string[] = [];
    const options: LocalRuntimeOptions = {
      port: 0,
      dataDir,
      logLevel: 'ERROR',
      usageRollupEveryMs: 0,
      interposeDynamoDb: async (endpoint) => {
        whileStarting = present();
        return { endpoint, stop: async () => undefined };
      },
    };
    const runtime = await startLocalRuntime(options);
    return { runtime, whileStarting };
  }

  it('writes demo.json only when ready, whole, owner-only; removes it and runtime.json when it stops; keeps the credentials', async () => {
    const { runtime, whileStarting } = await start();
    expect(whileStarting).toEqual([]);
    expect(present()).toEqual(['demo.json', 'runtime.json', 'demo-credentials.json']);
    expect(readDemo().baseUrl).toBe(runtime.baseUrl);
    expect(statSync(join(dataDir, 'demo.json')).mode & 0o077).toBe(0);
    // Written through a temporary file renamed into place: none is left.
    expect(readdirSync(dataDir).filter((file) => file.endsWith('.tmp'))).toEqual([]);
    await runtime.stop();
    expect(present()).toEqual(['demo-credentials.json']);
  }, 120_000);

  it('removes what an instance that did not stop (kill -9) left before it starts, and keeps the organization', async () => {
    const { organizationId } = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8')) as { organizationId: string };
    // As a killed instance leaves them: a demo.json and a runtime.json naming what no longer answers.
    writeFileSync(join(dataDir, 'demo.json'), JSON.stringify({ baseUrl: 'http://127.0.0.1:1/api/v1', organizationId, workspaceId: 'gone', keys: {} }));
    writeFileSync(join(dataDir, 'runtime.json'), JSON.stringify({ dynamoEndpoint: 'http://127.0.0.1:1', baseUrl: 'http://127.0.0.1:1/api/v1', pid: 1 }));
    const { runtime, whileStarting } = await start();
    try {
      expect(whileStarting).toEqual(['demo-credentials.json']);
      expect(readDemo()).toMatchObject({ baseUrl: runtime.baseUrl, organizationId });
      const models = await fetch(`${runtime.baseUrl}/models/user?limit=1`, { headers: { Authorization: `Bearer ${readDemo().keys.workspace}` } });
      expect(models.status).toBe(200);
    } finally {
      await runtime.stop();
    }
  }, 120_000);

  it('takes the credentials of a demo.json from before they had a file of their own', async () => {
    const { organizationId } = JSON.parse(readFileSync(join(dataDir, 'demo-credentials.json'), 'utf8')) as { organizationId: string };
    renameSync(join(dataDir, 'demo-credentials.json'), join(dataDir, 'demo.json'));
    const { runtime } = await start();
    try {
      expect(readDemo().organizationId).toBe(organizationId);
    } finally {
      await runtime.stop();
    }
    expect(present()).toEqual(['demo-credentials.json']);
  }, 120_000);
});
