import { randomId, systemClock } from '../../lambdas/clock';
import { DpopChecker } from '../../lambdas/credentials/dpop-binding';
import { evaluateExchange, type ExchangeDependencies } from '../../lambdas/federation/evaluate-exchange';
import { createTokenExchangeHandler } from '../../lambdas/functions/token-exchange/handler';
import { createTelemetry, SERVICE_NAME } from '../../lambdas/observability/telemetry';
import type { ActiveSigner } from '../../lambdas/signing/active-signer';
import type { LocalSigner } from '../../lambdas/signing/local-signer';
import { ReadableLogger } from '../../local/readable-logger';
import { MemoryProofReplayStore } from '../../test/support/memory-proof-replay-store';
import { API_BASE_URL } from './fixtures';

// Log lines at ERROR only, written nowhere: the per-request info line is not what is measured.
const telemetry = createTelemetry({
  functionName: 'tokenExchange',
  logLevel: 'ERROR',
  localLogger: new ReadableLogger({ serviceName: SERVICE_NAME, logLevel: 'ERROR' }, () => undefined),
});

/** The token endpoint's Lambda handler, middlewares included. */
type Handler = ReturnType<typeof createTokenExchangeHandler>;
type Telemetry = ReturnType<typeof createTelemetry>;

/** The handler over these records, signer and stores; telemetry as the local runtime has it unless given. */
export function buildHandler(deps: {
  telemetry?: Telemetry;
  evaluation: ExchangeDependencies;
  signer: () => Promise<LocalSigner | Awaited<ReturnType<ActiveSigner['signer']>>>;
  stores: Pick<Parameters<typeof createTokenExchangeHandler>[0], 'rateCounters' | 'jtis' | 'events'>;
}): Handler {
  return createTokenExchangeHandler({
    corsAllowedOrigins: ['*'],
    config: { issuer: API_BASE_URL, maxLifetimeSeconds: 900, rateLimit: { limit: 1_000_000, windowSeconds: 60 } },
    clock: systemClock,
    newId: randomId,
    proofs: new DpopChecker({ apiBaseUrl: API_BASE_URL, servedHostnames: [], replays: new MemoryProofReplayStore(), clock: systemClock }),
    evaluate: (request) => evaluateExchange(deps.evaluation, request),
    signer: deps.signer,
    telemetry: deps.telemetry ?? telemetry,
    ...deps.stores,
  });
}
