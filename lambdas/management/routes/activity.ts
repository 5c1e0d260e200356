import { KEY_HASH_PATTERN, ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';

/** Usage by day and model (public `getUserActivity`). */
export const ACTIVITY_ROUTES = [
  {
    operationId: 'getUserActivity',
    method: 'GET',
    path: '/activity',
    function: 'management',
    access: 'management-read',
    summary: 'Usage by day and model',
    query: [
      { name: 'date', schema: { type: 'string', format: 'date' }, description: 'One UTC day of the last 30.' },
      { name: 'api_key_hash', schema: { type: 'string', pattern: KEY_HASH_PATTERN }, description: 'Only this key (its hash, as GET /keys lists it).' },
    ],
    ok: { status: 200, schema: ref('ActivityResponse') },
    errors: [400, 404],
  },
] as const satisfies readonly RouteDefinition[];
