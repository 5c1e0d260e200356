import { ConditionError, checkCondition } from '../../federation/condition';
import { testPolicy } from '../../federation/policy-tester';
import { hasFederationEntitlement } from '../../federation/types';
// docs/reference.md#limits: the subject token limit of the token endpoint applies to the tester too.
import { MAX_SUBJECT_TOKEN_BYTES } from '../../federation/limits';
import { invalidParameter } from '../../errors';
import { pathId } from '../../ids';
import { proofRequest } from '../../http/request';
import type { POLICY_ROUTES } from '../routes/policies';
import { orgOf, type Operations } from '../operation';
import { policyView } from '../views';

const policyId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Policy');

/** The federation service also validates policy bodies by their schema: the operator CLI hands it bodies too. */
export const POLICY_OPERATIONS: Operations<typeof POLICY_ROUTES> = {
  listWorkloadIdentityPolicies: async ({ principal, query, deps }) => {
    const policies = await deps.federation.listPolicies(orgOf(principal), query.issuer_id);
    return { data: policies.map(policyView), total_count: policies.length };
  },
  createFederationPolicy: async ({ principal, body, deps }) => ({ data: policyView(await deps.federation.createPolicy(orgOf(principal), body)) }),
  getFederationPolicy: async ({ principal, params, deps }) => ({ data: policyView(await deps.federation.getPolicy(orgOf(principal), policyId(params))) }),
  updateFederationPolicy: async ({ principal, body, params, deps }) =>
    ({ data: policyView(await deps.federation.updatePolicy(orgOf(principal), policyId(params), body)) }),
  deleteFederationPolicy: async ({ principal, params, deps }) => {
    await deps.federation.deletePolicy(orgOf(principal), policyId(params));
    return { deleted: true };
  },
  // Counted against the token endpoint's per-address budget first (its route says so).
  evaluateFederationPolicy: async ({ principal, body, params, event, deps }) => {
    const id = policyId(params);
    const subjectToken = body.subject_token;
    // The schema counts characters; the limit is in bytes.
    if (Buffer.byteLength(subjectToken, 'utf8') > MAX_SUBJECT_TOKEN_BYTES) {
      throw invalidParameter('subject_token', `must be at most ${MAX_SUBJECT_TOKEN_BYTES} bytes`);
    }
    // Found in the caller's organization first: another organization's policy is a 404.
    const policy = await deps.federation.getPolicy(orgOf(principal), id);
    // A proof is judged as the token endpoint on this request's host would judge it.
    const outcome = await testPolicy(deps.policyTester, policy, { subjectToken, dpopProof: body.dpop_proof, calledAt: proofRequest(event) });
    return {
      data: { result: outcome.result, expires_in: outcome.expiresIn, token_type: outcome.tokenType, dpop_jkt: outcome.dpopJkt, steps: outcome.steps },
    };
  },
  checkCondition: async ({ body }) => {
    // docs/reference.md#conditions rules 1-3: the save-time checker itself, so the page shows exactly what saving would say.
    try {
      const checked = checkCondition(body.condition);
      return { data: { valid: true, message: null, variables: checked.variables } };
    } catch (error) {
      if (error instanceof ConditionError) return { data: { valid: false, message: error.message, variables: [] } };
      throw error;
    }
  },
  // What the settings page needs first: whether the plan includes federation, and whether
  // this credential may change anything.
  getWorkloadIdentityEntitlement: ({ principal }) => ({
    data: {
      entitled: hasFederationEntitlement(principal.organization.plan),
      plan: principal.organization.plan,
      access_level: principal.key.accessLevel,
    },
  }),
};
