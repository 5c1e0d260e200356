import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlreadyRunningError, LOCK_FILE, claimDataFolder } from '../../local/instance-lock';

/** One local service per data folder (local/instance-lock.ts). */
describe('claiming a data folder', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'modelgate-lock-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** The id of a process that has exited. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

  it('claims a free folder, refuses a second claim naming the holder and its URL, and frees it on release', () => {
    const release = claimDataFolder(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'))).toEqual({ pid: process.pid });
    writeFileSync(join(dataDir, 'runtime.json'), JSON.stringify({ pid: process.pid, baseUrl: 'http://127.0.0.1:8787/api/v1' }));
    let refusal: unknown;
    try {
      claimDataFolder(dataDir);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AlreadyRunningError);
    expect(refusal).toMatchObject({ dataDir, pid: process.pid, baseUrl: 'http://127.0.0.1:8787/api/v1' });
    release();
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
    claimDataFolder(dataDir)();
  });

  it('says "still starting" while the holder has written no runtime.json of its own', () => {
    writeFileSync(join(dataDir, 'runtime.json'), JSON.stringify({ pid: deadPid(), baseUrl: 'http://127.0.0.1:1/api/v1' }));
    const release = claimDataFolder(dataDir);
    expect(() => claimDataFolder(dataDir)).toThrow(`the local service already runs on ${dataDir} (pid ${process.pid}, still starting)`);
    release();
  });

  it.each([
    ['the process that held it is gone (kill -9)', () => JSON.stringify({ pid: deadPid() })],
    ['it is not a lock (damaged)', () => '{"pid":'],
  ])('takes over a lock when %s', (_case, content) => {
    writeFileSync(join(dataDir, LOCK_FILE), content());
    const release = claimDataFolder(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'))).toEqual({ pid: process.pid });
    release();
  });
});
