import type { ApiKeyRecord, Organization } from '../accounts/types';
import { Refusal as TokenRefusal, TOKEN_REFUSAL_REASONS } from '../credentials/token-refusal';
import type { FederationIssuer, FederationPolicy } from './types';

/**
 * The outcome of evaluating one subject token against one federation policy (docs/reference.md#subject-tokens, docs/reference.md#conditions),
 * shared by the token endpoint (which hides the reason from the workload and records it in
 * the exchange event) and the policy tester (which shows every step to the admin).
 */

/** Stable reason codes of a refused exchange, recorded in exchange events (docs/workload-identity.md lists them). */
export const REFUSAL_REASONS = [
  'policy_not_found',
  'policy_paused',
  'issuer_deleted',
  'no_entitlement',
  'key_disabled',
  'key_deleted',
  'key_expired',
  ...TOKEN_REFUSAL_REASONS,
  'claim_too_large',
  'claim_check_failed',
  'condition_false',
  'condition_error',
  'scope_mismatch',
  'replayed',
  'rate_limited',
  'issuance_failed',
  'dpop_proof_invalid',
  'dpop_proof_replayed',
  'dpop_proof_required',
] as const;
/** One of {@link REFUSAL_REASONS}. */
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/**
 * Why one step refused the token: the reason recorded in the event, and the detail the admin
 * sees. The class of the token checks shared with access tokens (lambdas/credentials/), here
 * with the exchange's reasons.
 */
export type Refusal = TokenRefusal<RefusalReason>;
/** The shared refusal class, constructed with one of the exchange's reasons. */
export const Refusal: new (reason: RefusalReason, detail: string) => Refusal = TokenRefusal;

/** Step names, in evaluation order, as the policy tester shows them. */
export const EXCHANGE_STEP_NAMES = [
  'size_limits',
  'policy_state',
  'signature',
  'iss',
  'aud',
  'sub',
  'claim_check:scopes',
  'claim_check:token_type',
  'condition',
] as const;
/** One of {@link EXCHANGE_STEP_NAMES}. */
export type ExchangeStepName = (typeof EXCHANGE_STEP_NAMES)[number];

/** The policy tester's steps: the exchange's, then the token's binding (RFC 9449 DPoP). */
export const TESTER_STEP_NAMES = [...EXCHANGE_STEP_NAMES, 'dpop'] as const;

/** One step of an evaluation as the policy tester shows it: passed, failed, or not reached. */
export interface ExchangeStep {
  name: ExchangeStepName | 'dpop';
  status: 'passed' | 'failed' | 'not_reached';
  /** For the admin: what was compared, or why it failed. Never a token or signature. */
  detail: string;
}

/** The verified claims the exchange carries forward (nothing secret). */
export interface SubjectClaims {
  sub: string;
  aud: string[];
  /** Whole epoch seconds: the token's `exp` with its fraction dropped (RFC 7519 allows one). */
  exp: number;
  /** Whole epoch seconds, or null when the token has no `iat`. */
  iat: number | null;
  jti: string | null;
  scopes: unknown;
  token_type: unknown;
}

/** The outcome of an evaluation: the result, the reason of a refusal, every step, and what was resolved. */
export interface ExchangeEvaluation {
  result: 'pass' | 'fail';
  /** Null when the result is `pass`. */
  reason: RefusalReason | null;
  steps: ExchangeStep[];
  /** Whatever could be resolved, for the event record and minting. */
  policy: FederationPolicy | null;
  issuer: FederationIssuer | null;
  organization: Organization | null;
  key: ApiKeyRecord | null;
  /** Present once the signature has been verified. */
  claims: SubjectClaims | null;
  /** Unverified `sub`, for the event record when verification failed (at most 512 chars). */
  unverifiedSubject: string | null;
}
