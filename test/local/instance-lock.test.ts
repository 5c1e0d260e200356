import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlreadyRunningError, LOCK_FILE, claimDataFolder, currentProcess, processStartTime, processState } from '../../local/instance-lock';
import { eventually } from '../support/eventually';

/** One local service per data folder (local/instance-lock.ts). */
describe('claiming a data folder', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'modelgate-lock-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** The id of a process that has exited. */
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

  it('claims a free folder, refuses a second claim naming the holder and its URL, and frees it on release', () => {
    const release = claimDataFolder(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'))).toEqual({ pid: process.pid, started: expect.any(String), command: process.argv.join(' ').slice(0, 300) });
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
    expect(() => claimDataFolder(dataDir)).toThrow(`the local service already runs on ${dataDir} (pid ${process.pid}, ${currentProcess().command}, still starting)`);
    release();
  });

  it.each([
    ['the process that held it is gone (kill -9)', () => JSON.stringify({ pid: deadPid(), started: 'x/1' })],
    ['it is not a lock (damaged)', () => '{"pid":'],
    // A container restarted after kill -9: its first process gets the pid the lock names again.
    ['it names this process id with another start (a restarted container)', () => JSON.stringify({ pid: process.pid, started: 'an-earlier-boot/12345', command: 'node local/start.ts' })],
    ['it names this process id and no start (written before starts were recorded)', () => JSON.stringify({ pid: process.pid })],
  ])('takes over a lock when %s', (_case, content) => {
    writeFileSync(join(dataDir, LOCK_FILE), content());
    const release = claimDataFolder(dataDir);
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'))).toEqual(currentProcess());
    release();
  });

  describe('a lock naming another running process', () => {
    let other: ReturnType<typeof spawn>;
    beforeAll(async () => {
      // A process that lives until killed, and says when it is up.
      other = spawn(process.execPath, ['-e', 'process.stdout.write("up"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
      await new Promise((resolve) => other.stdout!.once('data', resolve));
    });
    afterAll(() => {
      other.kill();
    });

    it('is refused while that process is the one that wrote it: same id, same start', () => {
      writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: other.pid, started: processStartTime(other.pid!), command: 'node local/start.ts' }));
      expect(() => claimDataFolder(dataDir)).toThrow(`the local service already runs on ${dataDir} (pid ${other.pid}, node local/start.ts, still starting)`);
    });

    it('is taken over when that process only has the id the holder had (another start)', () => {
      writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: other.pid, started: 'an-earlier-boot/12345', command: 'node local/start.ts' }));
      claimDataFolder(dataDir)();
    });

    it('is taken over when that process is a zombie its parent never collects, as after kill -9 in a container without an init', async () => {
      // The shell's background child exits; its parent, the shell turned into a sleep, never waits for it.
      const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
      try {
        const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (data: Buffer) => resolve(data.toString().trim()))));
        const started = processStartTime(pid);
        await eventually(async () => expect(processState(pid)).toBe('Z'));
        writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid, started, command: 'node local/start.ts' }));
        claimDataFolder(dataDir)();
      } finally {
        parent.kill();
      }
    });
  });
});
