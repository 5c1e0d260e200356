import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Folders no rule reads: installed packages, test data, jest's snapshots. */
const SKIPPED = new Set(['node_modules', 'fixtures', '__snapshots__']);

/** Every file below `dir` whose name `keep` accepts, as absolute paths, outside {@link SKIPPED} folders. */
export function filesBelow(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : filesBelow(path, keep);
    return keep(entry.name) ? [path] : [];
  });
}
