import type { ProofChecker, RequestProofs } from '../credentials/authenticate';
import type { Clock, IdGenerator } from '../clock';
import { EXCHANGE_EVENT_RETENTION_DAYS, type ExchangeEvent, type ExchangeEventStore } from '../federation/exchange-events';
import type { ExchangeEvaluation, RefusalReason, SubjectClaims } from '../federation/exchange-types';
import type { JtiStore } from '../federation/jti-replay';
import type { FederationPolicy } from '../federation/types';
import type { Signer } from '../signing/signer';
import { mintAccessToken, NoLifetimeLeftError, type MintedToken } from './access-token';
import { checkExchangeRate, knownRefusal, type ExchangeRateLimit, type RateCounterStore } from './exchange-rate-limit';
import { DpopProofError, type VerifiedProof } from '../credentials/dpop-proof';
import { invalidDpopProof, invalidGrant, invalidScope, temporarilyUnavailable, tooManyRequests, type OAuthError } from './oauth-errors';
import { ACCESS_TOKEN_TYPE, parseTokenExchangeRequest, type TokenExchangeRequest } from './token-request';

/** docs/reference.md#oauth-errors: one message for every grant failure, so another organization's configuration cannot be probed. */
export const INVALID_GRANT_DESCRIPTION = 'The subject token or federation policy is not valid';

/** docs/reference.md#the-token-exchange: the success body, exactly these five members; `DPoP` for a bound token (RFC 9449 §5). */
export interface TokenResponse {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: 'inference' | 'management';
}

/** Where the exchange logs a failure on its side (a store or the signer unavailable), by request id and error name. */
export interface ExchangeLogger {
  error(message: string, fields?: Record<string, unknown>): void;
}

/** What the exchange issues tokens under: their issuer, their longest lifetime, and the per-address limit. */
export interface TokenExchangeConfig {
  /** `iss` and `aud` of issued tokens: the service's API base URL. */
  readonly issuer: string;
  readonly maxLifetimeSeconds: number;
  readonly rateLimit: ExchangeRateLimit;
}

/** What one exchange uses: its configuration, the rate counters, the policy decision, the replay stores, the event store and the signer. */
export interface TokenExchangeDeps {
  readonly config: TokenExchangeConfig;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly rateCounters: RateCounterStore;
  /** Verification and the policy decision (docs/reference.md#subject-tokens, docs/reference.md#conditions), bound to its own dependencies. */
  readonly evaluate: (request: { subjectToken: string; policyId: string; admitted?: Promise<unknown>; onPolicyRead?: () => void }) => Promise<ExchangeEvaluation>;
  readonly jtis: JtiStore;
  /** DPoP proofs (RFC 9449): checked against this request, claimed once in the replay store. */
  readonly proofs: ProofChecker;
  readonly events: ExchangeEventStore;
  /** The signer of the currently active signing key. */
  readonly signer: () => Promise<Signer>;
  readonly logger: ExchangeLogger;
  /** Told of every exchange that reached a decision (metrics). */
  readonly onOutcome?: (outcome: 'issued' | 'refused', reason: RefusalReason | null) => void;
}

/** One request to the token endpoint, as the handler takes it from the proxy event. */
export interface TokenExchangeInput extends RequestProofs {
  body: string;
  contentType: string | undefined;
  /** API Gateway's `requestContext.identity.sourceIp`, never a client-supplied header. */
  sourceIp: string;
  requestId: string;
}

/**
 * The token endpoint (docs/reference.md#the-token-exchange, RFC 8693), in the order the checks run: the per-address
 * limit, the request's shape, the subject token against the named policy, the requested
 * scope, the `jti` replay check, then minting. Every exchange whose policy id names a
 * policy is recorded as one event carrying the true reason; the workload only ever sees
 * the generic `invalid_grant`. Failures are thrown as {@link OAuthError}. Three steps, as an
 * OAuth grant handler reads: {@link admit} the request, {@link evaluate} it, {@link issue} the token.
 */
export async function exchangeToken(deps: TokenExchangeDeps, input: TokenExchangeInput): Promise<TokenResponse> {
  const now = deps.clock.now();
  // An address this container found past its limit is refused before anything is read.
  const known = knownRefusal(deps.rateCounters, input.sourceIp, now, deps.config.rateLimit);
  if (known && !known.allowed) refuseForRate(deps, known.retryAfterSeconds);
  // Three sequential round trips in all: (rate counter ∥ policy) → (issuer ∥ organization ∥
  // key) → (signature ∥ jti claim ∥ event). The signer's record is read beside the first.
  const rateChecked = enforceRateLimit(deps, input, now);
  const signer = awaitedLater(deps.signer());
  const admitted = await admit(deps, input, rateChecked);
  const decision = evaluate(admitted, now);
  if (decision instanceof GrantRefusal) {
    deps.onOutcome?.('refused', decision.reason);
    await recordRefusal(deps, input, admitted.evaluation, decision.reason, now, admitted.proof.verified?.jkt ?? null);
    throw decision.error;
  }
  return issue(deps, input, { ...admitted, ...decision, signer, now });
}

