import type { Clock } from '../../clock';
import type { FunctionRequirements } from '../../config';
import { apiHandler } from '../../http/middleware';
import { createDispatcher, type Operations } from '../../http/dispatcher';
import { gatewayBaseUrl } from '../../http/request';
import type { Telemetry } from '../../observability/telemetry';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../oauth/discovery';
import { publishedKeys } from '../../signing/published-keys';
import { OPENAPI_BODY } from '../../openapi/document-body.generated';
import { servedOpenApiDocument } from '../../openapi/served-document';
import type { SigningKeyStore } from '../../signing/signer';
import { routesOf, type RouteOfFunction } from '../../routes';

/**
 * docs/reference.md#verification-keys: only the signing-key records of the keys table (IAM narrows it to them), and the API
 * base URL, the access tokens' issuer, which the discovery documents describe.
 */
export const JWKS_FUNCTION = { tables: ['keys'], settings: ['apiBaseUrl', 'accessTokenMaxLifetimeSeconds', 'corsAllowedOrigins'] } as const satisfies FunctionRequirements;

/** What the JWKS handler uses: the signing-key records and what the documents name. */
export interface JwksHandlerDeps {
  signingKeys: Pick<SigningKeyStore, 'list'>;
  clock: Clock;
  /** Retired keys stay published this long after retirement (docs/reference.md#limits). */
  accessTokenMaxLifetimeSeconds: number;
  /** The API base URL: `iss` and `aud` of access tokens (docs/reference.md#access-tokens). */
  issuer: string;
  corsAllowedOrigins: readonly string[];
  telemetry: Telemetry;
}

/**
 * The public, cacheable documents of the API: the key set, the OpenAPI document and the
 * discovery documents, each answered as its route declares (cacheable: caches may keep the key
 * set briefly, as a new key is published well before it signs). Every document but the key set
 * is a constant: the OpenAPI document is serialized when the validators are compiled
 * (scripts/compile-request-schemas.ts), the others once per container.
 */
export function createJwksHandler(deps: JwksHandlerDeps) {
  const authorizationServer = JSON.stringify(authorizationServerMetadata(deps.issuer));
  const protectedResource = JSON.stringify(protectedResourceMetadata(deps.issuer));
  const openApiDocument = servedOpenApiDocument(OPENAPI_BODY);
  const documents: Operations<RouteOfFunction<'jwks'>, JwksHandlerDeps> = {
    getJwks: async () =>
      JSON.stringify(publishedKeys(await deps.signingKeys.list(), deps.clock.now(), deps.accessTokenMaxLifetimeSeconds)),
    getOpenApiDocument: ({ event }) => openApiDocument(gatewayBaseUrl(event), deps.issuer),
    getOpenIdConfiguration: () => authorizationServer,
    getAuthorizationServerMetadata: () => authorizationServer,
    getAuthorizationServerMetadataAtHostRoot: () => authorizationServer,
    getProtectedResourceMetadata: () => protectedResource,
    getProtectedResourceMetadataAtHostRoot: () => protectedResource,
  };
  const dispatch = createDispatcher({ routes: routesOf('jwks'), operations: documents, deps });
  return apiHandler(dispatch, deps.telemetry, { corsAllowedOrigins: deps.corsAllowedOrigins });
}
