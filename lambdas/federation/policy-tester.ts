import type { Clock } from '../clock';
import type { ExchangeRequestInput } from './evaluate-exchange';
import type { ExchangeEvaluation, ExchangeStep } from './exchange-types';
import type { FederationPolicy } from './types';

/**
 * The policy tester: runs a workload's token through the exchange's own decision
 * (SPEC 4.3, 4.4) for one policy and tells the organization's admin every step, with the
 * true reason the token endpoint hides from the workload (SPEC 7.2). It never mints a token
 * and records nothing: no exchange event, no `jti`.
 */
export interface PolicyTesterDeps {
  /** The exchange decision, bound to its stores, issuer keys and condition evaluator. */
  evaluate: (request: ExchangeRequestInput) => Promise<ExchangeEvaluation>;
  clock: Clock;
  /** SPEC 8: the longest lifetime an issued access token gets (at most 900 s). */
  maxLifetimeSeconds: number;
}

export interface PolicyTestResult {
  result: 'pass' | 'fail';
  /** The lifetime the issued token would get; null when the exchange would be refused. */
  expiresIn: number | null;
  steps: ExchangeStep[];
}

/**
 * Evaluates `subjectToken` against `policy`, which the caller has already found in the
 * admin's own organization: the tester cannot probe another organization's policies.
 */
export async function testPolicy(deps: PolicyTesterDeps, policy: FederationPolicy, subjectToken: string): Promise<PolicyTestResult> {
  const evaluation = await deps.evaluate({ subjectToken, policyId: policy.id });
  if (evaluation.result !== 'pass' || evaluation.claims === null) {
    return { result: 'fail', expiresIn: null, steps: evaluation.steps };
  }
  return { result: 'pass', expiresIn: accessTokenLifetime(evaluation.claims.exp, deps.clock.now(), deps.maxLifetimeSeconds), steps: evaluation.steps };
}

/** SPEC 5 rule 4: at most the configured maximum, never beyond the exchanged token's `exp`. */
export function accessTokenLifetime(subjectExpiresAt: number, now: Date, maxLifetimeSeconds: number): number {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return Math.max(0, Math.min(maxLifetimeSeconds, Math.floor(subjectExpiresAt) - nowSeconds));
}
