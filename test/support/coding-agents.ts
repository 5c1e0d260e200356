import { execFile } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
const CLAUDE_PACKAGE = join(ROOT, 'node_modules', '@anthropic-ai', 'claude-code');
const execute = promisify(execFile);

/** The Codex CLI's launcher, which runs its native binary from the platform package. */
export const CODEX = join(ROOT, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');

/** Claude Code's native binary: npm skips its install script, which puts it in place of the stub; run once. */
export async function claudeCode(): Promise<string> {
  const binary = join(CLAUDE_PACKAGE, 'bin', 'claude.exe');
  if (statSync(binary).size < 1024 * 1024) await execute(process.execPath, [join(CLAUDE_PACKAGE, 'install.cjs')], { cwd: CLAUDE_PACKAGE });
  return binary;
}

/**
 * Runs an agent to its end in `cwd` with `home` as its home and only `env` beside `PATH` (no
 * other network settings), its stdin closed at once (an agent reads a prompt from an open
 * stdin). A failure says what the agent printed.
 */
export function runAgent(file: string, args: string[], { cwd, home, env }: { cwd: string; home: string; env: Record<string, string> }): Promise<{ stdout: string }> {
  const running = execute(file, args, { cwd, timeout: 120_000, env: { PATH: process.env.PATH ?? '', HOME: home, ...env } });
  running.child.stdin?.end();
  return running.catch((error: { message: string; stdout?: string }) => {
    throw new Error(`${error.message}\n${(error.stdout ?? '').slice(-2000)}`);
  });
}

/** Claude Code's environment for a gateway: its base URL the origin plus `/api`, the key as its auth token, no traffic of its own. */
export function claudeCodeEnvironment(apiBaseUrl: string, key: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: apiBaseUrl.replace(/\/v1$/, ''),
    ANTHROPIC_AUTH_TOKEN: key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

/** A Codex `config.toml` in `codexHome` naming the gateway as its provider (`wire_api = "responses"`, the key in `MODELGATE_API_KEY`). */
export function writeCodexConfig(codexHome: string, model: string, apiBaseUrl: string): void {
  const lines = [`model = "${model}"`, 'model_provider = "modelgate"', '', '[model_providers.modelgate]', 'name = "modelgate"', `base_url = "${apiBaseUrl}"`, 'env_key = "MODELGATE_API_KEY"', 'wire_api = "responses"'];
  writeFileSync(join(codexHome, 'config.toml'), lines.join('\n'));
}
