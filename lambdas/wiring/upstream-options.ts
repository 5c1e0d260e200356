import type { BedrockRuntimeClientConfig } from '@aws-sdk/client-bedrock-runtime';
import { bedrockClient } from '../aws/bedrock-converse';
import type { Clock, IdGenerator } from '../clock';
import { providerClients } from '../providers/clients';
import { DEVELOPMENT_PROVIDER, type Settings } from '../settings';
import { developmentProvider } from '../inference/development-provider';
import { nodeHttpTransport } from '../inference/http-transport';
import { NO_CREDENTIALS, type ProviderCredentials, type UpstreamOptions } from '../inference/upstream';

/** Where the provider APIs' clients run: the function's region (Bedrock's default), and Bedrock client settings. */
export interface ProviderClientSettings {
  /** The function's AWS region (`AWS_REGION`). @default 'us-east-1' */
  region?: string;
  /** Added to each Bedrock client's configuration: a request handler, credentials. */
  bedrock?: Partial<BedrockRuntimeClientConfig>;
}

/**
 * Where completions go, as both composition roots build it: HTTP providers through Node's
 * HTTP client (lambdas/inference/http-transport.ts), provider APIs through their clients
 * (lambdas/providers/clients.ts; Bedrock's lambdas/aws/bedrock-converse.ts), the development provider in process, credentials from the
 * given source. Built once per function instance: its connections are kept alive between
 * invocations.
 */
export function upstreamOptions(
  settings: Pick<Settings, 'inferenceUpstreams' | 'upstreamTimeoutSeconds'>,
  deps: { clock: Clock; newId: IdGenerator; credentials?: ProviderCredentials; providers?: ProviderClientSettings },
): UpstreamOptions {
  const transport = nodeHttpTransport();
  return {
    upstreams: settings.inferenceUpstreams,
    transport,
    clientFor: providerClients({
      transport,
      region: deps.providers?.region ?? 'us-east-1',
      bedrock: (endpoint, region) => bedrockClient(endpoint, region, deps.providers?.bedrock),
    }),
    development: developmentProvider(deps.clock, deps.newId),
    developmentName: DEVELOPMENT_PROVIDER,
    credentials: deps.credentials ?? NO_CREDENTIALS,
    timeoutMs: settings.upstreamTimeoutSeconds * 1000,
  };
}
