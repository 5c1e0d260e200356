import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  ModelNotReadyException,
  ModelStreamErrorException,
  ServiceUnavailableException,
  ThrottlingException,
  ValidationException,
  type ConverseCommandInput,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { Sha256 } from '@aws-crypto/sha256-js';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import { SignatureV4 } from '@smithy/signature-v4';
import { startBedrockStandIn, type BedrockStandIn } from '../support/providers/bedrock-stand-in';

const REGION = 'eu-central-1';
const CREDENTIALS = { accessKeyId: 'AKIASTANDINTEST', secretAccessKey: 'stand-in-secret', sessionToken: 'stand-in-session-token' };
const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const PROFILE_ARN = 'arn:aws:bedrock:eu-central-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0';

let standIn: BedrockStandIn;
let client: BedrockRuntimeClient;
const extraClients: BedrockRuntimeClient[] = [];

/** A real SDK client that trusts the stand-in's CA through its HTTP/2 handler. */
function clientWith(credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): BedrockRuntimeClient {
  const requestHandler = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: standIn.caPem } });
  return new BedrockRuntimeClient({ region: REGION, endpoint: standIn.baseUrl, credentials, requestHandler, maxAttempts: 1 });
}

const ask = (text: string, modelId = MODEL): ConverseCommandInput => ({ modelId, messages: [{ role: 'user', content: [{ text }] }] });

/** What a ConverseStream answer says once its events are put together again. */
async function reassemble(stream: AsyncIterable<ConverseStreamOutput>) {
  const blocks: { text: string; reasoning: string; signature?: string; toolUse?: { toolUseId: string; name: string; input: string }; deltas: number }[] = [];
  const block = (index: number) => (blocks[index] ??= { text: '', reasoning: '', deltas: 0 });
  const order: string[] = [];
  let stopReason: string | undefined;
  let usage: unknown;
  for await (const event of stream) {
    order.push(Object.entries(event).find(([, value]) => value !== undefined)![0]);
    const start = event.contentBlockStart?.start?.toolUse;
    if (start) block(event.contentBlockStart!.contentBlockIndex!).toolUse = { toolUseId: start.toolUseId!, name: start.name!, input: '' };
    const delta = event.contentBlockDelta;
    if (delta) {
      const target = block(delta.contentBlockIndex!);
      target.deltas++;
      target.text += delta.delta?.text ?? '';
      target.reasoning += delta.delta?.reasoningContent?.text ?? '';
      target.signature ??= delta.delta?.reasoningContent?.signature;
      if (delta.delta?.toolUse) target.toolUse!.input += delta.delta.toolUse.input ?? '';
    }
    stopReason ??= event.messageStop?.stopReason;
    usage ??= event.metadata?.usage;
  }
  return { blocks, order, stopReason, usage };
}

/** A request signed by hand and sent over HTTPS/1.1, for what the SDK cannot be made to send. */
async function signedPost(path: string, body: string, options: { signingDate?: Date; sent?: string } = {}) {
  const url = new URL(standIn.baseUrl);
  const signer = new SignatureV4({ service: 'bedrock', region: REGION, credentials: CREDENTIALS, sha256: Sha256 });
  const signed = await signer.sign(
    { method: 'POST', protocol: 'https:', hostname: url.hostname, port: Number(url.port), path, query: {}, headers: { host: url.host, 'content-type': 'application/json' }, body },
    { signingDate: options.signingDate },
  );
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Record<string, unknown> }>((resolve, reject) => {
    const sent = request({ hostname: url.hostname, port: url.port, path, method: 'POST', headers: signed.headers, ca: standIn.caPem }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    sent.on('error', reject);
    sent.end(options.sent ?? body);
  });
}

beforeAll(async () => {
  standIn = await startBedrockStandIn({ region: REGION, credentials: CREDENTIALS, models: [MODEL, PROFILE_ARN] });
  client = clientWith(CREDENTIALS);
});

afterEach(() => standIn.reset());

afterAll(async () => {
  for (const each of [client, ...extraClients]) each.destroy();
  await standIn.stop();
});