/** An exchange past the limiter: its request, the policy's decision on its subject token, and its DPoP proof. */
interface AdmittedExchange {
  request: TokenExchangeRequest;
  evaluation: ExchangeEvaluation;
  proof: ProofOutcome;
}

/**
 * The request's shape, then its DPoP proof and the policy's evaluation, once the per-address
 * limit lets it through: a proof is verified once the request is admitted (a flood past the
 * limit costs no signature checks); the evaluation goes on once it is and the policy is read, and
 * the proof's replay record is claimed then, as the issuer, organization and key reads start:
 * no stage of its own, whichever of the first stage's calls answers last.
 */
async function admit(deps: TokenExchangeDeps, input: TokenExchangeInput, rateChecked: Promise<void>): Promise<AdmittedExchange> {
  let request;
  try {
    request = parseTokenExchangeRequest(input.body, input.contentType, deps.config.issuer);
  } catch (error) {
    await rateChecked;
    throw error;
  }
  const proofChecked = rateChecked.then(() => verifyProof(deps, input));
  let policyAnswered!: () => void;
  const policyRead = new Promise<void>((resolve) => (policyAnswered = resolve));
  // Their failures when the request is not admitted are the limiter's, thrown first.
  const evaluating = awaitedLater(deps.evaluate({ subjectToken: request.subjectToken, policyId: request.federationPolicyId, admitted: proofChecked, onPolicyRead: policyAnswered }));
  // The hook is optional: an evaluator that never calls it starts the claim when it ends.
  const beside = Promise.race([policyRead, evaluating.catch(() => undefined)]);
  const proving = awaitedLater(Promise.all([proofChecked, beside]).then(([outcome]) => claimProof(deps, input, outcome)));
  await rateChecked;
  return { request, evaluation: await evaluating, proof: await proving };
}

/** A refusal of the exchange: the reason its event records, and the error the workload is told. */
class GrantRefusal {
  constructor(
    readonly reason: RefusalReason,
    readonly error: OAuthError,
  ) {}
}

/** What a passing exchange issues from. */
interface Grant {
  policy: FederationPolicy;
  claims: SubjectClaims;
  /** The DPoP key the token is bound to (its RFC 7638 thumbprint), if a proof was sent. */
  boundKey: string | undefined;
  /** The issuer remembers subject-token `jti` values (issuer `checkJti`). */
  replayChecked: boolean;
}

/** The decision on an admitted exchange, without I/O: the grant, or the first refusal that applies. */
function evaluate({ request, evaluation, proof }: AdmittedExchange, now: Date): Grant | GrantRefusal {
  // RFC 9449 §5: an invalid proof is refused whatever the policy says, before anything about the
  // policy is told; a replayed one likewise.
  if (proof.refusal) return new GrantRefusal(proof.refusal.reason, invalidDpopProof(proof.refusal.description));
  if (evaluation.result !== 'pass') {
    const reason = evaluation.reason ?? 'bad_signature';
    // docs/reference.md#oauth-errors: an issuer whose keys cannot be fetched is the one refusal worth retrying.
    if (reason === 'keys_unavailable') {
      return new GrantRefusal(reason, temporarilyUnavailable("The identity provider's keys could not be fetched; retry shortly", 5));
    }
    return new GrantRefusal(reason, refusedGrant());
  }
  const { policy, claims } = evaluation;
  if (!policy || !claims) throw new Error('A passing evaluation carries its policy and verified claims');
  // docs/reference.md#the-token-exchange: a sent scope must be exactly the one the policy grants.
  if (request.scope !== null && request.scope !== policy.scope) {
    return new GrantRefusal('scope_mismatch', invalidScope('scope must be the scope the policy grants'));
  }
  // Said only to a workload whose token the policy accepts: nothing about the policy leaks.
  if (policy.requireDpop && !proof.verified) {
    return new GrantRefusal('dpop_proof_required', invalidDpopProof('This federation policy issues DPoP-bound tokens only: send a DPoP proof (RFC 9449)'));
  }
  if (claims.exp <= Math.floor(now.getTime() / 1000)) return new GrantRefusal('expired', refusedGrant());
  const replayChecked = evaluation.issuer?.checkJti === true;
  if (replayChecked && (claims.jti === null || claims.jti === '')) return new GrantRefusal('replayed', refusedGrant());
  return { policy, claims, boundKey: proof.verified?.jkt, replayChecked };
}

