import { ref } from '../openapi/json-schema';
import type { RouteDefinition } from '../routes';
import { DEFAULT_LIMIT, MAX_LIMIT, SORTS, SORT_ALIASES } from './catalog-query';
import { OUTPUT_MODALITIES } from './types';

/** SPEC 4.1 and the `links.details` target of each model. */
export const CATALOG_ROUTES = [
  {
    operationId: 'getUserModels',
    method: 'GET',
    path: '/models/user',
    function: 'catalog',
    access: 'any',
    summary: 'List the models the caller may use (SPEC 4.1)',
    query: [
      { name: 'offset', schema: { type: 'integer', minimum: 0 }, description: 'SPEC 4.1, 8: models to skip, at least 0. With neither offset nor limit the whole list comes back.' },
      { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT }, description: `SPEC 8: page size, 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} when only offset is given.` },
      { name: 'sort', schema: { type: 'string', enum: [...SORTS, ...Object.keys(SORT_ALIASES)] }, description: 'Server-side order (SPEC 4.1); absent: the catalog order.' },
      {
        name: 'output_modalities',
        schema: { type: 'string', pattern: `^(all|(${OUTPUT_MODALITIES.join('|')})(,(${OUTPUT_MODALITIES.join('|')}))*)$` },
        description: '`all` or a comma-separated list of output modalities; default `text`.',
      },
    ],
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
