import { createSocket } from 'node:dgram';
import type { ExchangeDependencies } from '../../lambdas/federation/evaluate-exchange';
import type { ExchangeEventStore } from '../../lambdas/federation/exchange-events';
import { createTelemetry } from '../../lambdas/observability/telemetry';
import type { LocalSigner } from '../../lambdas/signing/local-signer';
import { TRACING_ENVIRONMENT } from '../../lib/constructs/service-function';
import { MemoryJtiStore } from '../../test/support/memory-jti-store';
import { MemoryRateCounterStore } from '../../test/support/memory-rate-counter-store';
import { context, proxyEvent } from './fixtures';
import { buildHandler } from './handler';
import { medians, withDiscardedStdout } from './timing';

/**
 * The handler with the Lambda telemetry and tracing on, as a function runs in AWS: the
 * variables the Lambda runtime sets for an invocation with active tracing, the stack's tracing
 * environment, and a UDP socket standing in for the X-Ray daemon.
 */
export async function tracedRow(
  dir: string,
  deps: { evaluation: ExchangeDependencies; signer: LocalSigner; body: string; next: () => number; events: ExchangeEventStore },
): Promise<number> {
  const daemon = createSocket('udp4');
  let documents = 0;
  daemon.on('message', () => documents++);
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  try {
    Object.assign(process.env, {
      ...TRACING_ENVIRONMENT,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      LAMBDA_TASK_ROOT: dir,
      _HANDLER: 'index.handler',
      _X_AMZN_TRACE_ID: 'Root=1-6740f1a2-5b3c4d5e6f708192a3b4c5d6;Parent=53995c3f42cd8ad8;Sampled=1',
      AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as { port: number }).port}`,
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
    });
    const tracedTelemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: 'INFO' });
    if (!tracedTelemetry.tracer?.isTracingEnabled()) throw new Error('tracing did not start');
    const handler = buildHandler({
      telemetry: tracedTelemetry,
      evaluation: deps.evaluation,
      signer: async () => deps.signer,
      stores: {
        rateCounters: new MemoryRateCounterStore(),
        jtis: new MemoryJtiStore(),
        events: deps.events,
      },
    });
    const { traced: tracedMs } = await withDiscardedStdout(() => medians({ traced: () => handler(proxyEvent(deps.body, deps.next()), context) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (documents === 0) throw new Error('no segment reached the X-Ray daemon stand-in');
    return tracedMs;
  } finally {
    daemon.close();
  }
}
