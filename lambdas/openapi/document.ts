/**
 * modelgate's own interface description: an OpenAPI 3.1 document of every route of the
 * route table, served at `GET /api/v1/openapi.json` (SPEC 9: the API is versioned as 1.0.0).
 *
 * The catalog shapes are the public service's: `components.schemas` starts from a verbatim
 * copy of the public document's `ModelsListResponse` and the schemas it references
 * (public-schemas.json; a test keeps the copy equal to the public document).
 */
import { PAGES_BASE_PATH, ROUTES, resourcePath, type HttpMethod } from '../routes';
import publicSchemas from './public-schemas.json';

export const API_VERSION = '1.0.0';

type Json = Record<string, unknown>;
type Security = 'public' | 'credential' | 'management';

interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly security: Security;
  readonly query?: readonly Json[];
  /** A JSON request body schema (or a form for the token endpoint, see below). */
  readonly body?: Json;
  /** The success status and its JSON body schema; `html`/`asset` for the settings page. */
  readonly ok: { readonly status: number; readonly schema?: Json; readonly media?: string; readonly cacheable?: boolean };
  /** Refusals beyond 401/403/413/429/500 that the route can give. */
  readonly errors?: readonly number[];
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const object = (properties: Json = {}, required: readonly string[] = []) => ({ type: 'object', properties, ...(required.length ? { required } : {}) });
const list = (item: Json) => object({ data: { type: 'array', items: item } }, ['data']);
const anyObject = { type: 'object', additionalProperties: true };
const dataOf = (item: Json) => object({ data: item }, ['data']);
const query = (name: string, schema: Json, description: string) => ({ name, in: 'query', required: false, schema, description });
const listOf = (item: Json) => object({ data: { type: 'array', items: item }, total_count: { type: 'integer', minimum: 0 } }, ['data', 'total_count']);
const deleted = object({ deleted: { type: 'boolean', const: true } }, ['deleted']);

const A = '/api/v1';
const P = PAGES_BASE_PATH;

