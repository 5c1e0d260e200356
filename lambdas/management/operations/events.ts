import { listExchangeEvents } from '../exchange-events-api';
import type { EVENT_ROUTES } from '../routes/events';
import { orgOf, type Operations } from '../operation';

/** `GET /workload-identity/events`: the organization's token exchanges. */
export const EVENT_OPERATIONS: Operations<typeof EVENT_ROUTES> = {
  listTokenExchangeEvents: ({ principal, query, deps }) => listExchangeEvents(deps.exchangeEvents, deps.clock, orgOf(principal), query),
};
