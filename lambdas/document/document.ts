/**
 * modelgate's own interface description: an OpenAPI 3.1 document of every route of the
 * route table, served at `GET /api/v1/openapi.json` (docs/reference.md#versioning: the API is versioned as 1.0.0).
 *
 * Where a shape is the public service's (models, keys, workspaces, guardrails, activity) the
 * schema is the public one under its name, with each difference stated (schemas.ts). Requests
 * are validated by the very schemas here, compiled ahead of time (request-validation.ts), and
 * bodies are closed: a field the document does not list is refused. Responses are
 * open for later minor versions, but the test suites validate every answer they get as if
 * closed, so an undocumented status or field fails a test.
 */
import { ROUTES, resourcePath, type RouteDefinition } from '../routes';
import { conformingExamples } from './examples';
import { componentSchemas, ref, type Json } from './schemas';

/** The document's `info.version`: the API's version (docs/reference.md#versioning). */
export const API_VERSION = '1.0.0';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication missing or credentials invalid',
  402: 'A spending limit leaves no room for the request: a workspace budget, a guardrail budget or the key limit, named in the message and the metadata (`layer`, `remaining_usd`, `request_max_cost_usd`, `resets_at`)',
  403: 'Authenticated, but permissions are insufficient',
  404: 'Resource does not exist',
  409: 'Conflict with the current state',
  413: 'Request body too large',
  415: 'The body is not application/json',
  429: 'Too many requests; retry after the Retry-After seconds',
  500: 'Unexpected server error',
  502: 'The upstream provider failed',
  504: 'The upstream provider did not answer in time',
  503: 'Temporarily unavailable; retry shortly',
};

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } };

const challenge = {
  'WWW-Authenticate': {
    description:
      'RFC 6750 section 3: `Bearer`, with `error="invalid_token"` when the credential sent was refused (`invalid_request` for a malformed Authorization header, none when no credential was sent) and `resource_metadata`, the protected resource metadata URL (RFC 9728 section 5.1). A request under the DPoP scheme, or a DPoP-bound token sent as a bearer token, is challenged with `DPoP`, `error="invalid_token"` or `error="invalid_dpop_proof"` and `algs` (RFC 9449 section 7.1).',
    schema: { type: 'string', example: 'Bearer error="invalid_token", resource_metadata="https://api.example.com/api/v1/.well-known/oauth-protected-resource"' },
  },
};

function errorResponse(status: number, schema: string): Json {
  return {
    description: STATUS_TEXT[status] ?? 'Error',
    ...(status === 429 || status === 503 ? { headers: retryAfter } : status === 401 ? { headers: challenge } : {}),
    content: { 'application/json': { schema: ref(schema) } },
  };
}

/** Path parameters of a known shape; others (`{author}`, `{slug}`, `{file}`) are plain strings. */
const PATH_PARAMETERS: Readonly<Record<string, Json>> = {
  hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "The key's hash, as GET /keys lists it." },
  id: { type: 'string', format: 'uuid' },
};

/** `/api/v1/keys/{hash}` -> the `{hash}` path parameters, of the shape the route gives or their name has. */
function pathParameters(path: string, route: RouteDefinition): Json[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: route.pathParameters?.[m[1]!] ?? PATH_PARAMETERS[m[1]!] ?? { type: 'string' },
  }));
}

const CREDENTIALS = [{ apiKey: [] }, { accessToken: [] }, { dpopAccessToken: [] }];

/** Who may call: no one needs a credential for a public route, nor for the public catalog where the deployment opens it (`{}`). */
function security(access: RouteDefinition['access']): Json[] {
  if (access === 'public') return [];
  return access === 'catalog' ? [...CREDENTIALS, {}] : CREDENTIALS;
}

function operationObject(route: RouteDefinition): Json {
  const path = resourcePath(route);
  // One error shape per protocol: the token endpoint speaks OAuth errors, another API's route its own, every other route the common error body (docs/reference.md#the-common-error-body).
  const oauth = route.function === 'tokenExchange';
  const statuses = new Set<number>(route.errors ?? []);
  if (route.access !== 'public') [401, 403].forEach((s) => statuses.add(s));
  // The firewall's general rate rule covers every path (lib/constructs/firewall.ts).
  statuses.add(429);
  if (route.body || route.form) statuses.add(413);
  // A JSON body is read only from a request that says it is JSON (lambdas/http/request.ts jsonBody).
  if (route.body) statuses.add(415);
  statuses.add(500);
  const { ok } = route;
  const responses: Json = {
    [ok.status]: {
      description: 'Success',
      ...(ok.cacheable ? { headers: { 'Cache-Control': { description: 'Caches may keep the answer 5 minutes.', schema: { type: 'string', const: 'public, max-age=300' } } } } : {}),
      content: ok.media ?? { 'application/json': { schema: ok.schema } },
    },
  };
  for (const status of [...statuses].sort()) responses[status] = errorResponse(status, route.errorSchema ?? (oauth ? 'OAuthError' : 'ErrorResponse'));
  const query = (route.query ?? []).map(({ name, schema, description, required }) => ({ name, in: 'query', required: required === true, schema, description }));
  const parameters = [...pathParameters(path, route), ...query];
  return {
    operationId: route.operationId,
    summary: route.summary,
    security: security(route.access),
    ...(parameters.length ? { parameters } : {}),
    ...(route.form
      ? { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: route.form } } } }
      : route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } }
        : {}),
    responses,
  };
}

function buildDocument(): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of ROUTES) (paths[resourcePath(route)] ??= {})[route.method.toLowerCase()] = operationObject(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'modelgate',
      version: API_VERSION,
      description:
        'An API gateway for AI models: the model catalog, inference, workload identity token exchange and management. Every GET operation also answers HEAD, without a body; every operation under /api/v1 answers CORS preflights.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Paths are absolute (the settings page is outside /api/v1); the served copy names the base URL
    // each request came through (served-document.ts).
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (workspace, personal or management).' },
        accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /api/v1/oauth/token.' },
        dpopAccessToken: {
          type: 'http',
          scheme: 'dpop',
          description:
            'A DPoP-bound access token (RFC 9449: token_type DPoP from POST /api/v1/oauth/token), sent as `Authorization: DPoP <token>` with a `DPoP` header holding a new proof for this request and token.',
        },
      },
      schemas: usedSchemas(paths),
    },
  };
}

/**
 * The schemas the document uses: the public ones modelgate's reference, with their examples
 * made to fit (examples.ts), and none a field modelgate left out would alone refer to.
 * `ChatStreamChunk` stays: each event of a streamed completion is one, which OpenAPI 3.1 has no
 * way to reference from a `text/event-stream` answer (redocly.yaml says so to the linter).
 */
function usedSchemas(paths: Json): Record<string, Json> {
  const all = conformingExamples(componentSchemas());
  const used: Record<string, Json> = {};
  const pending = ['ChatStreamChunk', ...referenced(paths)];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (name in used) continue;
    used[name] = all[name]!;
    pending.push(...referenced(used[name]));
  }
  return Object.fromEntries(Object.keys(all).filter((name) => name in used).map((name) => [name, used[name]!]));
}

const referenced = (node: unknown): string[] => [...JSON.stringify(node).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);

/** Built once: the document is a constant of the deployment. */
export const OPENAPI_DOCUMENT: Readonly<Json> = Object.freeze(buildDocument());

/** The method+path pairs of the route table, in the document's key form. */
export const routeKeys = (): string[] => ROUTES.map((route) => `${route.method} ${resourcePath(route)}`);