interface Issuance extends AdmittedExchange, Grant {
  signer: Promise<Signer>;
  now: Date;
}

/**
 * The jti claim, the signature and the event do not depend on each other: one round trip.
 * The token is answered only once the claim and the event are durable; when either fails,
 * or the signature does, the event is rewritten to say what happened (same id and time).
 */
async function issue(deps: TokenExchangeDeps, input: TokenExchangeInput, issuance: Issuance): Promise<TokenResponse> {
  const { evaluation, policy, claims, boundKey, replayChecked, now } = issuance;
  const tokenJti = deps.newId();
  const event = exchangeEvent(deps, input, evaluation, now, { outcome: 'issued', reason: null, tokenJti, dpopJkt: boundKey ?? null });
  const [claimed, minted, recorded] = await Promise.allSettled([
    replayChecked ? deps.jtis.claim(policy.issuerId, claims.jti!, claims.exp, input.requestId, now) : Promise.resolve(true),
    mint(deps, issuance, tokenJti),
    deps.events.record(event),
  ]);
  const withdraw = async (reason: RefusalReason): Promise<void> => {
    deps.onOutcome?.('refused', reason);
    if (recorded.status === 'fulfilled') await rewriteEvent(deps, { ...event, outcome: 'refused', reason, tokenJti: null });
  };
  if (claimed.status === 'fulfilled' && claimed.value === false) {
    await withdraw('replayed');
    throw refusedGrant();
  }
  if (claimed.status === 'fulfilled' && minted.status === 'fulfilled' && recorded.status === 'fulfilled') {
    deps.onOutcome?.('issued', null);
    return {
      access_token: minted.value.token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: boundKey === undefined ? 'Bearer' : 'DPoP',
      expires_in: minted.value.expiresIn,
      scope: policy.scope,
    };
  }
  // Nothing was issued, so the subject token may be presented again.
  if (replayChecked && claimed.status === 'fulfilled') await releaseJti(deps, policy.issuerId, claims.jti!, input.requestId);
  if (minted.status === 'rejected' && minted.reason instanceof NoLifetimeLeftError) {
    await withdraw('expired');
    throw refusedGrant();
  }
  const failure = [claimed, minted, recorded].find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')!.reason as Error;
  await withdraw('issuance_failed');
  deps.logger.error('token exchange failed after the policy passed', {
    requestId: input.requestId,
    policyId: policy.id,
    error: failure.name,
    detail: failure.message,
  });
  throw temporarilyUnavailable('The access token could not be issued; retry shortly', 1);
}

/** The access token of a grant, signed by the active key once its record is read. */
async function mint(deps: TokenExchangeDeps, { signer, policy, claims, boundKey, now }: Issuance, jti: string): Promise<MintedToken> {
  return mintAccessToken(await signer, {
    issuer: deps.config.issuer,
    subject: claims.sub,
    policyId: policy.id,
    issuerId: policy.issuerId,
    apiKeyHash: policy.apiKeyHash,
    scope: policy.scope,
    subjectExpiresAt: claims.exp,
    jti,
    now: Math.floor(now.getTime() / 1000),
    maxLifetimeSeconds: deps.config.maxLifetimeSeconds,
    boundKey,
  });
}

/**
 * `promise`, its rejection marked as handled: it is awaited later, or not at all when an
 * earlier step fails first (that step's error is the one thrown).
 */
function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** The exchange's DPoP proof, if it sent one: verified and claimed, or why it is refused. */
interface ProofOutcome {
  verified?: VerifiedProof;
  refusal?: { reason: Extract<RefusalReason, 'dpop_proof_invalid' | 'dpop_proof_replayed'>; description: string };
}

/** RFC 9449 §4.3 at the token endpoint, without I/O: no proof is no binding; a sent proof must pass every check. */
async function verifyProof(deps: TokenExchangeDeps, input: TokenExchangeInput): Promise<ProofOutcome> {
  if (input.proofs.length === 0) return {};
  try {
    return { verified: await deps.proofs.check(input.proofs, { method: input.method, path: input.path, stageUrl: input.stageUrl, host: input.host }) };
  } catch (error) {
    if (!(error instanceof DpopProofError)) throw error;
    return { refusal: { reason: 'dpop_proof_invalid', description: error.description } };
  }
}

