import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claudeCode, claudeCodeEnvironment, CODEX, runAgent, writeCodexConfig } from '../../support/coding-agents';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';

/**
 * The two coding agents, installed from the npm registry and run headless against the gateway
 * with no other network: Claude Code through `/messages` (its base URL the origin plus `/api`,
 * the key as its auth token) and the Codex CLI through `/responses` (a provider in its
 * `config.toml`, `wire_api = "responses"`). Each completes a prompt with a tool turn, the
 * development provider calling the tool the prompt names, and its spend lands on the key.
 */
describe('coding agents against the gateway', () => {
  let service: TestService;
  let key: string;
  let home: string;
  const spent = async () => (await service.call('/key', { key })).body.data.usage as number;

  beforeAll(async () => {
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
    home = mkdtempSync(join(tmpdir(), 'modelgate-agents-'));
  });
  afterAll(async () => {
    await service?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('Claude Code runs its Bash tool and answers, through /messages with its beta headers and fields', async () => {
    const before = await spent();
    const { stdout } = await runAgent(await claudeCode(), ['-p', 'Use the Bash tool', '--model', MODEL, '--allowedTools', 'Bash', '--output-format', 'json'], {
      cwd: home,
      home,
      env: claudeCodeEnvironment(service.runtime.baseUrl, key),
    });
    const result = JSON.parse(stdout) as { is_error: boolean; num_turns: number; result: string; total_cost_usd?: number };
    expect(result).toMatchObject({ is_error: false, num_turns: 2 });
    // The tool ran, and its result came back as the answer (the development provider echoes tool results).
    expect(result.result).toContain('Bash');
    expect(await spent()).toBeGreaterThan(before);
  }, 150_000);

  it('the Codex CLI runs its command tool and answers, through /responses', async () => {
    const codexHome = join(home, 'codex');
    const work = join(home, 'work');
    for (const dir of [codexHome, work]) mkdirSync(dir);
    writeCodexConfig(codexHome, MODEL, service.runtime.baseUrl);
    const before = await spent();
    const { stdout } = await runAgent(process.execPath, [CODEX, 'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', 'Use exec_command'], {
      cwd: work,
      home,
      env: { CODEX_HOME: codexHome, MODELGATE_API_KEY: key },
    });
    const events = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { type: string; item?: { type: string; message?: string } });
    const items = events.filter((event) => event.type === 'item.completed').map((event) => event.item!);
    // Codex knows no metadata (context window) of a catalog id, and says so; nothing else goes wrong.
    expect(items.filter((item) => item.type === 'error').map((item) => item.message)).toEqual([expect.stringMatching(/^Model metadata for `openai\/gpt-4o-mini` not found/)]);
    expect(items.filter((item) => item.type !== 'error').map((item) => item.type)).toEqual(['command_execution', 'agent_message']);
    expect(events.at(-1)?.type).toBe('turn.completed');
    expect(await spent()).toBeGreaterThan(before);
  }, 150_000);
});
