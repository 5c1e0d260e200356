import { createPublicKey, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { auth } from 'express-oauth2-jwt-bearer';
import buildGetJwks from 'get-jwks';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { authorizationServerMetadata, protectedResourceMetadata } from '../../../lambdas/oauth/discovery';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { newLocalSigner, signJwt } from '../../support/access-tokens';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const AUDIENCE = 'https://modelgate.example';
/** The local service is plain HTTP on a loopback address: each library's switch for that, in tests only. */
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/**
 * Clients and resource servers nobody here wrote, configured with nothing but the issuer (the
 * API base URL), against the local service: they find the token endpoint, the key set and the
 * resource's authorization server in the RFC 8414 and RFC 9728 documents, exchange a workload
 * token, and accept modelgate's access tokens and refuse forged ones.
 */
describe('OAuth clients and resource servers discover modelgate', () => {
  let service: TestService;
  let idp: TestIdentityProvider;
  /** The API base URL: the `iss` and `aud` of access tokens, and the issuer identifier. */
  let issuer: string;
  let origin: string;
  let policyId: string;

  beforeAll(async () => {
    service = await startTestService();
    issuer = service.runtime.baseUrl;
    origin = new URL(issuer).origin;
    // The runtime trusts its development CA; an identity provider on this machine uses it.
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    const { keys } = service.runtime.demo;
    const created = await service.call('/workload-identity/issuers', {
      method: 'POST',
      key: keys.managementReadWrite,
      body: { name: 'Discovery suite identity provider', issuer_url: idp.issuerUrl },
    });
    const policy = await service.call('/workload-identity/policies', {
      method: 'POST',
      key: keys.managementReadWrite,
      body: { name: 'Discovery suite', issuer_id: created.body.data.id, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(keys.workspace) },
    });
    expect([created.status, policy.status]).toEqual([201, 201]);
    policyId = policy.body.data.id;
  });
  afterAll(async () => {
    await idp?.close();
    await service?.stop();
  });

  const subjectToken = () => idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID() });

  /** An access token, from a plain form post. */
  async function accessToken(): Promise<string> {
    const form = new URLSearchParams({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: subjectToken(), federation_policy_id: policyId });
    const response = await service.call('/oauth/token', { method: 'POST', body: form.toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(response.status).toBe(200);
    return response.body.access_token;
  }

  /** The same claims and `kid`, signed by a key that is not modelgate's. */
  async function forged(token: string): Promise<string> {
    return signJwt(await newLocalSigner(), decodeJwt(token), { kid: decodeProtectedHeader(token).kid });
  }

  describe('the documents', () => {
    it('serves the authorization server metadata at {issuer}/.well-known/openid-configuration, /oauth-authorization-server and the path-inserted location, naming the issuer of its tokens', async () => {
      const urls = [
        `${issuer}/.well-known/openid-configuration`,
        `${issuer}/.well-known/oauth-authorization-server`,
        `${origin}/.well-known/oauth-authorization-server/api/v1`,
      ];
      for (const url of urls) {
        const response = await fetch(url);
        expect([url, response.status, response.headers.get('cache-control'), await response.json()]).toEqual([
          url,
          200,
          'public, max-age=300',
          {
            issuer,
            token_endpoint: `${issuer}/oauth/token`,
            jwks_uri: `${issuer}/oauth/jwks`,
            grant_types_supported: [GRANT],
            token_endpoint_auth_methods_supported: ['none'],
            scopes_supported: ['inference', 'management'],
            response_types_supported: [],
            service_documentation: `${issuer}/openapi.json`,
            protected_resources: [issuer],
            dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'],
          },
        ]);
      }
      const token = await accessToken();
      expect(decodeJwt(token).iss).toBe(authorizationServerMetadata(issuer).issuer);
    });

    it('serves the protected resource metadata below the API base URL and at the path-inserted location', async () => {
      for (const url of [`${issuer}/.well-known/oauth-protected-resource`, `${origin}/.well-known/oauth-protected-resource/api/v1`]) {
        const response = await fetch(url);
        expect([url, response.status, await response.json()]).toEqual([
          url,
          200,
          {
            resource: issuer,
            authorization_servers: [issuer],
            jwks_uri: `${issuer}/oauth/jwks`,
            bearer_methods_supported: ['header'],
            scopes_supported: ['inference', 'management'],
            resource_name: 'modelgate',
            resource_documentation: `${issuer}/openapi.json`,
            dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'EdDSA', 'Ed25519'],
            dpop_bound_access_tokens_required: false,
          },
        ]);
      }
    });
  });

  describe('clients', () => {
    it('openid-client: discovery() from the issuer alone, then the exchange by genericGrantRequest with two audiences, whose token the API takes', async () => {
      const config = await client.discovery(new URL(issuer), policyId, undefined, client.None(), { execute: [client.allowInsecureRequests] });
      expect(config.serverMetadata()).toMatchObject({ issuer, token_endpoint: `${issuer}/oauth/token`, jwks_uri: `${issuer}/oauth/jwks` });
      const sent: string[] = [];
      config[client.customFetch] = (url, options) => {
        sent.push(String(options.body));
        return fetch(url, options);
      };

      const parameters = new URLSearchParams({ subject_token: subjectToken(), subject_token_type: JWT_TYPE, federation_policy_id: policyId });
      // RFC 8693 §2.1: several audiences are allowed (docs/reference.md#the-token-exchange ignores them).
      parameters.append('audience', 'https://modelgate.example/a');
      parameters.append('audience', 'https://modelgate.example/b');
      const tokens = await client.genericGrantRequest(config, GRANT, parameters);

      expect(tokens).toMatchObject({ issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'bearer', scope: 'inference' });
      expect(tokens.expiresIn()).toBeGreaterThan(0);
      const form = new URLSearchParams(sent[0]);
      expect([form.get('grant_type'), form.get('client_id'), form.getAll('audience')]).toEqual([GRANT, policyId, ['https://modelgate.example/a', 'https://modelgate.example/b']]);
      expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: issuer, aud: issuer, sub: SUBJECT });
      expect((await service.call('/models/user?limit=1', { key: tokens.access_token })).status).toBe(200);
    });

    it("oauth4webapi: discovery with algorithm 'oauth2' at the path-inserted location, then RFC 9068 validation of an access token against the discovered keys", async () => {
      const response = await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oauth2', ...INSECURE });
      expect(new URL(response.url).pathname).toBe('/.well-known/oauth-authorization-server/api/v1');
      const as = await oauth.processDiscoveryResponse(new URL(issuer), response);
      expect(as).toEqual(authorizationServerMetadata(issuer));

      const token = await accessToken();
      const request = (bearer: string) => new Request(`${issuer}/models/user`, { headers: { Authorization: `Bearer ${bearer}` } });
      const claims = await oauth.validateJwtAccessToken(as, request(token), issuer, INSECURE);
      expect(claims).toMatchObject({ iss: issuer, aud: issuer, sub: SUBJECT, client_id: policyId, scope: 'inference' });
      await expect(oauth.validateJwtAccessToken(as, request(await forged(token)), issuer, INSECURE)).rejects.toThrow(/signature/i);
    });

    it("oauth4webapi: a 401's challenge names the resource metadata, whose authorization server is discovered from it (RFC 9728 §5)", async () => {
      const refusal = oauth.protectedResourceRequest('not-a-token', 'GET', new URL(`${issuer}/models/user`), undefined, undefined, INSECURE);
      const challenge = await refusal.catch((error: unknown) => error);
      expect(challenge).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      const [bearer] = (challenge as oauth.WWWAuthenticateChallengeError).cause;
      expect(bearer).toEqual({ scheme: 'bearer', parameters: { error: 'invalid_token', resource_metadata: `${issuer}/.well-known/oauth-protected-resource` } });

      // The RFC 9728 §3 request, from the resource identifier alone, finds the same document.
      const resource = await oauth.processResourceDiscoveryResponse(new URL(issuer), await oauth.resourceDiscoveryRequest(new URL(issuer), INSECURE));
      expect(resource).toEqual(protectedResourceMetadata(issuer));
      expect(await (await fetch(bearer!.parameters.resource_metadata!)).json()).toEqual(resource);
      const [server] = resource.authorization_servers!;
      const as = await oauth.processDiscoveryResponse(new URL(server!), await oauth.discoveryRequest(new URL(server!), INSECURE));
      expect(as.token_endpoint).toBe(`${issuer}/oauth/token`);
    });
  });

  describe('resource servers', () => {
    let api: Server;
    let apiUrl: string;
    beforeAll(async () => {
      const app = express();
      // Configured with the issuer and the audience only: the rest comes from discovery.
      app.get('/reports', auth({ issuerBaseURL: issuer, audience: issuer }), (request, response) => {
        response.json({ sub: request.auth!.payload.sub, scope: request.auth!.payload.scope });
      });
      api = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => api.once('listening', resolve));
      apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/reports`;
    });
    afterAll(async () => {
      await new Promise((resolve) => api?.close(resolve));
    });

    it("express-oauth2-jwt-bearer with only issuerBaseURL and audience accepts modelgate's access token and refuses a forged one", async () => {
      const token = await accessToken();
      const accepted = await fetch(apiUrl, { headers: { Authorization: `Bearer ${token}` } });
      expect([accepted.status, await accepted.json()]).toEqual([200, { sub: SUBJECT, scope: 'inference' }]);

      const refused = await fetch(apiUrl, { headers: { Authorization: `Bearer ${await forged(token)}` } });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer realm="api", error="invalid_token"/);
      expect((await fetch(apiUrl)).status).toBe(401);
    });

    it('get-jwks with providerDiscovery finds the key of an access token from the issuer, and jose verifies the token with it', async () => {
      const getJwks = buildGetJwks({ providerDiscovery: true, issuersWhitelist: [issuer] });
      const token = await accessToken();
      const { alg, kid } = decodeProtectedHeader(token);
      const jwk = await getJwks.getJwk({ domain: issuer, alg: alg!, kid: kid! });
      expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid });

      const key = createPublicKey(await getJwks.getPublicKey({ domain: issuer, alg, kid }));
      const options = { issuer, audience: issuer, typ: 'at+jwt', algorithms: ['ES256'] };
      expect((await jwtVerify(token, key, options)).payload).toMatchObject({ sub: SUBJECT, client_id: policyId });
      await expect(jwtVerify(await forged(token), key, options)).rejects.toThrow(/signature verification failed/);
    });
  });

  describe('the Bearer challenge of every kind of 401 (RFC 6750 §3)', () => {
    const metadata = () => `resource_metadata="${issuer}/.well-known/oauth-protected-resource"`;
    const routes: [string, string, unknown][] = [
      ['catalog', '/models/user', undefined],
      ['management', '/workspaces', undefined],
      ['management, any credential', '/key', undefined],
      ['inference (streaming)', '/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }],
    ];

    it.each(routes)('on the %s route %s', async (_function, path, body) => {
      const call = (headers: Record<string, string>) => service.call(path, { method: body ? 'POST' : 'GET', body, headers });
      const token = await accessToken();
      const cases: [string, Record<string, string>, string, string][] = [
        ['no credential', {}, `Bearer ${metadata()}`, 'Missing Authentication header'],
        ['another scheme', { Authorization: 'Basic dXNlcjpwYXNz' }, `Bearer error="invalid_request", ${metadata()}`, 'Malformed Authorization header: expected "Bearer <API key>"'],
        ['an unknown key', { Authorization: `Bearer sk-mg-v1-${'0'.repeat(64)}` }, `Bearer error="invalid_token", ${metadata()}`, 'Invalid API key'],
        ['a forged access token', { Authorization: `Bearer ${await forged(token)}` }, `Bearer error="invalid_token", ${metadata()}`, 'Invalid or expired access token'],
      ];
      for (const [what, headers, challenge, message] of cases) {
        const response = await call(headers);
        expect([what, response.status, response.headers.get('www-authenticate'), response.body]).toEqual([what, 401, challenge, { error: { code: 401, message } }]);
      }
    });
  });
});
