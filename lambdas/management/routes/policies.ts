import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';

/**
 * Federation policies (docs/reference.md#federation-policies), and what the settings page's policy editor asks first:
 * the policy tester (never mints), the save-time condition checker, and the entitlement.
 */
export const POLICY_ROUTES = [
  {
    operationId: 'listWorkloadIdentityPolicies',
    method: 'GET',
    path: '/workload-identity/policies',
    function: 'management',
    access: 'management-read',
    summary: 'List federation policies',
    query: [{ name: 'issuer_id', schema: { type: 'string', format: 'uuid' }, description: 'Only policies of this issuer.' }],
    ok: { status: 200, schema: ref('ListFederationPoliciesResponse') },
    errors: [400],
  },
  {
    operationId: 'createFederationPolicy',
    method: 'POST',
    path: '/workload-identity/policies',
    function: 'management',
    access: 'management-write',
    summary: 'Create one of the federation policies',
    body: ref('CreatePolicyRequest'),
    ok: { status: 201, schema: ref('FederationPolicyResponse') },
    errors: [400, 409],
  },
  {
    operationId: 'getFederationPolicy',
    method: 'GET',
    path: '/workload-identity/policies/{id}',
    function: 'management',
    access: 'management-read',
    summary: 'One of the federation policies',
    ok: { status: 200, schema: ref('FederationPolicyResponse') },
    errors: [404],
  },
  {
    operationId: 'updateFederationPolicy',
    method: 'PATCH',
    path: '/workload-identity/policies/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Update one of the federation policies',
    body: ref('UpdatePolicyRequest'),
    ok: { status: 200, schema: ref('FederationPolicyResponse') },
    errors: [400, 404, 409],
  },
  {
    operationId: 'deleteFederationPolicy',
    method: 'DELETE',
    path: '/workload-identity/policies/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Delete one of the federation policies',
    ok: { status: 200, schema: ref('DeletedResponse') },
    errors: [404],
  },
  {
    operationId: 'evaluateFederationPolicy',
    method: 'POST',
    path: '/workload-identity/policies/{id}/evaluate',
    function: 'management',
    // Read access suffices: the tester changes nothing.
    access: 'management-read',
    summary: 'Test a JWT against a policy without issuing a token',
    body: ref('EvaluatePolicyRequest'),
    ok: { status: 200, schema: ref('PolicyEvaluationResponse') },
    errors: [400, 404],
    // It shares the token endpoint's budget, so it cannot be used to get around it.
    verifiesSubjectTokens: true,
  },
  {
    operationId: 'checkCondition',
    method: 'POST',
    path: '/workload-identity/conditions/check',
    function: 'management',
    // Read access suffices: the checker stores nothing.
    access: 'management-read',
    summary: 'Check a CEL condition before saving it',
    body: ref('ConditionCheckRequest'),
    ok: { status: 200, schema: ref('ConditionCheckResponse') },
    errors: [400],
  },
  {
    operationId: 'getWorkloadIdentityEntitlement',
    method: 'GET',
    path: '/workload-identity/entitlement',
    function: 'management',
    access: 'management-read',
    summary: 'Whether workload identity federation is available to the organization',
    ok: { status: 200, schema: ref('EntitlementResponse') },
  },
] as const satisfies readonly RouteDefinition[];
