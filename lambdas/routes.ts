/**
 * The route table: every route of the REST API and the function that serves it.
 *
 * The CDK stack builds API Gateway resources from it and the local runtime dispatches
 * with it, so a route exists in both places or in neither.
 */
export type FunctionId = 'catalog' | 'tokenExchange' | 'jwks' | 'management' | 'inference' | 'settingsPage';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RouteDefinition {
  readonly method: HttpMethod;
  /** Resource path below {@link RouteDefinition.base}, with `{name}` path parameters. */
  readonly path: string;
  readonly function: FunctionId;
  /**
   * What the path is below: the API ({@link API_BASE_PATH}) unless the route serves a page.
   * @default API_BASE_PATH
   */
  readonly base?: typeof API_BASE_PATH | typeof PAGES_BASE_PATH;
}

/**
 * Functions that stream their response (`awslambda.streamifyResponse`): API Gateway
 * relays their bytes as written (`responseTransferMode: STREAM`).
 */
export const STREAMING_FUNCTIONS: readonly FunctionId[] = ['inference'];

/** SPEC 9: every endpoint lives under `/api/v1`. */
export const API_BASE_PATH = '/api/v1';

/**
 * The settings pages (SPEC 1, 4.7): served by the same REST API stage as the API, so the page
 * and the API share an origin and the management key never crosses one. Not part of the
 * versioned API.
 */
export const PAGES_BASE_PATH = '/settings';

/** The resource path of a route as API Gateway and the local server know it. */
export function resourcePath(route: RouteDefinition): string {
  return `${route.base ?? API_BASE_PATH}${route.path}`;
}

export const ROUTES: readonly RouteDefinition[] = [
  // SPEC 4.1 and the `links.details` target of each model.
  { method: 'GET', path: '/models/user', function: 'catalog' },
  { method: 'GET', path: '/models/{author}/{slug}/endpoints', function: 'catalog' },
  // SPEC 4.2 and 4.6.
  { method: 'POST', path: '/oauth/token', function: 'tokenExchange' },
  { method: 'GET', path: '/oauth/jwks', function: 'jwks' },
  // modelgate's own OpenAPI document (version 1.0.0), public like the key set it sits beside.
  { method: 'GET', path: '/openapi.json', function: 'jwks' },
  // SPEC 4.5: inference.
  { method: 'POST', path: '/chat/completions', function: 'inference' },
  // Management API, shaped as the public OpenAPI document's /keys, /workspaces, /guardrails.
  // The caller's own key (any credential) and usage by day and model (public `getCurrentKey`, `getUserActivity`).
  { method: 'GET', path: '/key', function: 'management' },
  { method: 'GET', path: '/activity', function: 'management' },
  { method: 'GET', path: '/keys', function: 'management' },
  { method: 'POST', path: '/keys', function: 'management' },
  { method: 'GET', path: '/keys/{hash}', function: 'management' },
  { method: 'PATCH', path: '/keys/{hash}', function: 'management' },
  { method: 'DELETE', path: '/keys/{hash}', function: 'management' },
  { method: 'GET', path: '/workspaces', function: 'management' },
  { method: 'POST', path: '/workspaces', function: 'management' },
  { method: 'GET', path: '/workspaces/{id}', function: 'management' },
  { method: 'GET', path: '/guardrails', function: 'management' },
  { method: 'POST', path: '/guardrails', function: 'management' },
  { method: 'GET', path: '/guardrails/{id}', function: 'management' },
  { method: 'PATCH', path: '/guardrails/{id}', function: 'management' },
  { method: 'DELETE', path: '/guardrails/{id}', function: 'management' },
  { method: 'POST', path: '/guardrails/{id}/assignments/keys', function: 'management' },
  { method: 'POST', path: '/guardrails/{id}/assignments/keys/remove', function: 'management' },
  // Workload identity federation configuration (SPEC 2.11, 2.12, 4.7).
  { method: 'GET', path: '/workload-identity/issuers', function: 'management' },
  { method: 'POST', path: '/workload-identity/issuers', function: 'management' },
  { method: 'GET', path: '/workload-identity/issuers/{id}', function: 'management' },
  { method: 'PATCH', path: '/workload-identity/issuers/{id}', function: 'management' },
  { method: 'DELETE', path: '/workload-identity/issuers/{id}', function: 'management' },
  { method: 'GET', path: '/workload-identity/policies', function: 'management' },
  { method: 'POST', path: '/workload-identity/policies', function: 'management' },
  { method: 'GET', path: '/workload-identity/policies/{id}', function: 'management' },
  { method: 'PATCH', path: '/workload-identity/policies/{id}', function: 'management' },
  { method: 'DELETE', path: '/workload-identity/policies/{id}', function: 'management' },
  // The policy tester (never mints) and the save-time condition checker, for the settings page.
  { method: 'POST', path: '/workload-identity/policies/{id}/evaluate', function: 'management' },
  { method: 'POST', path: '/workload-identity/conditions/check', function: 'management' },
  { method: 'GET', path: '/workload-identity/entitlement', function: 'management' },
  // The Workload identity settings page and its static assets (script, stylesheet).
  { method: 'GET', path: '/workload-identity', function: 'settingsPage', base: PAGES_BASE_PATH },
  { method: 'GET', path: '/workload-identity/assets/{file}', function: 'settingsPage', base: PAGES_BASE_PATH },
  // Workload identity: token exchange events, newest first.
  { method: 'GET', path: '/workload-identity/events', function: 'management' },
];

export interface RouteMatch {
  readonly route: RouteDefinition;
  /** The API Gateway resource template, e.g. `/api/v1/keys/{hash}`. */
  readonly resource: string;
  /** As the client encoded them, as a REST API passes them; the functions decode them (lambdas/http/request.ts). */
  readonly pathParameters: Record<string, string>;
}

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
  for (const route of ROUTES) {
    const template = resourcePath(route).split('/');
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
  const hit = best.find((b) => b.route.method === method);
  if (!hit) return { allowed: best.map((b) => b.route.method) };
  return { route: hit.route, resource: resourcePath(hit.route), pathParameters: hit.params };
}
