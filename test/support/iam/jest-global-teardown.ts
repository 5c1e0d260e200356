import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SEEN_DIR_ENV, type Denial, type SeenActions } from './iam-gate';
import { SCRATCH_DIR_ENV } from './jest-global-setup';

const ROOT = join(__dirname, '..', '..', '..');

/** Where the last jest run's summary of the actions each function was seen to use goes. */
export const ACTIONS_SEEN_FILE = join(ROOT, 'node_modules', '.cache', 'modelgate-iam', 'actions-seen.json');

export interface ActionsSeenSummary {
  /** Suites that ran a gated service, by path. */
  readonly suites: string[];
  /** Construct id → action → how often it was allowed and denied, and on which resources. */
  readonly functions: SeenActions;
  readonly denials: Denial[];
}

/** Merges what every suite's gate saw into one summary of the run (see {@link ACTIONS_SEEN_FILE}). */
export function summarizeSeen(dir: string): ActionsSeenSummary {
  const summary: ActionsSeenSummary = { suites: [], functions: {}, denials: [] };
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.json'))) {
    const part = JSON.parse(readFileSync(join(dir, name), 'utf8')) as { suite?: string; seen: SeenActions; denials: Denial[] };
    if (part.suite && !summary.suites.includes(part.suite)) summary.suites.push(part.suite);
    summary.denials.push(...part.denials);
    for (const [fn, actions] of Object.entries(part.seen)) {
      const merged = (summary.functions[fn] ??= {});
      for (const [action, entry] of Object.entries(actions)) {
        const into = (merged[action] ??= { allowed: 0, denied: 0, resources: [] });
        into.allowed += entry.allowed;
        into.denied += entry.denied;
        into.resources = [...new Set([...into.resources, ...entry.resources])].sort();
      }
    }
  }
  summary.suites.sort();
  for (const [fn, actions] of Object.entries(summary.functions)) {
    summary.functions[fn] = Object.fromEntries(Object.entries(actions).sort(([a], [b]) => a.localeCompare(b)));
  }
  return summary;
}

/** Once per jest run, after every suite: the summary of what the functions were seen to use; the run's scratch folder removed. */
export default function globalTeardown(): void {
  try {
    summarizeRun();
  } finally {
    const scratch = process.env[SCRATCH_DIR_ENV];
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

function summarizeRun(): void {
  const dir = process.env[SEEN_DIR_ENV];
  if (!dir) return;
  const summary = summarizeSeen(dir);
  rmSync(dir, { recursive: true, force: true });
  if (summary.suites.length === 0) return;
  mkdirSync(join(ACTIONS_SEEN_FILE, '..'), { recursive: true });
  const partial = `${ACTIONS_SEEN_FILE}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify({ ...summary, suites: summary.suites.map((suite) => relative(ROOT, suite)) }, null, 2)}\n`);
  renameSync(partial, ACTIONS_SEEN_FILE);
  const uses = Object.entries(summary.functions).map(([fn, actions]) => `${fn} ${Object.keys(actions).length}`);
  console.log(`\nIAM gate: ${summary.suites.length} suites; actions seen per function: ${uses.join(', ')}; ${summary.denials.length} denied (${relative(ROOT, ACTIONS_SEEN_FILE)})`);
}
