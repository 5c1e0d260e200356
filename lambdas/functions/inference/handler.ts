import type { FunctionRequirements } from '../../config';
import { streamingHandler, type StreamingHandler } from '../../http/streaming';
import { createInferenceApi, type InferenceApiDeps } from '../../inference/inference-api';
import { logRequest } from '../../http/request-log';
import type { Telemetry } from '../../observability/telemetry';
import { routesOf } from '../../routes';

/** docs/reference.md#scopes-and-access: API keys and the catalog, read-only; usage counters; the upstreams configuration names. */
export const INFERENCE_FUNCTION = {
  tables: ['keys', 'models', 'usage', 'rateCounters', 'responses'],
  settings: [
    'apiBaseUrl',
    'accessTokenMaxLifetimeSeconds',
    // Completions are routed within the region of the hostname called (docs/reference.md#listing-rules rule 4), over the same catalog.
    'regionalHostnames',
    'catalogCacheSeconds',
    'catalogReloadSpreadSeconds',
    'inferenceUpstreams',
    'upstreamTimeoutSeconds',
    'responseRetentionDays',
    'providerCredentialsSecretArn',
    'corsAllowedOrigins',
  ],
} as const satisfies FunctionRequirements;

/** What the inference handler uses: its operation's dependencies (their logger is the telemetry's), and a clock for the request line. */
export interface InferenceHandlerDeps extends Omit<InferenceApiDeps, 'logger'> {
  telemetry: Telemetry;
  /** Milliseconds on a monotonic clock, for the request line's latency. @default performance.now */
  elapsed?: () => number;
}

/**
 * `POST /chat/completions`, a streaming function (`awslambda.streamifyResponse`): API
 * Gateway relays its bytes as they are written (`responseTransferMode: STREAM`). Middy's
 * Powertools middlewares wrap buffered handlers only, so this wrapper does their part:
 * Lambda context on log lines, one request line, the request metric, metrics flushed.
 */
export function createInferenceHandler(deps: InferenceHandlerDeps): StreamingHandler {
  const { telemetry } = deps;
  const elapsed = deps.elapsed ?? (() => performance.now());
  const api = createInferenceApi(routesOf('inference'), { ...deps, logger: { error: (message, fields) => telemetry.logger.error(message, fields) } });
  return streamingHandler(async (event, stream, context) => {
    const started = elapsed();
    telemetry.logger.addContext(context);
    telemetry.metrics.captureColdStartMetric(context.functionName);
    let status = 500;
    try {
      // The operation returns once its answer has ended: nothing it does is after the caller's last byte.
      status = await api(event, stream, context);
    } finally {
      // The request metric is in the invocation's own metrics, so the flush below always has one to publish.
      logRequest(telemetry, event, status, elapsed() - started);
      telemetry.metrics.publishStoredMetrics();
    }
  });
}
