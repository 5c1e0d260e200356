import { anthropicClient, ANTHROPIC_PARAMETERS } from './anthropic';
import { openAiClient, OPENAI_PARAMETERS } from './openai';
import type { HttpTransport, ProviderClient } from './provider-client';
import { targetBaseUrl, type ApiTarget, type ProviderApi } from './targets';

/** What the provider clients are made with: the HTTP transport, the function's region, and Bedrock's client. */
export interface ProviderClientsOptions {
  transport: HttpTransport;
  /** Bedrock's region when its target names none: the function's own (`AWS_REGION`). */
  region: string;
  /** A Bedrock Converse client at an endpoint, in a region (lambdas/aws/bedrock-converse.ts). */
  bedrock: (endpoint: string, region: string) => ProviderClient;
}

/** The client of each provider API target, made once per target and kept: its connections stay open between invocations. */
export function providerClients(options: ProviderClientsOptions): (target: ApiTarget) => ProviderClient {
  const made = new WeakMap<ApiTarget, ProviderClient>();
  return (target) => {
    let client = made.get(target);
    if (client) return client;
    const baseUrl = targetBaseUrl(target, options.region);
    if (target.api === 'openai') client = openAiClient(baseUrl, options.transport);
    else if (target.api === 'anthropic') client = anthropicClient(baseUrl, options.transport);
    else client = options.bedrock(baseUrl, target.region ?? options.region);
    made.set(target, client);
    return client;
  };
}

/** The chat parameters Converse carries (`top_k` and `reasoning` go to Anthropic's models only, and count as not carried). */
const BEDROCK_PARAMETERS: ReadonlySet<string> = new Set([
  'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'stop', 'tools', 'tool_choice', 'response_format', 'structured_outputs',
]);

/** The chat parameters each provider API carries: what `provider.require_parameters` asks an endpoint to honour. */
export const API_PARAMETERS: Readonly<Record<ProviderApi, ReadonlySet<string>>> = {
  openai: OPENAI_PARAMETERS,
  anthropic: ANTHROPIC_PARAMETERS,
  bedrock: BEDROCK_PARAMETERS,
};
