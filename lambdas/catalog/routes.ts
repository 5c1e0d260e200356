import { ref } from '../openapi/json-schema';
import type { RouteDefinition } from '../route-definition';
import { CATALOG_QUERY_PARAMETERS } from './query-parameters';

/** SPEC 4.1 and the `links.details` target of each model. */
export const CATALOG_ROUTES = [
  {
    operationId: 'getUserModels',
    method: 'GET',
    path: '/models/user',
    function: 'catalog',
    access: 'any',
    summary: 'List the models the caller may use (SPEC 4.1)',
    query: CATALOG_QUERY_PARAMETERS,
    ok: { status: 200, schema: ref('ModelsListResponse') },
    errors: [400],
  },
  {
    operationId: 'listEndpoints',
    method: 'GET',
    path: '/models/{author}/{slug}/endpoints',
    function: 'catalog',
    access: 'any',
    summary: "A model's details and the endpoints serving it",
    ok: { status: 200, schema: { type: 'object', properties: { data: ref('ListEndpointsResponse') }, required: ['data'] } },
    errors: [404],
  },
] as const satisfies readonly RouteDefinition[];
