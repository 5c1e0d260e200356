import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';

/** The calling key's own metadata (public `getCurrentKey`): any credential, about itself. */
export const CURRENT_KEY_ROUTES = [
  {
    operationId: 'getCurrentKey',
    method: 'GET',
    path: '/key',
    function: 'management',
    access: 'any',
    summary: "The calling key's own metadata",
    ok: { status: 200, schema: ref('CurrentKeyResponse') },
  },
] as const satisfies readonly RouteDefinition[];
