import { ref } from '../../openapi/json-schema';
import type { RouteDefinition } from '../../route-definition';

/** One completion's stats (public `getGeneration`): for the key that made it and its organization's management keys. */
export const GENERATION_ROUTES = [
  {
    operationId: 'getGeneration',
    method: 'GET',
    path: '/generation',
    function: 'management',
    access: 'any',
    summary: "A completion's model, provider, tokens, cost, latency and finish reason, by the id its answer carried",
    query: [
      {
        name: 'id',
        schema: { type: 'string', minLength: 1, maxLength: 256 },
        required: true,
        description: 'The generation id: every chunk\'s `id`, and the answer\'s `X-Generation-Id`. Kept 30 days.',
      },
    ],
    ok: { status: 200, schema: ref('GenerationResponse') },
    errors: [400, 404],
  },
] as const satisfies readonly RouteDefinition[];
