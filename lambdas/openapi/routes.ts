import type { RouteDefinition } from '../route-definition';

/** modelgate's own OpenAPI document (version 1.0.0), public like the key set it sits beside. */
export const OPENAPI_ROUTES = [
  {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    path: '/openapi.json',
    function: 'jwks',
    access: 'public',
    summary: 'This document',
    ok: { status: 200, schema: { type: 'object', description: 'An OpenAPI 3.1 document.', additionalProperties: true }, cacheable: true },
  },
] as const satisfies readonly RouteDefinition[];