describe('the Bedrock stand-in, through @aws-sdk/client-bedrock-runtime', () => {
  it('answers Converse with the echoed text, counted usage and the scripted cache counts, over HTTP/2', async () => {
    standIn.script({ kind: 'text', usage: { cacheRead: 120, cacheWrite: 30 } });
    const answer = await client.send(new ConverseCommand({ ...ask('say hello to me'), system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 64 } }));
    expect(answer.output?.message).toEqual({ role: 'assistant', content: [{ text: 'echo: say hello to me' }] });
    expect(answer.stopReason).toBe('end_turn');
    expect(answer.usage).toEqual({ inputTokens: 6, outputTokens: 5, cacheReadInputTokens: 120, cacheWriteInputTokens: 30, totalTokens: 161 });
    expect(answer.metrics?.latencyMs).toEqual(expect.any(Number));
    const [received] = standIn.received;
    expect(received).toMatchObject({ httpVersion: '2.0', modelId: MODEL, path: `/model/${encodeURIComponent(MODEL)}/converse` });
    expect(received!.body.inferenceConfig).toEqual({ maxTokens: 64 });
    expect(received!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASTANDINTEST\/\d{8}\/eu-central-1\/bedrock\/aws4_request/);
  });

  it('streams two parallel tool calls as their own blocks, which reassemble into the calls', async () => {
    const calls = [
      { name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      { name: 'get_time', input: { zone: 'Europe/Paris' } },
    ];
    standIn.script({ kind: 'tools', text: 'Looking both up.', calls, usage: { input: 40 } });
    const { stream } = await client.send(new ConverseStreamCommand(ask('weather and time in Paris?')));
    const { blocks, order, stopReason, usage } = await reassemble(stream!);
    expect(blocks[0]!.text).toBe('Looking both up.');
    expect(blocks.slice(1).map((block) => ({ name: block.toolUse!.name, input: JSON.parse(block.toolUse!.input) as unknown }))).toEqual(calls);
    expect(blocks[1]!.toolUse!.toolUseId).toMatch(/^tooluse_[A-Za-z0-9_-]{22}$/);
    expect(blocks[1]!.toolUse!.toolUseId).not.toBe(blocks[2]!.toolUse!.toolUseId);
    expect(blocks.slice(1).every((block) => block.deltas >= 2)).toBe(true);
    expect(stopReason).toBe('tool_use');
    expect(usage).toMatchObject({ inputTokens: 40, cacheReadInputTokens: 0 });
    expect(order[0]).toBe('messageStart');
    expect(order.slice(-2)).toEqual(['messageStop', 'metadata']);
    expect(order.filter((type) => type === 'contentBlockStart')).toHaveLength(2);
  });

  it('streams reasoning content, its signature, then the text in the next block', async () => {
    standIn.script({ kind: 'thinking', thinking: 'The user wants a count of three letters.', text: 'There are 3.' });
    const { stream } = await client.send(new ConverseStreamCommand(ask('how many r in strawberry?')));
    const { blocks, stopReason } = await reassemble(stream!);
    expect(blocks[0]).toMatchObject({ reasoning: 'The user wants a count of three letters.', signature: expect.any(String), text: '' });
    expect(blocks[1]).toMatchObject({ text: 'There are 3.', reasoning: '' });
    expect(stopReason).toBe('end_turn');
  });

  it('breaks a stream with an exception frame, which the SDK throws as ModelStreamErrorException', async () => {
    standIn.script({ kind: 'stream-error', afterDeltas: 2, errorType: 'modelStreamErrorException', message: 'The model stream failed.' });
    const { stream } = await client.send(new ConverseStreamCommand(ask('tell me a rather long story please')));
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of stream!) if (event.contentBlockDelta) seen.push(event.contentBlockDelta.delta!.text!);
    })();
    await expect(reading).rejects.toBeInstanceOf(ModelStreamErrorException);
    await expect(reading).rejects.toThrow('The model stream failed.');
    expect(seen).toHaveLength(2);
  });

  it('answers scripted errors that the SDK maps to its classes: ThrottlingException, ServiceUnavailableException, ModelNotReadyException', async () => {
    standIn.script(
      { kind: 'status', status: 429, errorType: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' },
      { kind: 'status', status: 503, errorType: 'ServiceUnavailableException', message: 'The service is unavailable.' },
      { kind: 'status', status: 429, errorType: 'ModelNotReadyException', message: 'The model is not ready.' },
    );
    const throttled = await client.send(new ConverseCommand(ask('one'))).catch((error: unknown) => error);
    expect(throttled).toBeInstanceOf(ThrottlingException);
    expect(throttled).toMatchObject({ message: 'Too many requests, please wait before trying again.', $metadata: { httpStatusCode: 429 } });
    const unavailable = await client.send(new ConverseStreamCommand(ask('two'))).catch((error: unknown) => error);
    expect(unavailable).toBeInstanceOf(ServiceUnavailableException);
    expect(unavailable).toMatchObject({ $metadata: { httpStatusCode: 503 } });
    await expect(client.send(new ConverseCommand(ask('three')))).rejects.toBeInstanceOf(ModelNotReadyException);
  });

  it('refuses a wrong secret key, an unknown access key and a missing session token, and records them', async () => {
    const wrongSecret = clientWith({ ...CREDENTIALS, secretAccessKey: 'not-the-secret' });
    const unknownKey = clientWith({ ...CREDENTIALS, accessKeyId: 'AKIAUNKNOWN' });
    const noToken = clientWith({ accessKeyId: CREDENTIALS.accessKeyId, secretAccessKey: CREDENTIALS.secretAccessKey });
    extraClients.push(wrongSecret, unknownKey, noToken);
    await expect(wrongSecret.send(new ConverseCommand(ask('hi')))).rejects.toMatchObject({
      name: 'InvalidSignatureException',
      message: expect.stringContaining('signature we calculated does not match'),
      $metadata: { httpStatusCode: 403 },
    });
    await expect(unknownKey.send(new ConverseCommand(ask('hi')))).rejects.toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 403 } });
    await expect(noToken.send(new ConverseCommand(ask('hi')))).rejects.toMatchObject({ name: 'UnrecognizedClientException' });
    expect(standIn.received).toHaveLength(3);
  });

  it('refuses a stale signature and a body changed after signing', async () => {
    const path = `/model/${encodeURIComponent(MODEL)}/converse`;
    const body = JSON.stringify({ messages: ask('hi').messages });
    const stale = await signedPost(path, body, { signingDate: new Date(Date.now() - 6 * 60_000) });
    expect(stale).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^Signature expired/) } });
    const changed = await signedPost(path, body, { sent: body.replace('hi', 'ho') });
    expect(changed.status).toBe(403);
    expect(changed.headers['x-amzn-errortype']).toBe('InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/');
    const fine = await signedPost(path, body);
    expect(fine.status).toBe(200);
    expect(standIn.received.map((received) => received.httpVersion)).toEqual(['1.1', '1.1', '1.1']);
  });

  it('refuses a model id it does not serve with ValidationException', async () => {
    const refused = await client.send(new ConverseCommand(ask('hi', 'amazon.nova-pro-v1:0'))).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationException);
    expect(refused).toMatchObject({ message: 'The provided model identifier is invalid.', $metadata: { httpStatusCode: 400 } });
  });

  it('serves an inference profile ARN, which the SDK sends encoded in the path', async () => {
    const answer = await client.send(new ConverseCommand(ask('via a profile', PROFILE_ARN)));
    expect(answer.output?.message?.content).toEqual([{ text: 'echo: via a profile' }]);
    expect(standIn.received[0]!.modelId).toBe(PROFILE_ARN);
    expect(standIn.received[0]!.path).toContain('%3Ainference-profile%2F');
  });

  it('refuses an unknown top-level field and an unknown operation', async () => {
    const unknownField = await signedPost(`/model/${encodeURIComponent(MODEL)}/converse`, JSON.stringify({ ...ask('hi'), modelId: MODEL, temperature: 0.2 }));
    expect(unknownField.status).toBe(400);
    expect(unknownField.headers['x-amzn-errortype']).toBe('ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/');
    expect(unknownField.body.message).toMatch(/modelId/);
    const unknownOperation = await signedPost(`/model/${encodeURIComponent(MODEL)}/invoke-everything`, '{}');
    expect(unknownOperation.status).toBe(404);
    expect(unknownOperation.body).toEqual({ Output: { __type: 'com.amazon.coral.service#UnknownOperationException' }, Version: '1.0' });
  });

  it('refuses conversations the service refuses, naming the problem', async () => {
    const refusal = (input: Omit<ConverseCommandInput, 'modelId'>) =>
      client.send(new ConverseCommand({ modelId: MODEL, ...input })).then(
        () => 'accepted',
        (error: ValidationException) => `${error.name}: ${error.message}`,
      );
    const toolConfig = { tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }] };
    const use = (toolUseId: string) => ({ toolUse: { toolUseId, name: 'lookup', input: {} } });
    expect(await refusal({ messages: [{ role: 'user', content: [{ text: '  ' }] }] })).toMatch(/^ValidationException: The text field in the ContentBlock object at messages\.0\.content\.0 is blank/);
    expect(await refusal({ messages: [{ role: 'assistant', content: [{ text: 'hi' }] }] })).toMatch(/must start with a user message/);
    expect(await refusal({ messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'assistant', content: [] }] })).toMatch(/messages\.1 is empty/);
    expect(await refusal({ messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'user', content: [{ text: 'b' }] }] })).toMatch(/must alternate/);
    const duplicated = [{ role: 'user' as const, content: [{ text: 'a' }] }, { role: 'assistant' as const, content: [use('tooluse_a'), use('tooluse_a')] }];
    expect(await refusal({ messages: duplicated, toolConfig })).toMatch(/contain duplicate Ids: tooluse_a/);
    const unanswered = [
      { role: 'user' as const, content: [{ text: 'a' }] },
      { role: 'assistant' as const, content: [use('tooluse_a'), use('tooluse_b')] },
      { role: 'user' as const, content: [{ toolResult: { toolUseId: 'tooluse_a', content: [{ text: 'ok' }] } }] },
    ];
    expect(await refusal({ messages: unanswered, toolConfig })).toMatch(/Expected toolResult blocks at messages\.2\.content for the following Ids: tooluse_b/);
    expect(await refusal({ messages: unanswered.slice(0, 2) })).toMatch(/toolConfig field must be defined/);
    expect(await refusal({ ...ask('a'), inferenceConfig: { maxTokens: 0 } })).toMatch(/inferenceConfig\.maxTokens.*greater than or equal to 1/);
    expect(standIn.received).toHaveLength(8);
  });

  it('accepts a full tool round trip: the answered calls, images and cache points', async () => {
    standIn.script({ kind: 'tools', calls: [{ name: 'lookup', input: { q: 'x' } }] });
    const toolConfig = { tools: [{ toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }, { cachePoint: { type: 'default' as const } }], toolChoice: { auto: {} } };
    const first = await client.send(new ConverseCommand({ ...ask('look x up'), toolConfig }));
    expect(first.stopReason).toBe('tool_use');
    const call = first.output!.message!.content![0]!.toolUse!;
    const png = Buffer.from('89504e470d0a1a0a', 'hex');
    const second = await client.send(
      new ConverseCommand({
        modelId: MODEL,
        system: [{ text: 'You look things up.' }, { cachePoint: { type: 'default' } }],
        toolConfig,
        messages: [
          { role: 'user', content: [{ text: 'look x up' }, { image: { format: 'png', source: { bytes: png } } }] },
          first.output!.message!,
          { role: 'user', content: [{ toolResult: { toolUseId: call.toolUseId, content: [{ json: { found: true } }, { text: 'found it' }], status: 'success' } }] },
        ],
      }),
    );
    expect(second.output?.message?.content).toEqual([{ text: 'echo: found it' }]);
  });
});
