import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { claudeCode, claudeCodeEnvironment, CODEX, runAgent, writeCodexConfig } from '../../support/coding-agents';
import { CLAUDE, GPT, useProviderApis } from '../../support/provider-apis';

/**
 * The agents and their libraries against the provider APIs' stand-ins rather than the
 * development provider: each runs a tool its model (scripted) calls, and gets its answer; Claude
 * through Anthropic's API, GPT through OpenAI's.
 */
describe('agents on the provider APIs', () => {
  const apis = useProviderApis();
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'modelgate-agents-'));
  });
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const key = () => apis().service.runtime.demo.keys.workspace;
  const run = (file: string, args: string[], env: Record<string, string>) => runAgent(file, args, { cwd: home, home, env });

  it('Claude Code runs the command Claude asks for, through Anthropic', async () => {
    // Claude Code asks for thinking: Claude thinks before its tool call, and gets the thinking back with the result.
    apis().anthropic.script({ kind: 'tools', thinking: 'Run it.', calls: [{ name: 'Bash', input: { command: 'echo from-claude', description: 'Say it' } }] }, { kind: 'text', text: 'Done: from-claude' });
    const { stdout } = await run(await claudeCode(), ['-p', 'Say it', '--model', CLAUDE, '--allowedTools', 'Bash', '--output-format', 'json'], claudeCodeEnvironment(apis().service.runtime.baseUrl, key()));
    expect(JSON.parse(stdout)).toMatchObject({ is_error: false, result: 'Done: from-claude' });
    // The command's output went back to Claude as the tool's result.
    expect(JSON.stringify(apis().anthropic.received.at(-1)!.body)).toContain('from-claude');
  }, 150_000);

  it('the Codex CLI runs the command GPT asks for, through OpenAI', async () => {
    const codexHome = join(home, 'codex');
    mkdirSync(codexHome, { recursive: true });
    writeCodexConfig(codexHome, GPT, apis().service.runtime.baseUrl);
    // For GPT models Codex offers its tools in an `additional_tools` item: `exec` is a custom tool, its input JavaScript.
    const script = "const out = await tools.exec_command({ cmd: 'echo from-gpt' }); text(JSON.stringify(out));";
    apis().openai.script({ kind: 'tools', calls: [{ name: 'exec', input: { input: script } }] }, { kind: 'text', text: 'Done: from-gpt' });
    const { stdout } = await run(process.execPath, [CODEX, 'exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', 'Say it'], { CODEX_HOME: codexHome, MODELGATE_API_KEY: key() });
    const items = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { type: string; item?: { type: string; text?: string } }).filter((event) => event.type === 'item.completed').map((event) => event.item!);
    expect(items.at(-1)).toMatchObject({ type: 'agent_message', text: 'Done: from-gpt' });
    // The command ran, and its output went back to GPT as the custom tool's output.
    const sent = apis().openai.received.at(-1)!.body as { messages: { role: string; content: unknown }[] };
    expect(JSON.stringify(sent.messages.filter((message) => message.role === 'tool'))).toContain('from-gpt');
  }, 150_000);

  it("@ai-sdk/openai's tool loop through OpenAI, and ChatAnthropic's through Anthropic", async () => {
    const weather = tool({ description: 'Weather', inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }), execute: async ({ city }) => `rain in ${city}` });
    apis().openai.script({ kind: 'tools', calls: [{ name: 'weather', input: { city: 'Oslo' } }] }, { kind: 'text', text: 'It rains.' });
    const openai = createOpenAI({ apiKey: key(), baseURL: apis().service.runtime.baseUrl });
    const loop = await generateText({ model: openai(GPT), prompt: 'Weather?', tools: { weather }, stopWhen: stepCountIs(3) });
    expect(loop.text).toBe('It rains.');
    expect(JSON.stringify(apis().openai.received.at(-1)!.body)).toContain('rain in Oslo');

    apis().anthropic.script({ kind: 'tools', calls: [{ name: 'weather', input: { city: 'Lima' } }] });
    const chat = new ChatAnthropic({ model: CLAUDE, apiKey: key(), anthropicApiUrl: apis().service.runtime.baseUrl.replace(/\/v1$/, ''), maxTokens: 200, maxRetries: 0 });
    const called = await chat.bindTools([{ name: 'weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }]).invoke('Weather?');
    expect(called.tool_calls).toEqual([expect.objectContaining({ name: 'weather', args: { city: 'Lima' } })]);
  });
});
