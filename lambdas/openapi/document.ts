/**
 * modelgate's own interface description: an OpenAPI 3.1 document of every route of the
 * route table, served at `GET /api/v1/openapi.json` (SPEC 9: the API is versioned as 1.0.0).
 *
 * Where a shape is the public service's (models, keys, workspaces, guardrails, activity) the
 * schema is the public one under its name, with each difference stated (schemas.ts). Request
 * bodies are closed: the handlers refuse a field the document does not list. Responses are
 * open for later minor versions, but the test suites validate every answer they get as if
 * closed, so an undocumented status or field fails a test.
 */
import { PAGES_BASE_PATH, ROUTES, resourcePath, type HttpMethod } from '../routes';
import { DEFAULT_LIMIT, MAX_LIMIT, SORTS, SORT_ALIASES } from '../catalog/catalog-query';
import { OUTPUT_MODALITIES } from '../catalog/types';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../management/exchange-events-api';
import { LIST_PAGE } from '../management/list-page';
import { componentSchemas, ref, type Json } from './schemas';

export const API_VERSION = '1.0.0';

type Security = 'public' | 'credential' | 'management';

interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly security: Security;
  readonly query?: readonly Json[];
  /** The JSON request body schema (the token endpoint's form is described apart). */
  readonly body?: Json;
  /** The success status and its body schema; `media` for the settings page and the stream. */
  readonly ok: { readonly status: number; readonly schema?: Json; readonly media?: Readonly<Record<string, Json>>; readonly cacheable?: boolean };
  /** Refusals beyond 401/403/413/429/500 that the route can give. */
  readonly errors?: readonly number[];
}

const query = (name: string, schema: Json, description: string) => ({ name, in: 'query', required: false, schema, description });

/** `offset` and `limit` of a management list (lambdas/management/list-page.ts). */
const listPage = (items: string) => [
  query('offset', { type: 'integer', minimum: 0 }, `The ${items} to skip, at least 0. With neither offset nor limit the whole list comes back.`),
  query('limit', { type: 'integer', minimum: 1, maximum: LIST_PAGE.maxLimit }, `Page size, 1 to ${LIST_PAGE.maxLimit}; ${LIST_PAGE.defaultLimit} when only offset is given.`),
];

const A = '/api/v1';
const P = PAGES_BASE_PATH;

