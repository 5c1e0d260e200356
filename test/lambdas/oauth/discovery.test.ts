import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createJwksHandler } from '../../../lambdas/functions/jwks/handler';
import { authorizationServerMetadata, protectedResourceMetadata, protectedResourceMetadataUrl } from '../../../lambdas/oauth/discovery';
import { ROUTES, resourcePath } from '../../../lambdas/routes';
import { newLocalSigner, signingKeyRecord } from '../../support/access-tokens';
import { FixedClock } from '../../support/fixed-clock';
import { MemorySigningKeyStore } from '../../support/memory-signing-key-store';
import { lambdaContext, recordingTelemetry } from '../../support/telemetry';

const ISSUER = 'https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/v1/api/v1';

describe('the discovery documents', () => {
  it('describes the issuer of access tokens with the RFC 8414 members, every URL below the issuer', () => {
    expect(authorizationServerMetadata(ISSUER)).toEqual({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/oauth/token`,
      jwks_uri: `${ISSUER}/oauth/jwks`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:token-exchange'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['inference', 'management'],
      response_types_supported: [],
      service_documentation: `${ISSUER}/openapi.json`,
      protected_resources: [ISSUER],
      dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'],
    });
  });

  it('describes the API as a protected resource (RFC 9728) whose authorization server is the same URL', () => {
    expect(protectedResourceMetadata(ISSUER)).toEqual({
      resource: ISSUER,
      authorization_servers: [ISSUER],
      jwks_uri: `${ISSUER}/oauth/jwks`,
      bearer_methods_supported: ['header'],
      scopes_supported: ['inference', 'management'],
      resource_name: 'modelgate',
      resource_documentation: `${ISSUER}/openapi.json`,
      dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'],
      dpop_bound_access_tokens_required: false,
    });
  });

  it("points a 401's challenge at the document below the API base URL, which every deployment serves", () => {
    expect(protectedResourceMetadataUrl(ISSUER)).toBe(`${ISSUER}/.well-known/oauth-protected-resource`);
  });
});

describe('the JWKS function serves every public document', () => {
  const event = (resource: string) =>
    ({ resource, path: resource, httpMethod: 'GET', headers: {}, requestContext: { identity: { sourceIp: '203.0.113.7' } } }) as unknown as APIGatewayProxyEvent;

  it('answers each of its routes with its document, cacheable for 5 minutes', async () => {
    const signer = await newLocalSigner();
    const signingKeys = new MemorySigningKeyStore();
    await signingKeys.put(signingKeyRecord(signer));
    const handler = createJwksHandler({
      signingKeys,
      clock: new FixedClock(new Date('2026-11-21T12:00:00Z')),
      accessTokenMaxLifetimeSeconds: 900,
      corsAllowedOrigins: ['*'],
      issuer: ISSUER,
      telemetry: recordingTelemetry('jwks'),
    });
    const served = async (resource: string) => {
      const response = await handler(event(resource), lambdaContext('jwks'));
      expect([resource, response.statusCode, response.headers]).toEqual([
        resource,
        200,
        {
          'Content-Type': 'application/json',
          'Cache-Control': 'public, max-age=300',
          // Browser apps discover the server too (lambdas/http/cors.ts).
          'Access-Control-Allow-Origin': '*',
          'Access-Control-Expose-Headers': 'X-Request-Id, X-Generation-Id, Retry-After, WWW-Authenticate, DPoP-Nonce',
          'X-Request-Id': expect.any(String),
        },
      ]);
      return JSON.parse(response.body);
    };

    const asMetadata = authorizationServerMetadata(ISSUER);
    const prMetadata = protectedResourceMetadata(ISSUER);
    expect(await served('/api/v1/.well-known/openid-configuration')).toEqual(asMetadata);
    expect(await served('/api/v1/.well-known/oauth-authorization-server')).toEqual(asMetadata);
    expect(await served('/.well-known/oauth-authorization-server/api/v1')).toEqual(asMetadata);
    expect(await served('/api/v1/.well-known/oauth-protected-resource')).toEqual(prMetadata);
    expect(await served('/.well-known/oauth-protected-resource/api/v1')).toEqual(prMetadata);
    expect((await served('/api/v1/oauth/jwks')).keys.map((key: { kid: string }) => key.kid)).toEqual([signer.kid]);
    expect((await served('/api/v1/openapi.json')).openapi).toBe('3.1.0');
    // Every route the registry gives the function, and no other.
    expect(ROUTES.filter((route) => route.function === 'jwks').map(resourcePath).sort()).toEqual([
      '/.well-known/oauth-authorization-server/api/v1',
      '/.well-known/oauth-protected-resource/api/v1',
      '/api/v1/.well-known/oauth-authorization-server',
      '/api/v1/.well-known/oauth-protected-resource',
      '/api/v1/.well-known/openid-configuration',
      '/api/v1/oauth/jwks',
      '/api/v1/openapi.json',
    ]);
  });
});
