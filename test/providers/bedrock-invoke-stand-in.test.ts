import { BedrockRuntimeClient, InvokeModelCommand, InvokeModelWithResponseStreamCommand, ValidationException } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import { BEDROCK_ANTHROPIC_VERSION } from '../support/providers/bedrock-invoke';
import { startBedrockStandIn, type BedrockStandIn } from '../support/providers/bedrock-stand-in';

const REGION = 'eu-central-1';
const CREDENTIALS = { accessKeyId: 'AKIASTANDINTEST', secretAccessKey: 'stand-in-secret', sessionToken: 'stand-in-session-token' };
const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

/**
 * The Bedrock stand-in's InvokeModel for Anthropic's models, through the SDK's own commands: the
 * Messages body with `anthropic_version` in, Anthropic's message (or its events, one `chunk`
 * each) out, and the body held to Anthropic's checks.
 */
describe("the Bedrock stand-in's InvokeModel, through @aws-sdk/client-bedrock-runtime", () => {
  let standIn: BedrockStandIn;
  let client: BedrockRuntimeClient;
  let handler: NodeHttp2Handler;
  const body = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ anthropic_version: BEDROCK_ANTHROPIC_VERSION, max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'one two three' }] }], ...extra });

  beforeAll(async () => {
    standIn = await startBedrockStandIn({ region: REGION, credentials: CREDENTIALS, models: [MODEL] });
    handler = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: standIn.caPem } });
    client = new BedrockRuntimeClient({ region: REGION, endpoint: standIn.baseUrl, credentials: CREDENTIALS, requestHandler: handler, maxAttempts: 1 });
  });
  afterAll(async () => {
    client?.destroy();
    handler?.destroy();
    await standIn?.stop();
  });

  it("answers Anthropic's message", async () => {
    const output = await client.send(new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', accept: 'application/json', body: body() }));
    const message = JSON.parse(new TextDecoder().decode(output.body));
    expect(message).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'echo: one two three' }], stop_reason: 'end_turn', usage: { input_tokens: 3 } });
  });

  it("streams Anthropic's events, each a chunk of base64 JSON, a tool call among them", async () => {
    standIn.script({ kind: 'tools', thinking: 'First.', calls: [{ name: 'weather', input: { city: 'Oslo' } }] });
    const tools = [{ name: 'weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const output = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: MODEL, contentType: 'application/json', body: body({ tools, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 } }) }));
    const events: { type: string; delta?: { type: string } }[] = [];
    for await (const part of output.body!) events.push(JSON.parse(new TextDecoder().decode(part.chunk!.bytes)));
    expect(events.map((event) => event.type)).toEqual([
      'message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    expect(events.filter((event) => event.delta).map((event) => event.delta!.type)).toEqual(['thinking_delta', 'signature_delta', 'input_json_delta', undefined]);
  });

  it('refuses what Bedrock refuses: a model or stream member, a wrong version, what Anthropic refuses', async () => {
    for (const refused of [body({ model: MODEL }), body({ stream: true }), body({ anthropic_version: '2023-06-01' }), body({ temperature: 3 })]) {
      await expect(client.send(new InvokeModelCommand({ modelId: MODEL, contentType: 'application/json', body: refused }))).rejects.toBeInstanceOf(ValidationException);
    }
  });
});