/** Keyed by `METHOD full-path`; a test holds this set equal to the route table. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  [`GET ${A}/models/user`]: {
    operationId: 'getUserModels',
    summary: 'List the models the caller may use (SPEC 4.1)',
    security: 'credential',
    query: [
      query('offset', { type: 'integer', minimum: 0, default: 0 }, 'SPEC 8: minimum 0.'),
      query('limit', { type: 'integer', minimum: 1, maximum: 1000, default: 500 }, 'SPEC 8: 1 to 1000.'),
      query('sort', { type: 'string' }, 'Sort order of the list.'),
      query('output_modalities', { type: 'string' }, '`all` or a comma-separated list of output modalities; default `text`.'),
    ],
    ok: { status: 200, schema: ref('ModelsListResponse') },
    errors: [400],
  },
  [`GET ${A}/models/{author}/{slug}/endpoints`]: {
    operationId: 'listEndpoints',
    summary: "A model's details and the endpoints serving it",
    security: 'credential',
    ok: { status: 200, schema: dataOf(anyObject) },
    errors: [404],
  },
  [`POST ${A}/oauth/token`]: {
    operationId: 'exchangeToken',
    summary: 'Exchange a workload identity JWT for an access token (RFC 8693; SPEC 4.2)',
    security: 'public',
    ok: { status: 200, schema: ref('TokenResponse') },
    errors: [400, 503],
  },
  [`GET ${A}/oauth/jwks`]: {
    operationId: 'getJwks',
    summary: 'The keys that verify access tokens (SPEC 4.6)',
    security: 'public',
    ok: { status: 200, schema: object({ keys: { type: 'array', items: anyObject } }, ['keys']), cacheable: true },
  },
  [`GET ${A}/openapi.json`]: {
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    security: 'public',
    ok: { status: 200, schema: anyObject, cacheable: true },
  },
  [`POST ${A}/chat/completions`]: {
    operationId: 'createChatCompletion',
    summary: 'Chat completion, streamed as server-sent events when `stream` is true (SPEC 4.5)',
    security: 'credential',
    body: object({ model: { type: 'string' }, messages: { type: 'array', items: anyObject }, stream: { type: 'boolean' } }, ['model', 'messages']),
    ok: { status: 200, schema: anyObject },
    errors: [400, 404, 502, 504],
  },
  [`GET ${A}/key`]: {
    operationId: 'getCurrentKey',
    summary: "The calling key's own metadata",
    security: 'credential',
    ok: { status: 200, schema: dataOf(anyObject) },
  },
  [`GET ${A}/activity`]: {
    operationId: 'getUserActivity',
    summary: 'Usage by day and model',
    security: 'management',
    query: [
      query('date', { type: 'string', format: 'date' }, 'One UTC day of the last 30.'),
      query('api_key_hash', { type: 'string' }, 'Only this key.'),
    ],
    ok: { status: 200, schema: list(anyObject) },
    errors: [400, 404],
  },
  ...crud('keys', '{hash}', 'Key', 'API keys', {
    patch: true,
    remove: true,
    query: [
      query('include_disabled', { type: 'boolean', default: false }, 'Include disabled keys.'),
      query('workspace_id', { type: 'string', format: 'uuid' }, 'Only keys of this workspace.'),
    ],
    list: list(anyObject),
    created: object({ data: anyObject, key: { type: 'string', description: 'The secret, shown once.' } }, ['data', 'key']),
    // The named workspace does not exist.
    createErrors: [400, 404, 409],
  }),
  ...crud('workspaces', '{id}', 'Workspace', 'workspaces', {}),
  ...crud('guardrails', '{id}', 'Guardrail', 'guardrails', { patch: true, remove: true }),
  [`POST ${A}/guardrails/{id}/assignments/keys`]: {
    operationId: 'bulkAssignKeysToGuardrail',
    summary: 'Assign API keys to a guardrail',
    security: 'management',
    body: object({ key_hashes: { type: 'array', items: { type: 'string' } } }, ['key_hashes']),
    ok: { status: 200, schema: object({ assigned_count: { type: 'integer', minimum: 0 } }, ['assigned_count']) },
    errors: [400, 404],
  },
  [`POST ${A}/guardrails/{id}/assignments/keys/remove`]: {
    operationId: 'bulkUnassignKeysFromGuardrail',
    summary: 'Remove API keys from a guardrail',
    security: 'management',
    body: object({ key_hashes: { type: 'array', items: { type: 'string' } } }, ['key_hashes']),
    ok: { status: 200, schema: object({ unassigned_count: { type: 'integer', minimum: 0 } }, ['unassigned_count']) },
    errors: [400, 404],
  },
  ...crud('workload-identity/issuers', '{id}', 'Issuer', 'trusted workload identity issuers (SPEC 2.11)', { patch: true, remove: true }),
  ...crud('workload-identity/policies', '{id}', 'FederationPolicy', 'federation policies (SPEC 2.12)', {
    patch: true,
    remove: true,
    query: [query('issuer_id', { type: 'string' }, 'Only policies of this issuer.')],
  }),
  [`POST ${A}/workload-identity/policies/{id}/evaluate`]: {
    operationId: 'evaluateFederationPolicy',
    summary: 'Test a JWT against a policy without issuing a token',
    security: 'management',
    body: anyObject,
    ok: { status: 200, schema: anyObject },
    errors: [400, 404],
  },
  [`POST ${A}/workload-identity/conditions/check`]: {
    operationId: 'checkCondition',
    summary: 'Check a CEL condition before saving it (SPEC 4.4)',
    security: 'management',
    body: object({ condition: { type: 'string', maxLength: 2000 } }, ['condition']),
    ok: { status: 200, schema: anyObject },
    errors: [400],
  },
  [`GET ${A}/workload-identity/entitlement`]: {
    operationId: 'getWorkloadIdentityEntitlement',
    summary: 'Whether workload identity federation is available to the organization',
    security: 'management',
    ok: { status: 200, schema: anyObject },
  },
  [`GET ${A}/workload-identity/events`]: {
    operationId: 'listTokenExchangeEvents',
    summary: 'Token exchange events, newest first',
    security: 'management',
    query: [
      query('policy_id', { type: 'string' }, 'Only events of this policy.'),
      query('limit', { type: 'integer', minimum: 1, maximum: 100, default: 50 }, 'Page size.'),
      query('cursor', { type: 'string' }, 'The previous page\'s `next_cursor`.'),
    ],
    ok: { status: 200, schema: object({ data: { type: 'array', items: anyObject }, next_cursor: { type: ['string', 'null'] } }, ['data', 'next_cursor']) },
    errors: [400],
  },
  [`GET ${P}/workload-identity`]: {
    operationId: 'getWorkloadIdentitySettingsPage',
    summary: 'The Workload identity settings page (HTML; signs in against the API)',
    security: 'public',
    ok: { status: 200, media: 'text/html' },
  },
  [`GET ${P}/workload-identity/assets/{file}`]: {
    operationId: 'getWorkloadIdentitySettingsAsset',
    summary: "A static file of the settings page (script or stylesheet)",
    security: 'public',
    ok: { status: 200, media: '*/*' },
    errors: [404],
  },
};

