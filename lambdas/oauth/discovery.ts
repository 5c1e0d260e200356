import type { FederationScope } from '../federation/types';
import type { RouteDefinition } from '../route-definition';
import { OPENAPI_ROUTES } from '../openapi/routes';
import { DPOP_SIGNING_ALGS } from '../credentials/dpop-wire';
import { DISCOVERY_ROUTES, OAUTH_ROUTES } from './routes';

/** The routes the discovery documents name. */
const NAMED_ROUTES: readonly RouteDefinition[] = [...OAUTH_ROUTES, ...DISCOVERY_ROUTES, ...OPENAPI_ROUTES];
import { TOKEN_EXCHANGE_GRANT } from './token-request';

/** docs/reference.md#federation-policies, docs/reference.md#scopes-and-access: the scopes an access token may carry. */
const SCOPES: readonly FederationScope[] = ['inference', 'management'];

/** RFC 8414 §2, with RFC 9728 §4's `protected_resources`. */
export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  jwks_uri: string;
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  scopes_supported: string[];
  response_types_supported: string[];
  service_documentation: string;
  protected_resources: string[];
  /** RFC 9449 §5.1. */
  dpop_signing_alg_values_supported: string[];
}

/** RFC 9728 §2. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  jwks_uri: string;
  bearer_methods_supported: string[];
  scopes_supported: string[];
  resource_name: string;
  resource_documentation: string;
  /** RFC 9728 §2 (RFC 9449). */
  dpop_signing_alg_values_supported: string[];
  dpop_bound_access_tokens_required: boolean;
}

/** The URL of a route below the API base path, which the issuer URL ends with (docs/reference.md#access-tokens). */
function endpointUrl(issuer: string, operationId: string): string {
  const route = NAMED_ROUTES.find((candidate) => candidate.operationId === operationId);
  if (!route || route.base !== undefined) throw new Error(`${operationId} is not a route below the API base path`);
  return `${issuer}${route.path}`;
}

/**
 * The metadata of the access tokens' issuer. `issuer` is exactly the `iss` the token exchange
 * puts in every token (the API base URL), as RFC 8414 §3.3 and every client check.
 */
export function authorizationServerMetadata(issuer: string): AuthorizationServerMetadata {
  return {
    issuer,
    token_endpoint: endpointUrl(issuer, 'exchangeToken'),
    jwks_uri: endpointUrl(issuer, 'getJwks'),
    // RFC 8693 §2: the one grant; RFC 8414's default (authorization_code, implicit) would be false.
    grant_types_supported: [TOKEN_EXCHANGE_GRANT],
    // docs/reference.md#the-token-exchange: clients do not authenticate; RFC 8414's default (client_secret_basic) would be false.
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...SCOPES],
    // RFC 8414 §2 requires the member; with no authorization endpoint no response type is supported.
    response_types_supported: [],
    service_documentation: endpointUrl(issuer, 'getOpenApiDocument'),
    // RFC 9728 §4: the API is the one resource its tokens are for (their `aud`).
    protected_resources: [issuer],
    // RFC 9449 §5.1: a token request may carry a DPoP proof signed with one of these.
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGS],
  };
}

/**
 * The API as a protected resource (RFC 9728). Its identifier is the API base URL, the `aud` of
 * access tokens; its authorization server is the same URL. The resource and the authorization
 * server are one service, so `jwks_uri` names the one key set, the one that verifies tokens.
 */
export function protectedResourceMetadata(resource: string): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: [resource],
    jwks_uri: endpointUrl(resource, 'getJwks'),
    // docs/reference.md#scopes-and-access: `Authorization: Bearer`, never a form field or a query parameter (RFC 6750 §2.2, §2.3).
    bearer_methods_supported: ['header'],
    scopes_supported: [...SCOPES],
    resource_name: 'modelgate',
    resource_documentation: endpointUrl(resource, 'getOpenApiDocument'),
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGS],
    // Bearer tokens stay the default; a policy may require binding (`require_dpop`).
    dpop_bound_access_tokens_required: false,
  };
}

/**
 * Where a 401's challenge points clients (RFC 9728 §5.1): the document below the API base URL,
 * which every deployment serves, not the host-root one, which only some do.
 */
export function protectedResourceMetadataUrl(resource: string): string {
  return endpointUrl(resource, 'getProtectedResourceMetadata');
}
