import { API_BASE_PATH, WELL_KNOWN_BASE_PATH } from '../base-paths';
import { ref } from '../openapi/json-schema';
import type { RouteDefinition } from '../route-definition';

/** docs/reference.md#the-token-exchange, docs/reference.md#verification-keys: the token exchange and the keys that verify what it issues. */
export const OAUTH_ROUTES = [
  {
    operationId: 'exchangeToken',
    method: 'POST',
    path: '/oauth/token',
    function: 'tokenExchange',
    access: 'public',
    summary: 'Exchange a workload identity JWT for an access token (RFC 8693)',
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
    summary: 'The keys that verify access tokens',
    ok: { status: 200, schema: ref('JsonWebKeySet'), cacheable: true },
  },
] as const satisfies readonly RouteDefinition[];

/**
 * The well-known names of the discovery documents: RFC 8414 §3 (`oauth-authorization-server`),
 * OpenID Connect Discovery 1.0 §4 (`openid-configuration`, the name most clients try first) and
 * RFC 9728 §3 (`oauth-protected-resource`).
 */
export const WELL_KNOWN_DOCUMENTS = {
  openidConfiguration: 'openid-configuration',
  authorizationServer: 'oauth-authorization-server',
  protectedResource: 'oauth-protected-resource',
} as const;

const { openidConfiguration, authorizationServer, protectedResource } = WELL_KNOWN_DOCUMENTS;

/**
 * Discovery: the access tokens' issuer and the API as a protected resource describe themselves.
 * The issuer and the resource are the API base URL, so each document sits below it
 * (`{issuer}/.well-known/…`, which every stage serves), and at the RFC 8414 §3.1 and RFC 9728
 * §3.1 path-inserted location below the host root (`/.well-known/…/api/v1`), which a client
 * reaches where the API is served from the host root (the local runtime, a custom domain).
 */
export const DISCOVERY_ROUTES = [
  {
    operationId: 'getOpenIdConfiguration',
    method: 'GET',
    path: `/.well-known/${openidConfiguration}`,
    function: 'jwks',
    access: 'public',
    summary: 'The authorization server metadata (RFC 8414) under the name OpenID Connect discovery reads',
    ok: { status: 200, schema: ref('AuthorizationServerMetadata'), cacheable: true },
  },
  {
    operationId: 'getAuthorizationServerMetadata',
    method: 'GET',
    path: `/.well-known/${authorizationServer}`,
    function: 'jwks',
    access: 'public',
    summary: 'The authorization server metadata (RFC 8414) of the access tokens\' issuer',
    ok: { status: 200, schema: ref('AuthorizationServerMetadata'), cacheable: true },
  },
  {
    operationId: 'getAuthorizationServerMetadataAtHostRoot',
    method: 'GET',
    base: WELL_KNOWN_BASE_PATH,
    path: `/${authorizationServer}${API_BASE_PATH}`,
    function: 'jwks',
    access: 'public',
    summary: 'The authorization server metadata at the RFC 8414 path-inserted location',
    ok: { status: 200, schema: ref('AuthorizationServerMetadata'), cacheable: true },
  },
  {
    operationId: 'getProtectedResourceMetadata',
    method: 'GET',
    path: `/.well-known/${protectedResource}`,
    function: 'jwks',
    access: 'public',
    summary: 'The protected resource metadata (RFC 9728) of the API',
    ok: { status: 200, schema: ref('ProtectedResourceMetadata'), cacheable: true },
  },
  {
    operationId: 'getProtectedResourceMetadataAtHostRoot',
    method: 'GET',
    base: WELL_KNOWN_BASE_PATH,
    path: `/${protectedResource}${API_BASE_PATH}`,
    function: 'jwks',
    access: 'public',
    summary: 'The protected resource metadata at the RFC 9728 path-inserted location',
    ok: { status: 200, schema: ref('ProtectedResourceMetadata'), cacheable: true },
  },
] as const satisfies readonly RouteDefinition[];
