import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SEEN_DIR_ENV } from './iam-gate';
import { cachedStackFile, STACK_FILE_ENV } from './stack-template';

/**
 * Once per jest run: the synthesized stack every suite's IAM gate evaluates against (from the
 * cache when lib/ and lambdas/ did not change), and a folder where the gates leave what they
 * saw. Workers inherit both through the environment.
 */
export default function globalSetup(): void {
  process.env[STACK_FILE_ENV] = cachedStackFile();
  process.env[SEEN_DIR_ENV] = mkdtempSync(join(tmpdir(), 'modelgate-iam-seen-'));
}