interface CrudOptions {
  patch?: boolean;
  remove?: boolean;
  query?: readonly Json[];
  /** The list body; `{ data, total_count }` unless given. */
  list?: Json;
  /** The creation body; `{ data }` unless given. */
  created?: Json;
  createErrors?: readonly number[];
}

function crud(collection: string, param: string, noun: string, label: string, options: CrudOptions): Record<string, Operation> {
  const base = `${A}/${collection}`;
  const one = dataOf(anyObject);
  const pascal = collection.split(/[/-]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  const ops: Record<string, Operation> = {
    [`GET ${base}`]: {
      operationId: `list${pascal}`,
      summary: `List ${label}`,
      security: 'management',
      ...(options.query ? { query: options.query, errors: [400] } : {}),
      ok: { status: 200, schema: options.list ?? listOf(anyObject) },
    },
    [`POST ${base}`]: { operationId: `create${noun}`, summary: `Create one of the ${label}`, security: 'management', body: anyObject, ok: { status: 201, schema: options.created ?? one }, errors: options.createErrors ?? [400, 409] },
    [`GET ${base}/${param}`]: { operationId: `get${noun}`, summary: `One of the ${label}`, security: 'management', ok: { status: 200, schema: one }, errors: [404] },
  };
  if (options.patch) ops[`PATCH ${base}/${param}`] = { operationId: `update${noun}`, summary: `Update one of the ${label}`, security: 'management', body: anyObject, ok: { status: 200, schema: one }, errors: [400, 404, 409] };
  if (options.remove) ops[`DELETE ${base}/${param}`] = { operationId: `delete${noun}`, summary: `Delete one of the ${label}`, security: 'management', ok: { status: 200, schema: deleted }, errors: [404] };
  return ops;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication missing or credentials invalid',
  403: 'Authenticated, but permissions are insufficient',
  404: 'Resource does not exist',
  409: 'Conflict with the current state',
  413: 'Request body too large',
  429: 'Too many requests; retry after the Retry-After seconds',
  500: 'Unexpected server error',
  502: 'The upstream provider failed',
  504: 'The upstream provider did not answer in time',
  503: 'Temporarily unavailable; retry shortly',
};

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } } };

function errorResponse(status: number, oauth: boolean): Json {
  return {
    description: STATUS_TEXT[status] ?? 'Error',
    ...(status === 429 || status === 503 ? { headers: retryAfter } : {}),
    content: { 'application/json': { schema: ref(oauth ? 'OAuthError' : 'ErrorResponse') } },
  };
}

/** `/api/v1/keys/{hash}` -> the `{hash}` path parameters. */
function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
}

