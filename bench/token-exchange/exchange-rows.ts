import { randomId, systemClock } from '../../lambdas/clock';
import { DpopChecker } from '../../lambdas/credentials/dpop-binding';
import { evaluateExchange, type ExchangeDependencies } from '../../lambdas/federation/evaluate-exchange';
import type { ExchangeEventStore } from '../../lambdas/federation/exchange-events';
import { admitKey, type AdmittedKey } from '../../lambdas/federation/subject-token';
import { verifySubjectJws } from '../../lambdas/federation/subject-token-verification';
import { createTelemetry } from '../../lambdas/observability/telemetry';
import { exchangeToken, type TokenExchangeDeps } from '../../lambdas/oauth/exchange-token';
import type { LocalSigner } from '../../lambdas/signing/local-signer';
import { dpopProof, newDpopKey } from '../../local/dpop-fetch';
import { MemoryJtiStore } from '../../test/support/memory-jti-store';
import { MemoryProofReplayStore } from '../../test/support/memory-proof-replay-store';
import { MemoryRateCounterStore } from '../../test/support/memory-rate-counter-store';
import { API_BASE_URL, benchAddress, context, formBody, idpJwk, NO_PROOF, policy, proxyEvent } from './fixtures';
import { buildHandler } from './handler';
import { medians, perSecond, us, withDiscardedStdout } from './timing';

/** What every row exchanges with: the evaluation's records, the signer, the events, the subject token, and the next source address's number. */
export interface ExchangeRowsDeps {
  evaluation: ExchangeDependencies;
  signer: LocalSigner;
  events: ExchangeEventStore;
  token: string;
  next: () => number;
}

/**
 * The exchange with in-memory stores, as the handler, with the Lambda telemetry, as the domain
 * function alone (with and without a DPoP proof), and the evaluation alone, against the crypto
 * floor in the same rounds. Returns the floor.
 */
export async function exchangeRows({ evaluation, signer, events, token, next }: ExchangeRowsDeps): Promise<number> {
  // The rate counters and jti claims as the tests keep them, and the last events.
  const memoryStores = () => ({ rateCounters: new MemoryRateCounterStore(), jtis: new MemoryJtiStore(), events });
  const memoryHandler = buildHandler({ evaluation, signer: async () => signer, stores: memoryStores() });
  const body = formBody(token);
  const check = await memoryHandler(proxyEvent(body, next()), context);
  if (check.statusCode !== 200) throw new Error(`the bench exchange was refused: ${check.body}`);
  // As deployed: JSON log lines and EMF records, serialized and written to a stdout that drops them.
  const lambdaHandler = buildHandler({
    telemetry: createTelemetry({ functionName: 'tokenExchange', logLevel: 'INFO' }),
    evaluation,
    signer: async () => signer,
    stores: memoryStores(),
  });
  // Where the time goes: the decision alone, and the domain function without the Lambda middlewares.
  const domainDeps: TokenExchangeDeps = {
    config: { issuer: API_BASE_URL, maxLifetimeSeconds: 900, rateLimit: { limit: 1_000_000, windowSeconds: 60 } },
    clock: systemClock,
    newId: randomId,
    proofs: new DpopChecker({ apiBaseUrl: API_BASE_URL, servedHostnames: [], replays: new MemoryProofReplayStore(), clock: systemClock }),
    ...memoryStores(),
    evaluate: (request) => evaluateExchange(evaluation, request),
    signer: async () => signer,
    logger: { error: () => undefined },
  };
  const exchange = (deps: TokenExchangeDeps, proofs: string[] = []) =>
    exchangeToken(deps, { body, contentType: 'application/x-www-form-urlencoded', sourceIp: benchAddress(next()), requestId: 'bench', ...NO_PROOF, proofs });
  const bound = await boundExchange(domainDeps, exchange);
  // The floor: the subject token's signature checked as the exchange checks it, and one ES256 signature.
  const key = (await admitKey(idpJwk)) as AdmittedKey;
  const signingInput = Buffer.from(`${'x'.repeat(120)}.${'y'.repeat(300)}`);
  const timed = await withDiscardedStdout(() =>
    medians({
      handler: async () => void (await memoryHandler(proxyEvent(body, next()), context)),
      lambda: async () => void (await lambdaHandler(proxyEvent(body, next()), context)),
      evaluate: () => evaluateExchange(evaluation, { subjectToken: token, policyId: policy.id }),
      domain: async () => void (await exchange(domainDeps)),
      bound,
      floor: async () => {
        await verifySubjectJws(token, key.key);
        await signer.sign(signingInput);
      },
      verify: () => verifySubjectJws(token, key.key),
      sign: () => signer.sign(signingInput),
    }),
  );
  printExchangeRows(timed);
  return timed.floor;
}

/**
 * The domain function with a DPoP proof: every check runs; the replay record is a DynamoDB write
 * in the first stage, and a store in memory would refuse the proof the loop presents again.
 */
async function boundExchange(domainDeps: TokenExchangeDeps, exchange: (deps: TokenExchangeDeps, proofs: string[]) => Promise<unknown>): Promise<() => Promise<void>> {
  const dpopKey = await newDpopKey();
  const boundDeps: TokenExchangeDeps = { ...domainDeps, proofs: new DpopChecker({ apiBaseUrl: API_BASE_URL, servedHostnames: [], replays: { claim: async () => true }, clock: systemClock }) };
  let proof = { value: await dpopProof(dpopKey, 'POST', `${API_BASE_URL}/oauth/token`), signedAt: Date.now() };
  return async () => {
    // Proofs are good for 300 s; one a minute keeps the bench inside the window.
    if (Date.now() - proof.signedAt > 60_000) proof = { value: await dpopProof(dpopKey, 'POST', `${API_BASE_URL}/oauth/token`), signedAt: Date.now() };
    await exchange(boundDeps, [proof.value]);
  };
}

function printExchangeRows(timed: Record<'handler' | 'lambda' | 'evaluate' | 'domain' | 'bound' | 'floor' | 'verify' | 'sign', number>): void {
  const { handler: handlerMs, lambda: lambdaMs, evaluate: evaluateMs, domain: domainMs, bound: boundMs, floor: floorMs, verify: verifyMs, sign: signMs } = timed;
  console.log('Token exchange (POST /oauth/token), median per exchange:');
  console.log(`  handler, in-memory stores      ${us(handlerMs)}  ${perSecond(handlerMs)}`);
  console.log(`  crypto floor                   ${us(floorMs)}  ${perSecond(floorMs)}   (one jose compactVerify and one ES256 sign per iteration; alone, in tight loops: verify ${us(verifyMs).trim()}, sign ${us(signMs).trim()})`);
  console.log(`  ratio handler / floor          ${(handlerMs / floorMs).toFixed(2).padStart(10)}x   (aim: at most 2x)`);
  console.log(`  handler, Lambda telemetry      ${us(lambdaMs)}  ${perSecond(lambdaMs)}   (${(lambdaMs / floorMs).toFixed(2)}x the floor; JSON logs and EMF to a discarded stdout)`);
  console.log(`  of which: evaluateExchange     ${us(evaluateMs)}   exchangeToken (no middlewares) ${us(domainMs).trim()}`);
  console.log(`  exchangeToken with a DPoP proof ${us(boundMs)}   ${(boundMs / domainMs).toFixed(2)}x without one (one more ES256 verification; the replay write joins the first stage)`);
}
