import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';
import { listPageParameters } from '../list-page';

/** Guardrails and their assignment to keys (public `/guardrails`; docs/reference.md#organizations-workspaces-and-guardrails). */
export const GUARDRAIL_ROUTES = [
  {
    operationId: 'listGuardrails',
    method: 'GET',
    path: '/guardrails',
    function: 'management',
    access: 'management-read',
    summary: 'List guardrails',
    query: [
      ...listPageParameters('guardrails'),
      { name: 'workspace_id', schema: { type: 'string', format: 'uuid' }, description: 'Only the guardrails of this workspace.' },
    ],
    ok: { status: 200, schema: ref('ListGuardrailsResponse') },
    errors: [400],
  },
  {
    operationId: 'createGuardrail',
    method: 'POST',
    path: '/guardrails',
    function: 'management',
    access: 'management-write',
    summary: 'Create one of the guardrails',
    body: ref('CreateGuardrailRequest'),
    ok: { status: 201, schema: ref('CreateGuardrailResponse') },
    // 404: a `workspace_id` the organization has no workspace by.
    errors: [400, 404, 409],
  },
  {
    operationId: 'getGuardrail',
    method: 'GET',
    path: '/guardrails/{id}',
    function: 'management',
    access: 'management-read',
    summary: 'One of the guardrails',
    ok: { status: 200, schema: ref('GetGuardrailResponse') },
    errors: [404],
  },
  {
    operationId: 'updateGuardrail',
    method: 'PATCH',
    path: '/guardrails/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Update one of the guardrails',
    body: ref('UpdateGuardrailRequest'),
    ok: { status: 200, schema: ref('UpdateGuardrailResponse') },
    errors: [400, 404, 409],
  },
  {
    operationId: 'deleteGuardrail',
    method: 'DELETE',
    path: '/guardrails/{id}',
    function: 'management',
    access: 'management-write',
    summary: 'Delete one of the guardrails',
    ok: { status: 200, schema: ref('DeleteGuardrailResponse') },
    errors: [404],
  },
  {
    operationId: 'bulkAssignKeysToGuardrail',
    method: 'POST',
    path: '/guardrails/{id}/assignments/keys',
    function: 'management',
    access: 'management-write',
    summary: 'Assign API keys to a guardrail',
    body: ref('BulkAssignKeysRequest'),
    ok: { status: 200, schema: ref('BulkAssignKeysResponse') },
    errors: [400, 404],
  },
  {
    operationId: 'bulkUnassignKeysFromGuardrail',
    method: 'POST',
    path: '/guardrails/{id}/assignments/keys/remove',
    function: 'management',
    access: 'management-write',
    summary: 'Remove API keys from a guardrail',
    body: ref('BulkUnassignKeysRequest'),
    ok: { status: 200, schema: ref('BulkUnassignKeysResponse') },
    errors: [400, 404],
  },
] as const satisfies readonly RouteDefinition[];

/**
 * The key assignments of guardrails (public `listGuardrailKeyAssignments`, `listKeyAssignments`):
 * declared after the routes above, at the end of the registry (lambdas/routes.ts says why).
 */
export const KEY_ASSIGNMENT_ROUTES = [
  {
    operationId: 'listGuardrailKeyAssignments',
    method: 'GET',
    path: '/guardrails/{id}/assignments/keys',
    function: 'management',
    access: 'management-read',
    summary: 'List the API keys one guardrail is assigned to',
    query: listPageParameters('assignments'),
    ok: { status: 200, schema: ref('ListKeyAssignmentsResponse') },
    errors: [400, 404],
  },
  {
    operationId: 'listKeyAssignments',
    method: 'GET',
    path: '/guardrails/assignments/keys',
    function: 'management',
    access: 'management-read',
    summary: "List every guardrail's assignments to API keys",
    query: listPageParameters('assignments'),
    ok: { status: 200, schema: ref('ListKeyAssignmentsResponse') },
    errors: [400],
  },
] as const satisfies readonly RouteDefinition[];
