import { execFile } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const CLAUDE_PACKAGE = join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code');

/** The Codex CLI's launcher, which runs its native binary from the platform package. */
export const CODEX = join(ROOT, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');

/** Claude Code's native binary: npm skips its install script, which puts it in place of the stub; run once. */
export async function claudeCode(): Promise<string> {
  const binary = join(CLAUDE_PACKAGE, 'bin', 'claude.exe');
  if (statSync(binary).size < 1024 * 1024) await promisify(execFile)(process.execPath, [join(CLAUDE_PACKAGE, 'install.cjs')], { cwd: CLAUDE_PACKAGE });
  return binary;
}
