import { execFileSync } from 'node:child_process';
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_FILE, readJsonFile } from './files';

/**
 * The file that says which process serves from a data folder: `{"pid", "started", "command"}`.
 * Two local services on one folder would share its embedded DynamoDB files, which one process at
 * a time may open (the second died with an uncaught `Database is closed`).
 *
 * A process id alone does not name a process: after `kill -9` in a container, the next start
 * may get the same pid (the first process of a fresh PID namespace always does) and see
 * "itself"; elsewhere an unrelated process may get the id. So the lock also records when its
 * holder started, as the system tells it (`started`), and the holder counts as running only
 * while a process with that id and that start time exists.
 */
export const LOCK_FILE = 'runtime.lock';

/** Another live process serves from the data folder. */
export class AlreadyRunningError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    /** The API base URL it serves, once it listens (from its runtime.json). */
    readonly baseUrl: string | undefined,
    /** Its command line, as it recorded it. */
    readonly command?: string,
  ) {
    super(`the local service already runs on ${dataDir} (pid ${pid}${command ? `, ${command}` : ''}, ${baseUrl ?? 'still starting'})`);
    this.name = 'AlreadyRunningError';
  }
}

/** Who holds a lock, as its holder wrote it. */
export interface LockHolder {
  pid: number;
  /** When the process started, as the system tells it; absent in a lock from before it was recorded. */
  started?: string;
  command?: string;
}

/**
 * Claims `dataDir` for this process, or throws {@link AlreadyRunningError} naming the process that
 * holds it and the URL it serves. The lock appears whole or not at all (a complete file is
 * hard-linked into place, which fails if one exists); a lock whose process is gone (`kill -9`, a
 * crash, a restarted container) is stale and taken over. Returns the release, which removes the
 * lock if it is still this process's.
 */
export function claimDataFolder(dataDir: string): () => void {
  const lock = join(dataDir, LOCK_FILE);
  const candidate = join(dataDir, `.${LOCK_FILE}.${process.pid}.${Date.now()}`);
  const self = currentProcess();
  writeFileSync(candidate, `${JSON.stringify(self)}\n`);
  try {
    // A stale lock is removed and the claim tried again; a few rounds settle any start racing this one.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(candidate, lock);
        return () => {
          if (isSameHolder(lockHolder(lock), self)) rmSync(lock, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = lockHolder(lock);
      if (holder !== undefined && isRunning(holder, self)) throw new AlreadyRunningError(dataDir, holder.pid, baseUrlOf(dataDir, holder.pid), holder.command);
      // Stale: its process is gone (or the file is not a lock this code wrote).
      rmSync(lock, { force: true });
    }
    throw new Error(`could not claim ${dataDir}: ${lock} keeps reappearing`);
  } finally {
    rmSync(candidate, { force: true });
  }
}

/** This process as a lock names it. */
export function currentProcess(): LockHolder {
  const started = processStartTime(process.pid);
  return { pid: process.pid, ...(started === undefined ? {} : { started }), command: process.argv.join(' ').slice(0, 300) };
}

function lockHolder(lock: string): LockHolder | undefined {
  const file = readJsonFile(lock);
  const value = file.status === 'ok' ? (file.value as Partial<LockHolder> | null) : null;
  const pid = value?.pid;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
  return { pid: pid as number, started: typeof value?.started === 'string' ? value.started : undefined, command: typeof value?.command === 'string' ? value.command : undefined };
}

function isSameHolder(holder: LockHolder | undefined, self: LockHolder): boolean {
  return holder !== undefined && holder.pid === self.pid && holder.started === self.started;
}

/**
 * Whether the process a lock names still runs: a process with its id exists and started when
 * the lock says. A lock naming this process's id is this process's only if it also names this
 * process's start: otherwise it is an earlier process's that had the same id.
 */
function isRunning(holder: LockHolder, self: LockHolder): boolean {
  if (holder.pid === self.pid) return holder.started !== undefined && holder.started === self.started;
  if (!processExists(holder.pid)) return false;
  if (holder.started === undefined) return true;
  const started = processStartTime(holder.pid);
  // When the system cannot tell, the id alone decides: better refused than two on one folder.
  return started === undefined || started === holder.started;
}

/**
 * Whether a process with this id runs (signal 0 checks without sending; EPERM: it exists, as
 * another user's). A zombie, a process that has exited and waits for its parent to collect it
 * (state `Z` in `/proc/<pid>/stat`; where nothing collects them, a container without an init,
 * it stays so for good), runs no more.
 */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !['Z', 'X'].includes(processState(pid) ?? '');
}

/** The state letter of `/proc/<pid>/stat` (field 3: `R`, `S`, `Z`, ...); undefined without /proc. */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/**
 * When a process started, as a string that is the same each time it is read for one process and
 * different for another that later gets its id; undefined when the system cannot tell. Linux:
 * the boot's id and the start time in clock ticks since boot (`/proc/<pid>/stat`, field 22);
 * elsewhere `ps`'s start time.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: fields count from its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return `${bootId}/${fields[19]}`;
  } catch {
    // No /proc (macOS, BSD): ps says when the process started.
  }
  try {
    const started = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return started === '' ? undefined : started;
  } catch {
    return undefined;
  }
}

/** The URL the holder serves, from the runtime.json it wrote once listening. */
function baseUrlOf(dataDir: string, pid: number): string | undefined {
  const file = readJsonFile(join(dataDir, RUNTIME_FILE));
  const runtime = file.status === 'ok' ? (file.value as { pid?: unknown; baseUrl?: unknown } | null) : null;
  return runtime?.pid === pid && typeof runtime.baseUrl === 'string' ? runtime.baseUrl : undefined;
}
