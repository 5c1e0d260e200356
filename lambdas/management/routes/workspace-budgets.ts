import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';
import { WORKSPACE_ID_OR_SLUG } from './workspaces';

/** `{id}` and `{interval}` of `/workspaces/{id}/budgets/{interval}`: the workspace's id or slug, and the budget's interval. */
const BUDGET_PATH = { ...WORKSPACE_ID_OR_SLUG, interval: ref('WorkspaceBudgetInterval') } as const;

/**
 * A workspace's budgets (public `/workspaces/{id}/budgets`; docs/limits.md): pooled caps on what
 * its keys spend, one per interval. Declared at the end of the registry (lambdas/routes.ts says why).
 */
export const WORKSPACE_BUDGET_ROUTES = [
  {
    operationId: 'listWorkspaceBudgets',
    method: 'GET',
    path: '/workspaces/{id}/budgets',
    function: 'management',
    access: 'management-read',
    summary: "A workspace's budgets (by its id or its slug), narrowest interval first",
    pathParameters: WORKSPACE_ID_OR_SLUG,
    ok: { status: 200, schema: ref('ListWorkspaceBudgetsResponse') },
    errors: [404],
  },
  {
    operationId: 'getWorkspaceBudget',
    method: 'GET',
    path: '/workspaces/{id}/budgets/{interval}',
    function: 'management',
    access: 'management-read',
    summary: "One of a workspace's budgets, by its interval; a 404 when the workspace has none for it",
    pathParameters: BUDGET_PATH,
    ok: { status: 200, schema: ref('GetWorkspaceBudgetResponse') },
    // 400: not an interval.
    errors: [400, 404],
  },
  {
    operationId: 'upsertWorkspaceBudget',
    method: 'PUT',
    path: '/workspaces/{id}/budgets/{interval}',
    function: 'management',
    access: 'management-write',
    summary:
      "Set one of a workspace's budgets: created, or given a new amount (its id, creation time and window kept). Wider intervals keep larger budgets (lifetime > monthly > weekly > daily); include_byok_in_budgets, when given, is the workspace's, for every interval",
    pathParameters: BUDGET_PATH,
    body: ref('UpsertWorkspaceBudgetRequest'),
    ok: { status: 200, schema: ref('UpsertWorkspaceBudgetResponse') },
    // 409: too many changes of the workspace at once (retry).
    errors: [400, 404, 409],
  },
  {
    operationId: 'deleteWorkspaceBudget',
    method: 'DELETE',
    path: '/workspaces/{id}/budgets/{interval}',
    function: 'management',
    access: 'management-write',
    summary: "Remove one of a workspace's budgets; one it does not have is removed already",
    pathParameters: BUDGET_PATH,
    ok: { status: 200, schema: ref('DeleteWorkspaceBudgetResponse') },
    errors: [400, 404, 409],
  },
] as const satisfies readonly RouteDefinition[];
