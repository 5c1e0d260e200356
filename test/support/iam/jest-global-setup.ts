import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from 'jest';
import { SEEN_DIR_ENV } from './iam-gate';
import { cachedStackFile, STACK_FILE_ENV } from './stack-template';

/**
 * The run's scratch folder, which the workers and their processes take as their temporary
 * folder (TMPDIR): what a suite leaves there (the cloud assembly of a synth given no outdir, a
 * browser's profile) goes with the run, in jest-global-teardown.ts.
 */
export const SCRATCH_DIR_ENV = 'MODELGATE_JEST_SCRATCH';

/**
 * Once per jest run: a scratch folder for temporary files ({@link SCRATCH_DIR_ENV}) and a folder
 * where the IAM gates leave what they saw, which workers inherit through the environment. The
 * stack the gates evaluate against is synthesized here for a whole run (`npm test`), before any
 * suite's timeouts start; a run of chosen files leaves it to the first suite that needs it
 * (stack-template.ts `loadStack`, cached while lib/ and its imports do not change), so a unit
 * test file synthesizes nothing.
 */
export default function globalSetup(globalConfig: { nonFlagArgs?: string[]; findRelatedTests?: boolean; testPathPattern?: string } & Partial<Config>): void {
  const scratch = mkdtempSync(join(tmpdir(), 'modelgate-jest-'));
  process.env[SCRATCH_DIR_ENV] = scratch;
  process.env.TMPDIR = scratch;
  process.env[SEEN_DIR_ENV] = mkdtempSync(join(tmpdir(), 'modelgate-iam-seen-'));
  const chosen = (globalConfig.nonFlagArgs?.length ?? 0) > 0 || globalConfig.findRelatedTests === true || Boolean(globalConfig.testPathPattern);
  if (!chosen) process.env[STACK_FILE_ENV] = cachedStackFile();
}
