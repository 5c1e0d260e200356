import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import OpenAI from 'openai';
import { PROVIDER_CREDENTIALS_FILE } from '../../local/function-wiring';
import { startTestService, type TestService, type TestServiceOptions } from './local-service';
import { startAnthropicStandIn, type AnthropicStandIn } from './providers/anthropic-stand-in';
import { startBedrockStandIn, type BedrockStandIn } from './providers/bedrock-stand-in';
import { startOpenAIStandIn, type OpenAIStandIn } from './providers/openai-stand-in';

/** A model with an Anthropic and an Amazon Bedrock endpoint, in that order, in the local catalog. */
export const CLAUDE = 'anthropic/claude-sonnet-5';
/** Bedrock's id for {@link CLAUDE}: a cross-region inference profile, as operators configure. */
export const CLAUDE_ON_BEDROCK = 'us.anthropic.claude-sonnet-5-v1:0';
/** A model with an OpenAI and an Azure endpoint, in that order. */
export const GPT = 'openai/gpt-5.6-luna';
/** The providers' keys, in the provider-credentials document. */
export const KEYS = { openai: 'sk-openai-stand-in-0123456789', anthropic: 'sk-ant-stand-in-0123456789' };
const AWS_CREDENTIALS = { accessKeyId: 'AKIASTANDIN000000001', secretAccessKey: 'stand-in-secret-access-key-0000000000000' };

/** The gateway in front of the three provider APIs' stand-ins, each proven by its SDK (test/providers/). */
export interface ProviderApis {
  service: TestService;
  client: OpenAI;
  openai: OpenAIStandIn;
  anthropic: AnthropicStandIn;
  bedrock: BedrockStandIn;
  reset(): void;
  stop(): Promise<void>;
}

/**
 * Starts the stand-ins and a local gateway whose `inferenceUpstreams` reach them as operators
 * configure the real providers (docs/providers.md): OpenAI and Anthropic with their keys,
 * Bedrock signed with AWS credentials over HTTP/2 and TLS. Azure has no upstream.
 */
export async function startProviderApis(options: TestServiceOptions = {}): Promise<ProviderApis> {
  const [openai, anthropic, bedrock] = await Promise.all([
    startOpenAIStandIn({ apiKey: KEYS.openai, models: ['gpt-5.6-luna'] }),
    startAnthropicStandIn({ apiKey: KEYS.anthropic, models: ['claude-sonnet-5'] }),
    startBedrockStandIn({ region: 'us-west-2', credentials: AWS_CREDENTIALS, models: [CLAUDE_ON_BEDROCK] }),
  ]);
  const requestHandler = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: bedrock.caPem } });
  const service = await startTestService({
    inferenceUpstreams: {
      openai: { api: 'openai', baseUrl: openai.baseUrl, models: {} },
      anthropic: { api: 'anthropic', baseUrl: anthropic.baseUrl, models: {} },
      'amazon-bedrock': { api: 'bedrock', baseUrl: bedrock.baseUrl, region: 'us-west-2', models: { [CLAUDE]: CLAUDE_ON_BEDROCK } },
    },
    bedrock: { requestHandler, credentials: AWS_CREDENTIALS },
    ...options,
  });
  writeFileSync(join(service.dataDir, PROVIDER_CREDENTIALS_FILE), JSON.stringify(KEYS));
  const client = new OpenAI({ apiKey: service.runtime.demo.keys.workspace, baseURL: service.runtime.baseUrl, maxRetries: 0 });
  return {
    service,
    client,
    openai,
    anthropic,
    bedrock,
    reset: () => [openai, anthropic, bedrock].forEach((standIn) => standIn.reset()),
    stop: async () => {
      await service.stop();
      // The gateway's HTTP/2 sessions to Bedrock: closed, so the worker ends with the suite.
      requestHandler.destroy();
      await Promise.all([openai.stop(), anthropic.stop(), bedrock.stop()]);
    },
  };
}

/** The provider APIs for one suite: started before its tests, their stand-ins reset before each, stopped after. */
export function useProviderApis(): () => ProviderApis {
  let apis: ProviderApis | undefined;
  beforeAll(async () => {
    apis = await startProviderApis();
  });
  afterAll(() => apis?.stop());
  beforeEach(() => apis!.reset());
  return () => apis!;
}