/** Keyed by `METHOD full-path`; a test holds this set equal to the route table. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  [`GET ${A}/models/user`]: {
    operationId: 'getUserModels',
    summary: 'List the models the caller may use (SPEC 4.1)',
    security: 'credential',
    query: [
      query('offset', { type: 'integer', minimum: 0 }, 'SPEC 4.1, 8: models to skip, at least 0. With neither offset nor limit the whole list comes back.'),
      query('limit', { type: 'integer', minimum: 1, maximum: MAX_LIMIT }, `SPEC 8: page size, 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} when only offset is given.`),
      query('sort', { type: 'string', enum: [...SORTS, ...Object.keys(SORT_ALIASES)] }, 'Server-side order (SPEC 4.1); absent: the catalog order.'),
      query(
        'output_modalities',
        { type: 'string', pattern: `^(all|(${OUTPUT_MODALITIES.join('|')})(,(${OUTPUT_MODALITIES.join('|')}))*)$` },
        '`all` or a comma-separated list of output modalities; default `text`.',
      ),
    ],
    ok: { status: 200, schema: ref('ModelsListResponse') },
    errors: [400],
  },
  [`GET ${A}/models/{author}/{slug}/endpoints`]: {
    operationId: 'listEndpoints',
    summary: "A model's details and the endpoints serving it",
    security: 'credential',
    ok: { status: 200, schema: { type: 'object', properties: { data: ref('ListEndpointsResponse') }, required: ['data'] } },
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
    ok: { status: 200, schema: ref('JsonWebKeySet'), cacheable: true },
  },
  [`GET ${A}/openapi.json`]: {
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    security: 'public',
    ok: { status: 200, schema: { type: 'object', description: 'An OpenAPI 3.1 document.', additionalProperties: true }, cacheable: true },
  },
  [`POST ${A}/chat/completions`]: {
    operationId: 'createChatCompletion',
    summary: 'Chat completion, streamed as server-sent events when `stream` is true (SPEC 4.5)',
    security: 'credential',
    body: ref('ChatCompletionRequest'),
    ok: {
      status: 200,
      media: {
        'application/json': { schema: ref('ChatCompletion') },
        // One `data:` line per chunk, then `data: [DONE]`.
        'text/event-stream': {
          schema: { type: 'string', description: 'Server-sent events: each `data:` is a ChatCompletionStreamEvent (components), then `data: [DONE]`.' },
        },
      },
    },
    errors: [400, 404, 502, 504],
  },
  [`GET ${A}/key`]: {
    operationId: 'getCurrentKey',
    summary: "The calling key's own metadata",
    security: 'credential',
    ok: { status: 200, schema: ref('CurrentKeyResponse') },
  },
  [`GET ${A}/activity`]: {
    operationId: 'getUserActivity',
    summary: 'Usage by day and model',
    security: 'management',
    query: [
      query('date', { type: 'string', format: 'date' }, 'One UTC day of the last 30.'),
      query('api_key_hash', { type: 'string', pattern: '^[0-9a-f]{64}$' }, 'Only this key (its hash, as GET /keys lists it).'),
    ],
    ok: { status: 200, schema: ref('ActivityResponse') },
    errors: [400, 404],
  },
  ...crud('keys', '{hash}', 'Key', 'API keys', {
    patch: true,
    remove: true,
    query: [
      query('include_disabled', { type: 'boolean' }, 'Include disabled keys; false when absent.'),
      query('workspace_id', { type: 'string', format: 'uuid' }, 'Only keys of this workspace.'),
    ],
    schemas: { list: 'ListKeysResponse', one: 'ApiKeyResponse', created: 'CreateKeyResponse', create: 'CreateKeyRequest', update: 'UpdateKeyRequest' },
    // The named workspace does not exist.
    createErrors: [400, 404, 409],
  }),
  ...crud('workspaces', '{id}', 'Workspace', 'workspaces', {
    query: listPage('workspaces'),
    schemas: { list: 'ListWorkspacesResponse', one: 'GetWorkspaceResponse', created: 'CreateWorkspaceResponse', create: 'CreateWorkspaceRequest' },
  }),
  ...crud('guardrails', '{id}', 'Guardrail', 'guardrails', {
    query: [...listPage('guardrails'), query('workspace_id', { type: 'string', format: 'uuid' }, 'Only the guardrails of this workspace.')],
    patch: true,
    remove: true,
    schemas: {
      list: 'ListGuardrailsResponse',
      one: 'GetGuardrailResponse',
      created: 'CreateGuardrailResponse',
      updated: 'UpdateGuardrailResponse',
      deleted: 'DeleteGuardrailResponse',
      create: 'CreateGuardrailRequest',
      update: 'UpdateGuardrailRequest',
    },
  }),
  [`POST ${A}/guardrails/{id}/assignments/keys`]: {
    operationId: 'bulkAssignKeysToGuardrail',
    summary: 'Assign API keys to a guardrail',
    security: 'management',
    body: ref('BulkAssignKeysRequest'),
    ok: { status: 200, schema: ref('BulkAssignKeysResponse') },
    errors: [400, 404],
  },
  [`POST ${A}/guardrails/{id}/assignments/keys/remove`]: {
    operationId: 'bulkUnassignKeysFromGuardrail',
    summary: 'Remove API keys from a guardrail',
    security: 'management',
    body: ref('BulkUnassignKeysRequest'),
    ok: { status: 200, schema: ref('BulkUnassignKeysResponse') },
    errors: [400, 404],
  },
  ...crud('workload-identity/issuers', '{id}', 'Issuer', 'trusted workload identity issuers (SPEC 2.11)', {
    patch: true,
    remove: true,
    schemas: { list: 'ListIssuersResponse', one: 'IssuerResponse', create: 'CreateIssuerRequest', update: 'UpdateIssuerRequest' },
  }),
  ...crud('workload-identity/policies', '{id}', 'FederationPolicy', 'federation policies (SPEC 2.12)', {
    patch: true,
    remove: true,
    query: [query('issuer_id', { type: 'string', format: 'uuid' }, 'Only policies of this issuer.')],
    schemas: { list: 'ListFederationPoliciesResponse', one: 'FederationPolicyResponse', create: 'CreatePolicyRequest', update: 'UpdatePolicyRequest' },
  }),
  [`POST ${A}/workload-identity/policies/{id}/evaluate`]: {
    operationId: 'evaluateFederationPolicy',
    summary: 'Test a JWT against a policy without issuing a token',
    security: 'management',
    body: ref('EvaluatePolicyRequest'),
    ok: { status: 200, schema: ref('PolicyEvaluationResponse') },
    errors: [400, 404],
  },
  [`POST ${A}/workload-identity/conditions/check`]: {
    operationId: 'checkCondition',
    summary: 'Check a CEL condition before saving it (SPEC 4.4)',
    security: 'management',
    body: ref('ConditionCheckRequest'),
    ok: { status: 200, schema: ref('ConditionCheckResponse') },
    errors: [400],
  },
  [`GET ${A}/workload-identity/entitlement`]: {
    operationId: 'getWorkloadIdentityEntitlement',
    summary: 'Whether workload identity federation is available to the organization',
    security: 'management',
    ok: { status: 200, schema: ref('EntitlementResponse') },
  },
  [`GET ${A}/workload-identity/events`]: {
    operationId: 'listTokenExchangeEvents',
    summary: 'Token exchange events, newest first',
    security: 'management',
    query: [
      query('policy_id', { type: 'string', format: 'uuid' }, 'Only events of this policy.'),
      query('limit', { type: 'integer', minimum: 1, maximum: EVENTS_MAX_LIMIT }, `Page size, 1 to ${EVENTS_MAX_LIMIT}; ${EVENTS_DEFAULT_LIMIT} when absent.`),
      query('cursor', { type: 'string' }, 'The previous page\'s `next_cursor`.'),
    ],
    ok: { status: 200, schema: ref('ListExchangeEventsResponse') },
    errors: [400],
  },
  [`GET ${P}/workload-identity`]: {
    operationId: 'getWorkloadIdentitySettingsPage',
    summary: 'The Workload identity settings page (HTML; signs in against the API)',
    security: 'public',
    ok: { status: 200, media: { 'text/html': { schema: { type: 'string' } } } },
  },
  [`GET ${P}/workload-identity/assets/{file}`]: {
    operationId: 'getWorkloadIdentitySettingsAsset',
    summary: "A static file of the settings page (script or stylesheet)",
    security: 'public',
    ok: { status: 200, media: { 'text/javascript': { schema: { type: 'string' } }, 'text/css': { schema: { type: 'string' } } } },
    errors: [404],
  },
};

interface CrudOptions {
  patch?: boolean;
  remove?: boolean;
  query?: readonly Json[];
  /** Component names of the bodies; `updated`/`deleted` default to `one` and `DeletedResponse`, `created` to `one`. */
  schemas: { list: string; one: string; create: string; created?: string; update?: string; updated?: string; deleted?: string };
  createErrors?: readonly number[];
}