function operationObject(path: string, op: Operation): Json {
  const oauth = path.startsWith(`${A}/oauth/`);
  const statuses = new Set<number>(op.errors ?? []);
  if (op.security !== 'public') [401, 403].forEach((s) => statuses.add(s));
  if (op.body || path === `${A}/oauth/token`) statuses.add(413);
  if (op.security !== 'public' || path === `${A}/oauth/token`) statuses.add(429);
  statuses.add(500);
  const responses: Json = {
    [op.ok.status]: {
      description: 'Success',
      ...(op.ok.cacheable ? { headers: { 'Cache-Control': { description: 'Caches may keep the answer 5 minutes.', schema: { type: 'string', const: 'public, max-age=300' } } } } : {}),
      content: { [op.ok.media ?? 'application/json']: { schema: op.ok.schema ?? { type: 'string' } } },
    },
  };
  for (const status of [...statuses].sort()) responses[status] = errorResponse(status, oauth);
  const parameters = [...pathParameters(path), ...(op.query ?? [])];
  return {
    operationId: op.operationId,
    summary: op.summary,
    security: op.security === 'public' ? [] : [{ apiKey: [] }, { accessToken: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(path === `${A}/oauth/token`
      ? { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref('TokenRequest') } } } }
      : op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: op.body } } } }
        : {}),
    responses,
  };
}

const TOKEN_REQUEST = object(
  {
    grant_type: { type: 'string', const: 'urn:ietf:params:oauth:grant-type:token-exchange' },
    subject_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:jwt' },
    subject_token: { type: 'string', maxLength: 16384, description: 'The workload identity JWT; at most 16 KB (SPEC 8).' },
    federation_policy_id: { type: 'string', description: 'The federation policy to evaluate.' },
    requested_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:access_token' },
    scope: { type: 'string', enum: ['inference', 'management'], description: "When sent, exactly the policy's scope." },
    audience: { type: 'string', description: 'Accepted and ignored.' },
    resource: { type: 'string', description: 'Accepted and ignored.' },
  },
  ['grant_type', 'subject_token_type', 'subject_token', 'federation_policy_id'],
);

const TOKEN_RESPONSE = object(
  {
    access_token: { type: 'string' },
    issued_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:access_token' },
    token_type: { type: 'string', const: 'Bearer' },
    expires_in: { type: 'integer', minimum: 1, maximum: 900 },
    scope: { type: 'string', enum: ['inference', 'management'] },
  },
  ['access_token', 'issued_token_type', 'token_type', 'expires_in', 'scope'],
);

/** SPEC 7.1. */
const ERROR_RESPONSE = object(
  {
    error: object(
      { code: { type: 'integer' }, message: { type: 'string' }, metadata: { type: ['object', 'null'], additionalProperties: true } },
      ['code', 'message'],
    ),
    user_id: { type: ['string', 'null'] },
  },
  ['error'],
);

/** SPEC 7.2, RFC 6749 section 5.2. */
const OAUTH_ERROR = object(
  {
    error: { type: 'string', enum: ['invalid_request', 'unsupported_grant_type', 'invalid_scope', 'invalid_grant', 'temporarily_unavailable'] },
    error_description: { type: 'string' },
  },
  ['error'],
);

function buildDocument(): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const [key, op] of Object.entries(OPERATIONS)) {
    const [method, path] = key.split(' ') as [HttpMethod, string];
    (paths[path] ??= {})[method.toLowerCase()] = operationObject(path, op);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'modelgate',
      version: API_VERSION,
      description: 'An API gateway for AI models: the model catalog, inference, workload identity token exchange and management.',
    },
    // Paths are absolute (the settings page is outside /api/v1): the server is the host.
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (workspace, personal or management).' },
        accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /api/v1/oauth/token.' },
      },
      schemas: {
        ...(publicSchemas as Json),
        ErrorResponse: ERROR_RESPONSE,
        OAuthError: OAUTH_ERROR,
        TokenRequest: TOKEN_REQUEST,
        TokenResponse: TOKEN_RESPONSE,
      },
    },
  };
}

/** Built once: the document is a constant of the deployment. */
export const OPENAPI_DOCUMENT: Readonly<Json> = Object.freeze(buildDocument());

/** The method+path pairs of the route table, in the document's key form. */
export const routeKeys = (): string[] => ROUTES.map((route) => `${route.method} ${resourcePath(route)}`);