/** A verified proof is good once: its replay record is claimed (RFC 9449 §11.1). */
async function claimProof(deps: TokenExchangeDeps, input: TokenExchangeInput, outcome: ProofOutcome): Promise<ProofOutcome> {
  const { verified } = outcome;
  if (!verified || outcome.refusal) return outcome;
  let fresh: boolean;
  try {
    fresh = await deps.proofs.claim(verified);
  } catch (error) {
    // As for the rate counter: the store that would tell a replay cannot answer, so nothing is issued.
    deps.logger.error('DPoP proof replay store unavailable', { requestId: input.requestId, error: (error as Error).name });
    throw temporarilyUnavailable('The token endpoint is unavailable; retry shortly', 1);
  }
  if (!fresh) {
    return { verified, refusal: { reason: 'dpop_proof_replayed', description: 'The DPoP proof was used before: sign a new proof for every request' } };
  }
  return { verified };
}

/** docs/reference.md#oauth-errors: every refusal of the subject token or the policy reads the same on the wire. */
function refusedGrant(): OAuthError {
  return invalidGrant(INVALID_GRANT_DESCRIPTION);
}

/**
 * docs/reference.md#oauth-errors: 429 past the per-address cap. A limiter store that cannot answer closes the
 * gate (503): the exchange reads the same database, so it could not have succeeded, and an
 * open gate would let a flood through to the identity providers and the signing key.
 */
async function enforceRateLimit(deps: TokenExchangeDeps, input: TokenExchangeInput, now: Date): Promise<void> {
  let decision;
  try {
    decision = await checkExchangeRate(deps.rateCounters, input.sourceIp, now, deps.config.rateLimit);
  } catch (error) {
    deps.logger.error('exchange rate limiter unavailable', { requestId: input.requestId, error: (error as Error).name });
    throw temporarilyUnavailable('The token endpoint is unavailable; retry shortly', 1);
  }
  if (!decision.allowed) refuseForRate(deps, decision.retryAfterSeconds);
}

function refuseForRate(deps: TokenExchangeDeps, retryAfterSeconds: number): never {
  deps.onOutcome?.('refused', 'rate_limited');
  throw tooManyRequests('Too many token requests from this address', retryAfterSeconds);
}

async function recordRefusal(
  deps: TokenExchangeDeps,
  input: TokenExchangeInput,
  evaluation: ExchangeEvaluation,
  reason: RefusalReason,
  now: Date,
  dpopJkt: string | null,
): Promise<void> {
  // docs/reference.md#the-token-exchange: only an exchange whose policy id names a policy has an organization to tell.
  if (!evaluation.policy) return;
  try {
    await deps.events.record(exchangeEvent(deps, input, evaluation, now, { outcome: 'refused', reason, tokenJti: null, dpopJkt }));
  } catch (error) {
    // The refusal stands either way; the lost event is logged with what it would have said.
    deps.logger.error('exchange event not recorded', {
      requestId: input.requestId,
      policyId: evaluation.policy.id,
      reason,
      error: (error as Error).name,
    });
  }
}

function exchangeEvent(
  deps: TokenExchangeDeps,
  input: TokenExchangeInput,
  evaluation: ExchangeEvaluation,
  now: Date,
  outcome: Pick<ExchangeEvent, 'outcome' | 'reason' | 'tokenJti' | 'dpopJkt'>,
): ExchangeEvent {
  const policy = evaluation.policy!;
  return {
    id: deps.newId(),
    organizationId: policy.organizationId,
    time: now.toISOString(),
    policyId: policy.id,
    issuerId: policy.issuerId,
    ...outcome,
    subject: evaluation.claims?.sub ?? evaluation.unverifiedSubject,
    subjectVerified: evaluation.claims !== null,
    sourceIp: input.sourceIp,
    requestId: input.requestId,
    expiresAt: Math.floor(now.getTime() / 1000) + EXCHANGE_EVENT_RETENTION_DAYS * 86_400,
  };
}

/** The issued event of a token that was not issued after all, rewritten to say why (a lost rewrite is logged). */
async function rewriteEvent(deps: TokenExchangeDeps, event: ExchangeEvent): Promise<void> {
  try {
    await deps.events.record(event);
  } catch (error) {
    deps.logger.error('exchange event not rewritten', { requestId: event.requestId, policyId: event.policyId, reason: event.reason, error: (error as Error).name });
  }
}

async function releaseJti(deps: TokenExchangeDeps, issuerId: string, jti: string, claimant: string): Promise<void> {
  try {
    await deps.jtis.release(issuerId, jti, claimant);
  } catch (error) {
    deps.logger.error('jti claim not released', { claimant, error: (error as Error).name });
  }
}
