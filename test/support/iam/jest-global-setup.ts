import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from 'jest';
import { SEEN_DIR_ENV } from './iam-gate';
import { cachedStackFile, STACK_FILE_ENV } from './stack-template';

/**
 * Once per jest run: a folder where the IAM gates leave what they saw, which workers inherit
 * through the environment. The stack the gates evaluate against is synthesized here for a whole
 * run (`npm test`), before any suite's timeouts start; a run of chosen files leaves it to the
 * first suite that needs it (stack-template.ts `loadStack`, cached while lib/ and its imports do
 * not change), so a unit test file synthesizes nothing.
 */
export default function globalSetup(globalConfig: { nonFlagArgs?: string[]; findRelatedTests?: boolean; testPathPattern?: string } & Partial<Config>): void {
  process.env[SEEN_DIR_ENV] = mkdtempSync(join(tmpdir(), 'modelgate-iam-seen-'));
  const chosen = (globalConfig.nonFlagArgs?.length ?? 0) > 0 || globalConfig.findRelatedTests === true || Boolean(globalConfig.testPathPattern);
  if (!chosen) process.env[STACK_FILE_ENV] = cachedStackFile();
}
