import { ref } from '../openapi/json-schema';
import type { RouteDefinition } from '../route-definition';
import { CATALOG_QUERY_PARAMETERS, MODEL_COUNT_QUERY_PARAMETERS, MODEL_LIST_QUERY_PARAMETERS } from './query-parameters';

/** docs/reference.md#the-catalog and the `links.details` target of each model. */
export const CATALOG_ROUTES = [
  {
    operationId: 'getUserModels',
    method: 'GET',
    path: '/models/user',
    function: 'catalog',
    access: 'any',
    summary: 'List the models the caller may use',
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

/**
 * The public catalog's operations, as the public document has them (`getModels`,
 * `listModelsCount`, `getModel`, `listProviders`): the deployment's whole catalog, whoever asks,
 * from the index `/models/user` narrows per caller. OpenAI-compatible tools list `GET /models`
 * first.
 */
export const PUBLIC_CATALOG_ROUTES = [
  {
    operationId: 'getModels',
    method: 'GET',
    path: '/models',
    function: 'catalog',
    access: 'catalog',
    summary: 'List every model of the catalog, filtered, sorted and paged',
    query: MODEL_LIST_QUERY_PARAMETERS,
    ok: { status: 200, schema: ref('ModelsListResponse') },
    errors: [400],
  },
  {
    operationId: 'listModelsCount',
    method: 'GET',
    path: '/models/count',
    function: 'catalog',
    access: 'catalog',
    summary: 'How many models of these output modalities the catalog holds',
    query: MODEL_COUNT_QUERY_PARAMETERS,
    ok: { status: 200, schema: ref('ModelsCountResponse') },
    errors: [400],
  },
  {
    operationId: 'getModel',
    method: 'GET',
    path: '/model/{author}/{slug}',
    function: 'catalog',
    access: 'catalog',
    summary: 'One model by its id (a variant suffix such as `:free` included) or canonical slug',
    ok: { status: 200, schema: ref('ModelResponse') },
    errors: [404],
  },
  {
    operationId: 'listProviders',
    method: 'GET',
    path: '/providers',
    function: 'catalog',
    access: 'catalog',
    summary: 'The providers serving the catalog, by name',
    ok: { status: 200, schema: ref('ListProvidersResponse') },
  },
] as const satisfies readonly RouteDefinition[];

/** The declaration of a route the catalog function serves. */
export type CatalogRoute = (typeof CATALOG_ROUTES)[number] | (typeof PUBLIC_CATALOG_ROUTES)[number];
