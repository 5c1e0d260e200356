import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Where a running local runtime says its embedded DynamoDB is, for the operator CLI: a
 * constant of its own here, so the CLI finds it without loading the runtime.
 */
export const RUNTIME_FILE = 'runtime.json';

/** Provider API keys of the local runtime, under the data folder: `{"<provider or *>": "<key>"}`. */
export const PROVIDER_CREDENTIALS_FILE = 'provider-credentials.json';

/**
 * Writes a file so that readers, and a process killed at any instant (`kill -9`), see
 * either the old content or the new one, never a prefix: the content goes to a temporary
 * file in the same folder, is flushed, and is renamed over the target (rename is atomic
 * within one file system).
 */
export function writeFileAtomically(file: string, content: string, mode = 0o644): void {
  const folder = dirname(file);
  mkdirSync(folder, { recursive: true });
  const temporary = join(folder, `.${basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    const fd = openSync(temporary, 'w', mode);
    try {
      writeSync(fd, content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** What {@link readJsonFile} found. */
export type JsonFile = { status: 'missing' } | { status: 'damaged'; reason: string } | { status: 'ok'; value: unknown };

/** A JSON file read without throwing: missing, damaged (with why), or its value. */
export function readJsonFile(file: string): JsonFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return { status: 'damaged', reason: (error as Error).message };
  }
  try {
    return { status: 'ok', value: JSON.parse(text) as unknown };
  } catch (error) {
    return { status: 'damaged', reason: (error as Error).message };
  }
}
