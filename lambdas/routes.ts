/**
 * The route table: every route of the REST API and the function that serves it.
 *
 * The CDK stack builds API Gateway resources from it and the local runtime dispatches
 * with it, so a route exists in both places or in neither.
 */
export type FunctionId = 'catalog' | 'tokenExchange' | 'jwks' | 'management' | 'inference';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RouteDefinition {
  readonly method: HttpMethod;
  /** Resource path below {@link API_BASE_PATH}, with `{name}` path parameters. */
  readonly path: string;
  readonly function: FunctionId;
}

/**
 * Functions that stream their response (`awslambda.streamifyResponse`): API Gateway
 * relays their bytes as written (`responseTransferMode: STREAM`).
 */
export const STREAMING_FUNCTIONS: readonly FunctionId[] = ['inference'];

/** SPEC 9: every endpoint lives under `/api/v1`. */
export const API_BASE_PATH = '/api/v1';

export const ROUTES: readonly RouteDefinition[] = [
  // SPEC 4.1 and the `links.details` target of each model.
  { method: 'GET', path: '/models/user', function: 'catalog' },
  { method: 'GET', path: '/models/{author}/{slug}/endpoints', function: 'catalog' },
  // SPEC 4.2 and 4.6.
  { method: 'POST', path: '/oauth/token', function: 'tokenExchange' },
  { method: 'GET', path: '/oauth/jwks', function: 'jwks' },
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
  // Workload identity: token exchange events, newest first.
  { method: 'GET', path: '/workload-identity/events', function: 'management' },
];

export interface RouteMatch {
  readonly route: RouteDefinition;
  /** The API Gateway resource template, e.g. `/api/v1/keys/{hash}`. */
  readonly resource: string;
  readonly pathParameters: Record<string, string>;
}

/**
 * Finds the route for a request path below the API base path. Static segments win over
 * parameters, as in API Gateway. Returns `undefined` when no resource matches and
 * `{ allowed }` when the resource exists but not for this method.
 */
export function matchRoute(
  method: string,
  path: string,
): RouteMatch | { readonly allowed: readonly HttpMethod[] } | undefined {
  if (!path.startsWith(`${API_BASE_PATH}/`)) return undefined;
  const segments = path.slice(API_BASE_PATH.length + 1).split('/');
  let best: { route: RouteDefinition; params: Record<string, string>; staticCount: number }[] = [];
  for (const route of ROUTES) {
    const template = route.path.slice(1).split('/');
    if (template.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let staticCount = 0;
    let ok = true;
    for (let i = 0; i < template.length && ok; i++) {
      const part = template[i]!;
      const actual = segments[i]!;
      if (part.startsWith('{')) {
        if (actual === '') ok = false;
        else params[part.slice(1, -1)] = safeDecode(actual);
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
  return { route: hit.route, resource: `${API_BASE_PATH}${hit.route.path}`, pathParameters: hit.params };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
