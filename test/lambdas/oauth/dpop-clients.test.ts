import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { systemClock } from '../../../lambdas/clock';
import { catalogDependencies } from '../../../lambdas/functions/catalog/dependencies';
import { createCatalogHandler } from '../../../lambdas/functions/catalog/handler';
import { ROUTES } from '../../../lambdas/routes';
import { USAGE_FIGURES_SECONDS } from '../../../lambdas/usage/usage';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { connectToRuntime } from '../../support/accounts';
import { proofKey, signProof, type ProofKey } from '../../support/dpop';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';
import { createTelemetry } from '../../../lambdas/observability/telemetry';
import { ReadableLogger } from '../../../local/readable-logger';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const AUDIENCE = 'https://modelgate.example';
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;
const COMPLETION = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

/**
 * Sender-constrained access tokens (RFC 9449) end to end on the local service: two client
 * libraries nobody here wrote bind their tokens and use them; a bound token without its key is
 * refused on every protected route; a proof is good once, across function instances.
 */
describe('DPoP-bound access tokens', () => {
  let service: TestService;
  let idp: TestIdentityProvider;
  let issuer: string;
  let inferencePolicy: string;
  let managementPolicy: string;

  beforeAll(async () => {
    service = await startTestService();
    issuer = service.runtime.baseUrl;
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    const { keys } = service.runtime.demo;
    const created = await service.call('/workload-identity/issuers', {
      method: 'POST',
      key: keys.managementReadWrite,
      body: { name: 'DPoP suite identity provider', issuer_url: idp.issuerUrl },
    });
    const policy = async (name: string, key: string, requireDpop: boolean) => {
      const response = await service.call('/workload-identity/policies', {
        method: 'POST',
        key: keys.managementReadWrite,
        body: { name, issuer_id: created.body.data.id, subject: SUBJECT, audience: AUDIENCE, api_key_hash: hashApiKey(key), require_dpop: requireDpop },
      });
      expect([response.status, response.body.data.require_dpop]).toEqual([201, requireDpop]);
      return response.body.data.id as string;
    };
    inferencePolicy = await policy('DPoP inference', keys.workspace, false);
    managementPolicy = await policy('DPoP management', keys.managementReadWrite, true);
  });
  afterAll(async () => {
    await idp?.close();
    await service?.stop();
  });

  const subjectToken = () => idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID() });
  const exchangeForm = (policyId: string) =>
    new URLSearchParams({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: subjectToken(), federation_policy_id: policyId }).toString();
  const exchange = (policyId: string, proof?: string) =>
    service.call('/oauth/token', {
      method: 'POST',
      body: exchangeForm(policyId),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(proof ? { DPoP: proof } : {}) },
    });
  /** A bound token for `key`, by a plain form post with a proof. */
  async function boundToken(key: ProofKey, policyId = inferencePolicy): Promise<string> {
    const response = await exchange(policyId, await signProof(key, { htu: `${issuer}/oauth/token` }));
    expect([response.status, response.body.token_type]).toEqual([200, 'DPoP']);
    return response.body.access_token;
  }
  /** A protected request with `Authorization: <scheme> <token>` and, when given, a proof. */
  const present = (path: string, token: string, { scheme = 'DPoP', proof, method = 'GET', body }: { scheme?: string; proof?: string; method?: string; body?: unknown } = {}) =>
    service.call(path, { method, body, headers: { Authorization: `${scheme} ${token}`, ...(proof ? { DPoP: proof } : {}) } });
  const proofFor = (key: ProofKey, token: string, path: string, method = 'GET', options = {}) =>
    signProof(key, { htm: method, htu: `${issuer}${path}`, accessToken: token, ...options });

  describe('clients', () => {
    it('oauth4webapi: DPoP() binds the exchange, then /models/user and /chat/completions take the bound token', async () => {
      const as = await oauth.processDiscoveryResponse(new URL(issuer), await oauth.discoveryRequest(new URL(issuer), { algorithm: 'oauth2', ...INSECURE }));
      expect(as.dpop_signing_alg_values_supported).toContain('ES256');
      const oauthClient: oauth.Client = { client_id: inferencePolicy, token_endpoint_auth_method: 'none' };
      const keyPair = await oauth.generateKeyPair('ES256');
      const DPoP = oauth.DPoP(oauthClient, keyPair);
      const parameters = new URLSearchParams({ subject_token: subjectToken(), subject_token_type: JWT_TYPE, federation_policy_id: inferencePolicy });
      const response = await oauth.genericTokenEndpointRequest(as, oauthClient, oauth.None(), GRANT, parameters, { DPoP, ...INSECURE });
      const tokens = await oauth.processGenericTokenEndpointResponse(as, oauthClient, response);
      expect(tokens.token_type).toBe('dpop');
      expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)) });

      const models = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${issuer}/models/user?limit=2`), undefined, undefined, { DPoP, ...INSECURE });
      expect(models.status).toBe(200);
      expect(((await models.json()) as { data: unknown[] }).data).toHaveLength(2);
      const completion = await oauth.protectedResourceRequest(
        tokens.access_token,
        'POST',
        new URL(`${issuer}/chat/completions`),
        new Headers({ 'Content-Type': 'application/json' }),
        JSON.stringify(COMPLETION),
        { DPoP, ...INSECURE },
      );
      expect(completion.status).toBe(200);
      expect(((await completion.json()) as { choices: { message: { role: string } }[] }).choices[0]!.message.role).toBe('assistant');
    });

    it('openid-client: the DPoP option binds the exchange, and fetchProtectedResource uses the token', async () => {
      const config = await client.discovery(new URL(issuer), managementPolicy, undefined, client.None(), { execute: [client.allowInsecureRequests] });
      const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
      const parameters = new URLSearchParams({ subject_token: subjectToken(), subject_token_type: JWT_TYPE, federation_policy_id: managementPolicy });
      const tokens = await client.genericGrantRequest(config, GRANT, parameters, { DPoP });
      expect(tokens).toMatchObject({ token_type: 'dpop', scope: 'management' });
      const keys = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${issuer}/keys`), 'GET', undefined, undefined, { DPoP });
      expect(keys.status).toBe(200);
    });
  });

  describe('the token endpoint', () => {
    it('refuses a policy that requires DPoP without a proof, and an invalid proof for any policy', async () => {
      const required = await exchange(managementPolicy);
      expect([required.status, required.body.error]).toEqual([400, 'invalid_dpop_proof']);
      const key = await proofKey();
      const wrongUrl = await exchange(inferencePolicy, await signProof(key, { htu: `${issuer}/models/user` }));
      expect([wrongUrl.status, wrongUrl.body.error]).toEqual([400, 'invalid_dpop_proof']);
      expect(wrongUrl.body.error_description).toMatch(/^The DPoP proof htu must be the request URL/);
      // Without a proof, a policy that does not require one issues a Bearer token as before.
      expect((await exchange(inferencePolicy)).body.token_type).toBe('Bearer');
    });

    it('takes a proof for the URL the request was sent to on a regional hostname, and says what is wrong with others', async () => {
      const key = await proofKey();
      const port = new URL(issuer).port;
      const regional = `http://eu.localhost:${port}/api/v1`;
      const viaEu = (proof: string) =>
        service.call('/oauth/token', {
          method: 'POST',
          host: `eu.localhost:${port}`,
          body: exchangeForm(inferencePolicy),
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: proof },
        });
      const exchanged = await viaEu(await signProof(key, { htu: `${regional}/oauth/token` }));
      expect([exchanged.status, exchanged.body.token_type]).toEqual([200, 'DPoP']);
      // The bound token is used on the regional hostname, with a proof for the URL called there.
      const token = exchanged.body.access_token as string;
      const models = await service.call('/models/user?limit=1', {
        host: `eu.localhost:${port}`,
        headers: { Authorization: `DPoP ${token}`, DPoP: await signProof(key, { htm: 'GET', htu: `${regional}/models/user`, accessToken: token }) },
      });
      expect(models.status).toBe(200);
      // The API base URL's form stays good on any hostname; a host the deployment does not serve is never one.
      expect((await viaEu(await signProof(key, { htu: `${issuer}/oauth/token` }))).status).toBe(200);
      const spelled = await viaEu(await signProof(key, { htu: `http://0x7f000001:${port}/api/v1/oauth/token` }));
      expect([spelled.status, spelled.body.error, spelled.body.error_description]).toEqual([
        400,
        'invalid_dpop_proof',
        expect.stringMatching(new RegExp(`^The DPoP proof htu must be the request URL, ${issuer}/oauth/token \\(request id `)),
      ]);
      const elsewhere = await exchange(inferencePolicy, await signProof(key, { htu: `${regional}/oauth/token` }));
      expect([elsewhere.status, elsewhere.body.error]).toEqual([400, 'invalid_dpop_proof']);
    });

    it('keeps error_description in the RFC 6749 character set when the refusal quotes a library message', async () => {
      const key = await proofKey();
      const response = await exchange(inferencePolicy, await signProof(key, { htu: `${issuer}/oauth/token`, iat: 'yesterday' }));
      expect([response.status, response.body.error]).toEqual([400, 'invalid_dpop_proof']);
      expect(response.body.error_description).toMatch(/^The DPoP proof claims are not valid: 'iat' claim must be a number \(request id [0-9a-f-]{36}\)$/);
      expect(response.body.error_description).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
    });

    it('records whether each exchange was bound, and to which key', async () => {
      const key = await proofKey();
      await boundToken(key);
      const events = await service.call(`/workload-identity/events?policy_id=${inferencePolicy}&limit=100`, { key: service.runtime.demo.keys.managementReadWrite });
      expect(events.body.data.find((event: { dpop_jkt: string | null }) => event.dpop_jkt === key.jkt)).toMatchObject({ outcome: 'issued' });
    });
  });

  describe('a stolen bound token, without its key', () => {
    let key: ProofKey;
    let thief: ProofKey;
    let inferenceToken: string;
    let managementToken: string;
    beforeAll(async () => {
      [key, thief] = await Promise.all([proofKey(), proofKey()]);
      [inferenceToken, managementToken] = await Promise.all([boundToken(key), boundToken(key, managementPolicy)]);
    });

    it('is refused on every protected route, as a bearer token and with the thief’s own proof', async () => {
      const protectedRoutes = ROUTES.filter((route) => route.access !== 'public' && !('base' in route && route.base !== undefined));
      expect(protectedRoutes.length).toBeGreaterThan(20);
      for (const route of protectedRoutes) {
        const path = route.path.replace(/\{[^}]+\}/g, 'x');
        const token = route.access.startsWith('management') ? managementToken : inferenceToken;
        const asBearer = await present(path, token, { scheme: 'Bearer', method: route.method });
        expect([route.operationId, asBearer.status, asBearer.headers.get('www-authenticate')]).toEqual([
          route.operationId,
          401,
          expect.stringMatching(/^DPoP error="invalid_token", algs="ES256 /),
        ]);
        const thiefProof = await proofFor(thief, token, path, route.method);
        const withThiefProof = await present(path, token, { proof: thiefProof, method: route.method });
        expect([route.operationId, withThiefProof.status, withThiefProof.headers.get('www-authenticate')]).toEqual([
          route.operationId,
          401,
          expect.stringMatching(/^DPoP error="invalid_dpop_proof"/),
        ]);
        const noProof = await present(path, token, { method: route.method });
        expect([route.operationId, noProof.status]).toEqual([route.operationId, 401]);
      }
    });

    it('is refused with a proof of its key made for another token, method or URL, or sent twice', async () => {
      const path = '/models/user';
      const other = await boundToken(key);
      const cases: [string, string][] = [
        ['another token', await proofFor(key, other, path)],
        ['another method', await proofFor(key, inferenceToken, path, 'POST')],
        ['another URL', await proofFor(key, inferenceToken, '/models/user/x')],
        ['an old proof', await proofFor(key, inferenceToken, path, 'GET', { iat: Math.floor(Date.now() / 1000) - 600 })],
      ];
      for (const [name, proof] of cases) {
        const response = await present(path, inferenceToken, { proof });
        expect([name, response.status, response.headers.get('www-authenticate')]).toEqual([name, 401, expect.stringMatching(/^DPoP error="invalid_dpop_proof"/)]);
      }
      const once = await proofFor(key, inferenceToken, path);
      expect((await present(path, inferenceToken, { proof: once })).status).toBe(200);
      const replayed = await present(path, inferenceToken, { proof: once });
      expect([replayed.status, replayed.body.error.message]).toEqual([401, 'The DPoP proof was used before: sign a new proof for every request']);
    });

    it('an API key or an unbound token is not taken under the DPoP scheme, and unbound tokens work as before', async () => {
      const { keys } = service.runtime.demo;
      const apiKey = await present('/models/user', keys.workspace, { proof: await proofFor(key, keys.workspace, '/models/user') });
      expect([apiKey.status, apiKey.headers.get('www-authenticate')]).toEqual([401, expect.stringMatching(/^DPoP error="invalid_token"/)]);
      const bearer = (await exchange(inferencePolicy)).body.access_token as string;
      const unbound = await present('/models/user', bearer, { proof: await proofFor(key, bearer, '/models/user') });
      expect([unbound.status, unbound.body.error.message]).toEqual([401, 'This access token is not DPoP-bound: send it as "Authorization: Bearer <token>"']);
      expect((await service.call('/models/user?limit=1', { key: bearer })).status).toBe(200);
    });
  });

  it('takes a proof once across two function instances sharing the replay store', async () => {
    const key = await proofKey();
    const token = await boundToken(key);
    // A second catalog function container: its own handler, stores and caches, the same tables.
    const { documentClient } = connectToRuntime(service.runtime);
    const tables = Object.fromEntries(Object.entries(TABLE_SCHEMAS).map(([id, schema]) => [id, schema.localName])) as never;
    const second = createCatalogHandler(
      catalogDependencies(
        { documentClient, tables, clock: systemClock, telemetry: createTelemetry({ functionName: 'catalog', logLevel: 'ERROR', localLogger: new ReadableLogger({ serviceName: 'modelgate', logLevel: 'ERROR' }, () => undefined) }) },
        { apiBaseUrl: issuer, accessTokenMaxLifetimeSeconds: 900, catalogCacheSeconds: 60, catalogReloadSpreadSeconds: 0, usageFiguresSeconds: USAGE_FIGURES_SECONDS, regionalHostnames: {}, corsAllowedOrigins: ['*'], publicCatalog: false },
      ),
    );
    const proofs = await Promise.all(Array.from({ length: 3 }, () => proofFor(key, token, '/models/user')));
    const event = (proof: string) =>
      ({
        resource: '/api/v1/models/user',
        path: '/api/v1/models/user',
        httpMethod: 'GET',
        headers: { Authorization: `DPoP ${token}`, DPoP: proof },
        multiValueHeaders: { Authorization: [`DPoP ${token}`], DPoP: [proof] },
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: null,
        stageVariables: null,
        body: null,
        isBase64Encoded: false,
        requestContext: { requestId: randomUUID(), identity: { sourceIp: '127.0.0.1' } },
      }) as never;
    for (const proof of proofs) {
      // The same proof at both instances at once: exactly one takes it.
      const [viaRuntime, viaSecond] = await Promise.all([present('/models/user', token, { proof }), second(event(proof), { functionName: 'catalog', awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 30_000 } as never)]);
      expect([viaRuntime.status, viaSecond.statusCode].sort()).toEqual([200, 401]);
    }
  });
});
