import type { ProofChecker, ProofRequest } from '../credentials/authenticate';
import { API_BASE_PATH } from '../base-paths';
import type { Clock } from '../clock';
import { DpopProofError } from '../credentials/dpop-proof';
import type { ExchangeRequestInput } from './evaluate-exchange';
import type { ExchangeEvaluation, ExchangeStep } from './exchange-types';
import type { FederationPolicy } from './types';

/**
 * The policy tester: runs a workload's token through the exchange's own decision
 * (docs/reference.md#subject-tokens, docs/reference.md#conditions) for one policy and tells the organization's admin every step, with the
 * true reason the token endpoint hides from the workload (docs/reference.md#oauth-errors). It never mints a token
 * and records nothing: no exchange event, no `jti`.
 */
export interface PolicyTesterDeps {
  /** The exchange decision, bound to its stores, issuer keys and condition evaluator. */
  evaluate: (request: ExchangeRequestInput) => Promise<ExchangeEvaluation>;
  clock: Clock;
  /** docs/reference.md#limits: the longest lifetime an issued access token gets (at most 900 s). */
  maxLifetimeSeconds: number;
  /** Checks a DPoP proof as the token endpoint does; the tester never claims it. */
  proofs: Pick<ProofChecker, 'check'>;
}

/** What the tester answers: whether the exchange would pass, the token it would issue, every step. */
export interface PolicyTestResult {
  result: 'pass' | 'fail';
  /** The lifetime the issued token would get; null when the exchange would be refused. */
  expiresIn: number | null;
  /** The token the exchange would issue (RFC 9449): DPoP with a valid proof, else Bearer; null on fail. */
  tokenType: 'DPoP' | 'Bearer' | null;
  /** The thumbprint of the proof key the token would be bound to. */
  dpopJkt: string | null;
  steps: ExchangeStep[];
}

/** What the tester is asked to judge, and where it was asked. */
export interface PolicyTestInput {
  subjectToken: string;
  /** A DPoP proof made for `POST` to the token endpoint. */
  dpopProof?: string;
  /** The tester request's own path, stage URL and `Host`: the exchange it stands for is sent to the same host. */
  calledAt: Pick<ProofRequest, 'path' | 'stageUrl' | 'host'>;
}

/** The token endpoint's path, which a proof for the exchange names in `htu`. */
const TOKEN_PATH = `${API_BASE_PATH}/oauth/token`;

/**
 * Evaluates `subjectToken` against `policy`, which the caller has already found in the
 * admin's own organization: the tester cannot probe another organization's policies.
 */
export async function testPolicy(deps: PolicyTesterDeps, policy: FederationPolicy, input: PolicyTestInput): Promise<PolicyTestResult> {
  const [evaluation, { jkt, ...binding }] = await Promise.all([
    deps.evaluate({ subjectToken: input.subjectToken, policyId: policy.id }),
    checkBinding(deps, policy, input.dpopProof, tokenEndpointRequest(input.calledAt)),
  ]);
  // The binding is the exchange's last decision: after a refusal it is not reached, unless the proof itself fails.
  const bindingStep: ExchangeStep = evaluation.result === 'pass' || binding.status === 'failed' ? binding : { ...binding, status: 'not_reached' };
  const steps = [...evaluation.steps, bindingStep];
  if (evaluation.result !== 'pass' || evaluation.claims === null || binding.status !== 'passed') {
    return { result: 'fail', expiresIn: null, tokenType: null, dpopJkt: jkt, steps };
  }
  return {
    result: 'pass',
    expiresIn: accessTokenLifetime(evaluation.claims.exp, deps.clock.now(), deps.maxLifetimeSeconds),
    tokenType: jkt === null ? 'Bearer' : 'DPoP',
    dpopJkt: jkt,
    steps,
  };
}

/**
 * The `dpop` step: the token's binding (RFC 9449). A valid proof binds it; an invalid one fails
 * whatever the policy says; none is a Bearer token, or a refusal when the policy requires DPoP.
 */
async function checkBinding(
  deps: PolicyTesterDeps,
  policy: FederationPolicy,
  proof: string | undefined,
  exchange: ProofRequest,
): Promise<ExchangeStep & { jkt: string | null }> {
  const step = (status: ExchangeStep['status'], detail: string, jkt: string | null = null) => ({ name: 'dpop' as const, status, detail, jkt });
  if (proof === undefined) {
    return policy.requireDpop
      ? step('failed', 'The policy issues DPoP-bound tokens only: the exchange needs a DPoP proof')
      : step('passed', 'No DPoP proof: the exchange issues a Bearer token');
  }
  try {
    const { jkt } = await deps.proofs.check([proof], exchange);
    return step('passed', `The token is bound to the proof key with thumbprint ${jkt} (cnf.jkt)`, jkt);
  } catch (error) {
    if (error instanceof DpopProofError) return step('failed', error.description);
    throw error;
  }
}

/**
 * The exchange request the tester stands for: `POST` to the token endpoint on the host, base-path
 * mapping and stage the tester was called on. A proof is judged as the token endpoint judges one
 * sent there (`publicRequestUrls`, lambdas/credentials/dpop-binding.ts): its `htu` may name the API
 * base URL, or that host when the deployment serves it (a regional hostname), or in AWS that stage URL.
 */
export function tokenEndpointRequest(calledAt: PolicyTestInput['calledAt']): ProofRequest {
  const stageUrl = calledAt.stageUrl === undefined ? undefined : onTokenEndpoint(calledAt.stageUrl);
  return { method: 'POST', path: onTokenEndpoint(calledAt.path) ?? TOKEN_PATH, stageUrl, host: calledAt.host };
}

/** A path or URL with what follows the API base path replaced by the token endpoint's path. */
function onTokenEndpoint(url: string): string | undefined {
  const at = url.indexOf(`${API_BASE_PATH}/`);
  return at === -1 ? undefined : `${url.slice(0, at)}${TOKEN_PATH}`;
}

/** docs/reference.md#scopes-and-access rule 4: at most the configured maximum, never beyond the exchanged token's `exp`. */
export function accessTokenLifetime(subjectExpiresAt: number, now: Date, maxLifetimeSeconds: number): number {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return Math.max(0, Math.min(maxLifetimeSeconds, Math.floor(subjectExpiresAt) - nowSeconds));
}
