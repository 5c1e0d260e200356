import { compiledQueries, createDispatcher, type Operations } from '../http/dispatcher';
import { bodyValidators, queryValidators, type RequestBodies, type RequestQueries } from '../openapi/validators/management.generated';
import type { ManagementDeps } from './operation';
import type { ManagementRoute } from './routes';
import { ACTIVITY_OPERATIONS } from './operations/activity';
import { CURRENT_KEY_OPERATIONS } from './operations/current-key';
import { GENERATION_OPERATIONS } from './operations/generations';
import { EVENT_OPERATIONS } from './operations/events';
import { GUARDRAIL_OPERATIONS } from './operations/guardrails';
import { ISSUER_OPERATIONS } from './operations/issuers';
import { KEY_OPERATIONS } from './operations/keys';
import { POLICY_OPERATIONS } from './operations/policies';
import { WORKSPACE_BUDGET_OPERATIONS } from './operations/workspace-budgets';
import { WORKSPACE_OPERATIONS } from './operations/workspaces';

export type { ManagementDeps } from './operation';

/** The operation of every management route, bound by the operation id its declaration gives. */
const OPERATIONS: Operations<ManagementRoute, ManagementDeps, RequestQueries, RequestBodies> = {
  ...CURRENT_KEY_OPERATIONS,
  ...GENERATION_OPERATIONS,
  ...ACTIVITY_OPERATIONS,
  ...KEY_OPERATIONS,
  ...WORKSPACE_OPERATIONS,
  ...WORKSPACE_BUDGET_OPERATIONS,
  ...GUARDRAIL_OPERATIONS,
  ...ISSUER_OPERATIONS,
  ...POLICY_OPERATIONS,
  ...EVENT_OPERATIONS,
};

/**
 * The management API, through the dispatcher (lambdas/http/dispatcher.ts): find the route,
 * authenticate, check the credential against the route's declared access, count a token
 * verification against the per-address budget where the route says it verifies subject
 * tokens, validate the query string and body with the route's schemas, then run its
 * operation, which works on the caller's organization only.
 */
export function createManagementApi(routes: readonly ManagementRoute[], deps: ManagementDeps) {
  return createDispatcher({
    routes,
    authentication: deps,
    queries: compiledQueries(routes, queryValidators),
    bodies: bodyValidators,
    exchangeRate: deps.exchangeRate,
    operations: OPERATIONS,
    deps,
  });
}
