import type { ExchangeEvaluation, RefusalReason, SubjectClaims } from '../../lambdas/federation/exchange-types';
import type { FederationIssuer, FederationPolicy } from '../../lambdas/federation/types';
import { makeIssuer, makePolicy } from './federation-fixtures';

export const ORG_ID = '4d7b6f1e-2c1a-4c5e-9a51-0b7c1f3e2d10';
export const POLICY_ID = '6a0f2b8e-7d3c-4b1a-8e9f-1c2d3e4f5a6b';
export const ISSUER_ID = '9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b';
export const KEY_HASH = 'a'.repeat(64);

const CREATED_AT = '2026-11-01T00:00:00.000Z';

export function policyFixture(overrides: Partial<FederationPolicy> = {}): FederationPolicy {
  return makePolicy({
    id: POLICY_ID,
    organizationId: ORG_ID,
    name: 'deploy workflow',
    issuerId: ISSUER_ID,
    subject: 'repo:acme/app:ref:refs/heads/main',
    apiKeyHash: KEY_HASH,
    createdAt: CREATED_AT,
    ...overrides,
  });
}

export function issuerFixture(overrides: Partial<FederationIssuer> = {}): FederationIssuer {
  return makeIssuer({ id: ISSUER_ID, organizationId: ORG_ID, createdAt: CREATED_AT, ...overrides });
}

/** A passing evaluation, as the verifier returns it for a good subject token. */
export function passingEvaluation(
  claims: Partial<SubjectClaims> = {},
  { policy = policyFixture(), issuer = issuerFixture() }: { policy?: FederationPolicy; issuer?: FederationIssuer } = {},
): ExchangeEvaluation {
  return {
    result: 'pass',
    reason: null,
    steps: [],
    policy,
    issuer,
    organization: null,
    key: null,
    claims: { sub: policy.subject ?? 'workload', aud: [policy.audience], exp: 0, iat: null, jti: null, scopes: undefined, token_type: undefined, ...claims },
    unverifiedSubject: null,
  };
}

/** A refusal; `policy` null when the policy id names no policy. */
export function failingEvaluation(reason: RefusalReason, { policy = policyFixture() as FederationPolicy | null, unverifiedSubject = 'repo:acme/app:ref:refs/heads/main' } = {}): ExchangeEvaluation {
  return {
    result: 'fail',
    reason,
    steps: [],
    policy,
    issuer: policy ? issuerFixture() : null,
    organization: null,
    key: null,
    claims: null,
    unverifiedSubject: policy ? unverifiedSubject : null,
  };
}
