/**
 * The route registry: every route of the REST API, declared once with all that is said about
 * it (method and path, the function that serves it, who may call it, its operation id, the
 * schemas of what it takes and answers). Everything else is derived from it: API Gateway's
 * resources and methods (lib/constructs/api.ts), the local server's dispatch
 * ({@link matchRoute}), the OpenAPI document (lambdas/document/document.ts), the compiled
 * request validators (scripts/compile-request-schemas.ts) and each function's dispatch, whose
 * operations are bound by operation id (lambdas/http/dispatcher.ts).
 *
 * Declarations are data: the CDK stack imports this module, so no declaration imports a
 * handler, a store or the CEL engine.
 */
import { API_BASE_PATH, PAGES_BASE_PATH, WELL_KNOWN_BASE_PATH } from './base-paths';
import { CATALOG_ROUTES, PUBLIC_CATALOG_ROUTES } from './catalog/routes';
import { INFERENCE_ROUTES } from './inference/routes';
import { ACTIVITY_ROUTES } from './management/routes/activity';
import { CURRENT_KEY_ROUTES } from './management/routes/current-key';
import { GENERATION_ROUTES } from './management/routes/generations';
import { EVENT_ROUTES } from './management/routes/events';
import { GUARDRAIL_ROUTES, KEY_ASSIGNMENT_ROUTES } from './management/routes/guardrails';
import { ISSUER_ROUTES } from './management/routes/issuers';
import { KEY_ROUTES } from './management/routes/keys';
import { POLICY_ROUTES } from './management/routes/policies';
import { WORKSPACE_BUDGET_ROUTES } from './management/routes/workspace-budgets';
import { WORKSPACE_CHANGE_ROUTES, WORKSPACE_ROUTES } from './management/routes/workspaces';
import { DISCOVERY_ROUTES, OAUTH_ROUTES } from './oauth/routes';
import { OPENAPI_ROUTES } from './openapi/routes';
import { SETTINGS_PAGE_ROUTES } from './pages/routes';

export { API_BASE_PATH, PAGES_BASE_PATH, WELL_KNOWN_BASE_PATH };

export type { Access, FunctionId, HttpMethod, QueryParameter, RouteDefinition, SuccessResponse } from './route-definition';
export { resourcePath, routeMethod } from './route-definition';
import { resourcePath, routeMethod, type FunctionId, type HttpMethod, type RouteDefinition } from './route-definition';

/**
 * Functions that stream their response (`awslambda.streamifyResponse`): API Gateway
 * relays their bytes as written (`responseTransferMode: STREAM`).
 */
export const STREAMING_FUNCTIONS: readonly FunctionId[] = ['inference'];

/**
 * Every route, with its literal types (operation ids). The order is the order API Gateway's
 * methods are created in, which the deployment's logical id is a hash of: a new route goes at
 * the end.
 */
const DECLARED = [
  ...CATALOG_ROUTES,
  ...OAUTH_ROUTES,
  ...OPENAPI_ROUTES,
  ...INFERENCE_ROUTES,
  // The management API, shaped as the public OpenAPI document's /keys, /workspaces, /guardrails,
  // then workload identity federation configuration (docs/reference.md#issuers, docs/reference.md#federation-policies, docs/reference.md#workload-identity).
  ...CURRENT_KEY_ROUTES,
  ...GENERATION_ROUTES,
  ...ACTIVITY_ROUTES,
  ...KEY_ROUTES,
  ...WORKSPACE_ROUTES,
  ...GUARDRAIL_ROUTES,
  ...ISSUER_ROUTES,
  ...POLICY_ROUTES,
  ...SETTINGS_PAGE_ROUTES,
  ...EVENT_ROUTES,
  ...DISCOVERY_ROUTES,
  ...WORKSPACE_CHANGE_ROUTES,
  ...KEY_ASSIGNMENT_ROUTES,
  ...PUBLIC_CATALOG_ROUTES,
  ...WORKSPACE_BUDGET_ROUTES,
] as const satisfies readonly RouteDefinition[];

/** Every route of the REST API. */
export const ROUTES: readonly RouteDefinition[] = DECLARED;

/** Every route as declared, with its literal types: an operation's request is typed from its declaration. */
export type DeclaredRoute = (typeof DECLARED)[number];

/** The declarations of the routes one function serves, with their literal types. */
export type RouteOfFunction<F extends FunctionId> = Extract<DeclaredRoute, { function: F }>;

/** The routes one function serves: what its entry hands its dispatcher. */
export function routesOf<F extends FunctionId>(fn: F): readonly RouteOfFunction<F>[] {
  return DECLARED.filter((route): route is RouteOfFunction<F> => route.function === fn);
}

/** The methods a resource answers, HEAD beside GET. */
export function servedMethods(methods: readonly HttpMethod[]): string[] {
  return methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

/** The route a request found, with its resource template and path parameters. */
export interface RouteMatch {
  readonly route: RouteDefinition;
  /** The API Gateway resource template, e.g. `/api/v1/keys/{hash}`. */
  readonly resource: string;
  /** As the client encoded them, as a REST API passes them; the functions decode them (lambdas/http/request.ts). */
  readonly pathParameters: Record<string, string>;
}

/** Every route with its resource template split into segments, once. */
const ROUTE_TEMPLATES = ROUTES.map((route) => {
  const template = resourcePath(route).split('/');
  return { route, template };
});

/**
 * Finds the route for a request path (API or page). Static segments win over
 * parameters, as in API Gateway. Returns `undefined` when no resource matches and
 * `{ allowed }` when the resource exists but not for this method.
 */
export function matchRoute(
  method: string,
  path: string,
): RouteMatch | { readonly allowed: readonly HttpMethod[] } | undefined {
  const segments = path.split('/');
  let best: { route: RouteDefinition; params: Record<string, string>; staticCount: number }[] = [];
  for (const { route, template } of ROUTE_TEMPLATES) {
    if (template.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let staticCount = 0;
    let ok = true;
    for (let i = 0; i < template.length && ok; i++) {
      const part = template[i]!;
      const actual = segments[i]!;
      if (part.startsWith('{')) {
        if (actual === '') ok = false;
        else params[part.slice(1, -1)] = actual;
      } else if (part === actual) staticCount++;
      else ok = false;
    }
    if (ok) best.push({ route, params, staticCount });
  }
  if (best.length === 0) return undefined;
  const top = Math.max(...best.map((b) => b.staticCount));
  best = best.filter((b) => b.staticCount === top);
  const hit = best.find((b) => b.route.method === routeMethod(method));
  if (!hit) return { allowed: best.map((b) => b.route.method) };
  return { route: hit.route, resource: resourcePath(hit.route), pathParameters: hit.params };
}
