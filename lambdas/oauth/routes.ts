import { ref } from '../openapi/json-schema';
import type { RouteDefinition } from '../route-definition';

/** SPEC 4.2 and 4.6: the token exchange and the keys that verify what it issues. */
export const OAUTH_ROUTES = [
  {
    operationId: 'exchangeToken',
    method: 'POST',
    path: '/oauth/token',
    function: 'tokenExchange',
    access: 'public',
    summary: 'Exchange a workload identity JWT for an access token (RFC 8693; SPEC 4.2)',
    form: ref('TokenRequest'),
    ok: { status: 200, schema: ref('TokenResponse') },
    errors: [400, 503],
    verifiesSubjectTokens: true,
  },
  {
    operationId: 'getJwks',
    method: 'GET',
    path: '/oauth/jwks',
    function: 'jwks',
    access: 'public',
    summary: 'The keys that verify access tokens (SPEC 4.6)',
    ok: { status: 200, schema: ref('JsonWebKeySet'), cacheable: true },
  },
] as const satisfies readonly RouteDefinition[];
