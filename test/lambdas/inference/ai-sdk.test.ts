import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { generateText, streamText } from 'ai';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';

/**
 * The AI SDK (`ai`) with the official provider for the public service this gateway is compatible with
 * (`@openrouter/ai-sdk-provider`), pointed at the gateway: its `streamText` reads the tokens
 * from the stream's last usage chunk, which every stream carries (the caller need not ask),
 * and the cost from that chunk's `usage.cost`, the provider's metadata.
 */
describe('@openrouter/ai-sdk-provider with ai', () => {
  let service: TestService;
  let key: string;

  beforeAll(async () => {
    service = await startTestService();
    key = service.runtime.demo.keys.workspace;
  });
  afterAll(async () => {
    await service?.stop();
  });

  const spent = async () => (await service.call('/key', { key })).body.data.usage as number;
  const provider = () => createOpenRouter({ apiKey: key, baseURL: service.runtime.baseUrl });

  it('streamText reports the tokens of a streamed completion and what the key was charged for it', async () => {
    const before = await spent();
    const result = streamText({ model: provider()(MODEL), prompt: 'usage on every stream' });
    const chunks: string[] = [];
    for await (const text of result.textStream) chunks.push(text);
    const usage = await result.usage;
    const metadata = (await result.providerMetadata) as { openrouter?: { usage?: { cost?: number } } } | undefined;
    const after = await spent();

    expect(chunks.join('')).toBe('usage on every stream');
    expect(usage).toMatchObject({ inputTokens: 4, outputTokens: 4, totalTokens: 8 });
    expect(after).toBeGreaterThan(before);
    expect(metadata?.openrouter?.usage?.cost).toBeCloseTo(after - before, 15);
  });

  it('generateText reports the same for a completion that is not streamed', async () => {
    const before = await spent();
    const result = await generateText({ model: provider()(MODEL), prompt: 'not streamed' });
    const after = await spent();

    expect(result.text).toBe('not streamed');
    expect(result.usage).toMatchObject({ inputTokens: 2, outputTokens: 2, totalTokens: 4 });
    expect((result.providerMetadata as { openrouter?: { usage?: { cost?: number } } }).openrouter?.usage?.cost).toBeCloseTo(after - before, 15);
  });
});
