import { linkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_FILE, readJsonFile } from './files';

/**
 * The file that says which process serves from a data folder: `{"pid": <process id>}`. Two local
 * services on one folder would share its embedded DynamoDB files, which one process at a time
 * may open (the second died with an uncaught `Database is closed`).
 */
export const LOCK_FILE = 'runtime.lock';

/** Another live process serves from the data folder. */
export class AlreadyRunningError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    /** The API base URL it serves, once it listens (from its runtime.json). */
    readonly baseUrl: string | undefined,
  ) {
    super(`the local service already runs on ${dataDir} (pid ${pid}, ${baseUrl ?? 'still starting'})`);
    this.name = 'AlreadyRunningError';
  }
}

/**
 * Claims `dataDir` for this process, or throws {@link AlreadyRunningError} naming the process that
 * holds it and the URL it serves. The lock appears whole or not at all (a complete file is
 * hard-linked into place, which fails if one exists); a lock whose process is gone (`kill -9`, a
 * crash) is stale and taken over. Returns the release, which removes the lock if it is still
 * this process's.
 */
export function claimDataFolder(dataDir: string): () => void {
  const lock = join(dataDir, LOCK_FILE);
  const candidate = join(dataDir, `.${LOCK_FILE}.${process.pid}.${Date.now()}`);
  writeFileSync(candidate, `${JSON.stringify({ pid: process.pid })}\n`);
  try {
    // A stale lock is removed and the claim tried again; a few rounds settle any start racing this one.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(candidate, lock);
        return () => {
          if (lockHolder(lock) === process.pid) rmSync(lock, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = lockHolder(lock);
      if (holder !== undefined && isAlive(holder)) throw new AlreadyRunningError(dataDir, holder, baseUrlOf(dataDir, holder));
      // Stale: its process is gone (or the file is not a lock this code wrote).
      rmSync(lock, { force: true });
    }
    throw new Error(`could not claim ${dataDir}: ${lock} keeps reappearing`);
  } finally {
    rmSync(candidate, { force: true });
  }
}

function lockHolder(lock: string): number | undefined {
  const file = readJsonFile(lock);
  const pid = file.status === 'ok' ? (file.value as { pid?: unknown } | null)?.pid : undefined;
  return Number.isSafeInteger(pid) && (pid as number) > 0 ? (pid as number) : undefined;
}

/** Whether a process with this id exists (signal 0 checks without sending; EPERM: it exists, as another user's). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The URL the holder serves, from the runtime.json it wrote once listening. */
function baseUrlOf(dataDir: string, pid: number): string | undefined {
  const file = readJsonFile(join(dataDir, RUNTIME_FILE));
  const runtime = file.status === 'ok' ? (file.value as { pid?: unknown; baseUrl?: unknown } | null) : null;
  return runtime?.pid === pid && typeof runtime.baseUrl === 'string' ? runtime.baseUrl : undefined;
}
