import { invalid, ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';
import { EVENTS_DEFAULT_LIMIT, EVENTS_MAX_LIMIT } from '../exchange-events-api';

/** Workload identity: token exchange events, newest first. */
export const EVENT_ROUTES = [
  {
    operationId: 'listTokenExchangeEvents',
    method: 'GET',
    path: '/workload-identity/events',
    function: 'management',
    access: 'management-read',
    summary: 'Token exchange events, newest first',
    query: [
      {
        name: 'policy_id',
        // Any letter case: exchange events name the policy as the exchange request did.
        schema: { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', ...invalid('must be a policy id (a UUID)') },
        description: 'Only events of this policy.',
      },
      { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: EVENTS_MAX_LIMIT }, description: `Page size, 1 to ${EVENTS_MAX_LIMIT}; ${EVENTS_DEFAULT_LIMIT} when absent.` },
      {
        name: 'cursor',
        schema: { type: 'string', minLength: 1, maxLength: 1024, ...invalid('is not a cursor this endpoint returned') },
        description: "The previous page's `next_cursor`.",
      },
    ],
    ok: { status: 200, schema: ref('ListExchangeEventsResponse') },
    errors: [400],
  },
] as const satisfies readonly RouteDefinition[];
