import type { Clock, IdGenerator } from '../clock';
import { DEVELOPMENT_PROVIDER, type Settings } from '../settings';
import { developmentProvider } from './development-provider';
import { nodeHttpTransport } from './http-transport';
import { NO_CREDENTIALS, type ProviderCredentials, type UpstreamOptions } from './upstream';

/**
 * Where completions go, as both composition roots build it: HTTP providers through Node's
 * HTTP client (lambdas/inference/http-transport.ts), the development provider in process,
 * credentials from the given source. Built once per function instance: its connections are
 * kept alive between invocations.
 */
export function upstreamOptions(
  settings: Pick<Settings, 'inferenceUpstreams' | 'upstreamTimeoutSeconds'>,
  deps: { clock: Clock; newId: IdGenerator; credentials?: ProviderCredentials },
): UpstreamOptions {
  return {
    upstreams: settings.inferenceUpstreams,
    transport: nodeHttpTransport(),
    development: developmentProvider(deps.clock, deps.newId),
    developmentName: DEVELOPMENT_PROVIDER,
    credentials: deps.credentials ?? NO_CREDENTIALS,
    timeoutMs: settings.upstreamTimeoutSeconds * 1000,
  };
}
