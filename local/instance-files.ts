import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RUNTIME_FILE, writeFileAtomically } from './files';
import type { DemoCredentials } from './seed';

/**
 * `demo.json`: the demo organization's credentials and the URL they work at, there while an
 * instance serves from the data folder and only then. It is written last, once the service is
 * ready, so a script that waits for it waits for the service; removed when the service stops,
 * and at start from an instance that did not stop (`kill -9`), so no one reads a URL nothing
 * answers at.
 */
export const DEMO_FILE = 'demo.json';

/**
 * The demo organization's credentials as kept across restarts (a start reuses them while every
 * key still authenticates, local/seed.ts); demo.json is their copy for a running instance.
 */
export const DEMO_CREDENTIALS_FILE = 'demo-credentials.json';

/**
 * Removes what describes a running instance from `dataDir`: demo.json, and runtime.json (where
 * the operator CLI finds the embedded DynamoDB). At start (`starting`), a demo.json from before
 * the credentials had a file of their own becomes that file, so the organization is kept.
 */
export function withdrawInstanceFiles(dataDir: string, { starting = false }: { starting?: boolean } = {}): void {
  const demo = join(dataDir, DEMO_FILE);
  const credentials = join(dataDir, DEMO_CREDENTIALS_FILE);
  if (starting && existsSync(demo) && !existsSync(credentials)) renameSync(demo, credentials);
  rmSync(demo, { force: true });
  rmSync(join(dataDir, RUNTIME_FILE), { force: true });
}

/** Writes demo.json whole or not at all (temporary file, then rename), readable by its owner only: it holds secrets. */
export function publishDemo(dataDir: string, demo: DemoCredentials): void {
  writeFileAtomically(join(dataDir, DEMO_FILE), `${JSON.stringify(demo, null, 2)}\n`, 0o600);
}