function crud(collection: string, param: string, noun: string, label: string, options: CrudOptions): Record<string, Operation> {
  const base = `${A}/${collection}`;
  const { schemas } = options;
  const pascal = collection.split(/[/-]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
  const ops: Record<string, Operation> = {
    [`GET ${base}`]: {
      operationId: `list${pascal}`,
      summary: `List ${label}`,
      security: 'management',
      ...(options.query ? { query: options.query, errors: [400] } : {}),
      ok: { status: 200, schema: ref(schemas.list) },
    },
    [`POST ${base}`]: {
      operationId: `create${noun}`,
      summary: `Create one of the ${label}`,
      security: 'management',
      body: ref(schemas.create),
      ok: { status: 201, schema: ref(schemas.created ?? schemas.one) },
      errors: options.createErrors ?? [400, 409],
    },
    [`GET ${base}/${param}`]: { operationId: `get${noun}`, summary: `One of the ${label}`, security: 'management', ok: { status: 200, schema: ref(schemas.one) }, errors: [404] },
  };
  if (options.patch) {
    ops[`PATCH ${base}/${param}`] = {
      operationId: `update${noun}`,
      summary: `Update one of the ${label}`,
      security: 'management',
      body: ref(schemas.update!),
      ok: { status: 200, schema: ref(schemas.updated ?? schemas.one) },
      errors: [400, 404, 409],
    };
  }
  if (options.remove) {
    ops[`DELETE ${base}/${param}`] = {
      operationId: `delete${noun}`,
      summary: `Delete one of the ${label}`,
      security: 'management',
      ok: { status: 200, schema: ref(schemas.deleted ?? 'DeletedResponse') },
      errors: [404],
    };
  }
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

/** Path parameters of a known shape; others (`{author}`, `{slug}`, `{file}`) are plain strings. */
const PATH_PARAMETERS: Readonly<Record<string, Json>> = {
  hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "The key's hash, as GET /keys lists it." },
  id: { type: 'string', format: 'uuid' },
};

/** `/api/v1/keys/{hash}` -> the `{hash}` path parameters. */
function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: PATH_PARAMETERS[m[1]!] ?? { type: 'string' } }));
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
      content: op.ok.media ?? { 'application/json': { schema: op.ok.schema } },
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
      schemas: componentSchemas(),
    },
  };
}

/** Built once: the document is a constant of the deployment. */
export const OPENAPI_DOCUMENT: Readonly<Json> = Object.freeze(buildDocument());

/** The method+path pairs of the route table, in the document's key form. */
export const routeKeys = (): string[] => ROUTES.map((route) => `${route.method} ${resourcePath(route)}`);
