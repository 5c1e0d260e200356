import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../routes';
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
      { name: 'policy_id', schema: { type: 'string', format: 'uuid' }, description: 'Only events of this policy.' },
      { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: EVENTS_MAX_LIMIT }, description: `Page size, 1 to ${EVENTS_MAX_LIMIT}; ${EVENTS_DEFAULT_LIMIT} when absent.` },
      { name: 'cursor', schema: { type: 'string' }, description: "The previous page's `next_cursor`." },
    ],
    ok: { status: 200, schema: ref('ListExchangeEventsResponse') },
    errors: [400],
  },
] as const satisfies readonly RouteDefinition[];
