import { randomUUID } from 'node:crypto';
import { OpenRouter } from '@openrouter/sdk';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { allowInsecureRequests, validateJwtAccessToken } from 'oauth4webapi';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import type { FederationIssuer, FederationPolicy } from '../../../lambdas/federation/types';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { makeIssuer, makePolicy } from '../../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const GENERIC = 'The subject token or federation policy is not valid';
/** Exchanges this file may send from 127.0.0.1 before the per-address limit answers 429. */
const LIMIT = 50;

/**
 * `POST /oauth/token` through the local runtime's HTTP path: a real HTTPS identity provider
 * whose certificate comes from the runtime's development CA, issuers and policies in the
 * embedded DynamoDB, and every docs/reference.md#oauth-errors answer with its exact body and headers.
 */
describe('POST /oauth/token on the local service', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  let federation: DynamoFederationStore;
  let organizationId: string;
  let inference: FederationPolicy;
  let management: FederationPolicy;
  /**
   * Requests counted against this address's limit, by the rate window they fell in: a run that
   * crosses the hour's boundary starts a fresh counter (the windows are fixed, docs/reference.md#oauth-errors).
   */
  const sent = new Map<number, number>();
  const WINDOW_MS = 3600 * 1000;
  const currentWindow = () => Math.floor(Date.now() / WINDOW_MS);
  const countSent = () => void sent.set(currentWindow(), (sent.get(currentWindow()) ?? 0) + 1);

  async function addIssuer(overrides: Partial<FederationIssuer> = {}): Promise<FederationIssuer> {
    const issuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl, ...overrides });
    await federation.createIssuer(issuer);
    return issuer;
  }

  async function addPolicy(issuer: FederationIssuer, overrides: Partial<FederationPolicy> = {}): Promise<FederationPolicy> {
    const policy = makePolicy({
      organizationId,
      issuerId: issuer.id,
      subject: SUBJECT,
      audience: AUDIENCE,
      apiKeyHash: hashApiKey(service.runtime.demo.keys.workspace),
      ...overrides,
    });
    await federation.createPolicy(policy);
    return policy;
  }

  const form = (fields: Record<string, string | undefined>) =>
    new URLSearchParams(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined)).toString();

  const exchange = (fields: Record<string, string | undefined> | string, headers: Record<string, string> = FORM) => {
    countSent();
    return service.call('/oauth/token', { method: 'POST', body: typeof fields === 'string' ? fields : form(fields), headers });
  };

  const request = (policy: FederationPolicy, claims: Record<string, unknown> = {}, extra: Record<string, string> = {}) =>
    exchange({
      grant_type: GRANT,
      subject_token_type: JWT_TYPE,
      subject_token: idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID(), ...claims }),
      federation_policy_id: policy.id,
      ...extra,
    });

  /** A refusal: status, error, `Cache-Control: no-store`, and the request id at the end of the description. */
  function expectRefusal(response: Awaited<ReturnType<typeof exchange>>, status: number, error: string, description: string) {
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect([response.status, response.headers.get('cache-control'), response.body]).toEqual([
      status,
      'no-store',
      { error, error_description: `${description} (request id ${requestId})` },
    ]);
  }

  const events = async (policy: FederationPolicy) =>
    (await service.call(`/workload-identity/events?policy_id=${policy.id}`, { key: service.runtime.demo.keys.managementReadOnly })).body
      .data as { request_id: string; outcome: string; reason: string | null; subject: string; token_jti: string | null }[];

  beforeAll(async () => {
    // An hour's window: a window boundary inside this file's few seconds would reset the count.
    service = await startTestService({ exchangeRateLimit: LIMIT, exchangeRateWindowSeconds: WINDOW_MS / 1000 });
    stores = connectToRuntime(service.runtime);
    organizationId = service.runtime.demo.organizationId;
    federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
    // The runtime trusts its development CA; an identity provider on this machine uses it.
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    const issuer = await addIssuer();
    inference = await addPolicy(issuer);
    management = await addPolicy(issuer, {
      scope: 'management',
      apiKeyHash: hashApiKey(service.runtime.demo.keys.managementReadOnly),
    });
  });
  afterAll(async () => {
    await idp?.close();
    stores?.destroy();
    await service?.stop();
  });

  it('issues an ES256 at+jwt with exactly the docs/reference.md#the-token-exchange body, verifiable against the JWKS URL', async () => {
    const response = await request(inference);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body).toEqual({
      access_token: expect.any(String),
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: expect.any(Number),
      scope: 'inference',
    });
    const token = response.body.access_token as string;
    const jwks = createRemoteJWKSet(new URL(`${service.runtime.baseUrl}/oauth/jwks`));
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: service.runtime.baseUrl,
      audience: service.runtime.baseUrl,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toEqual({
      iss: service.runtime.baseUrl,
      aud: service.runtime.baseUrl,
      sub: SUBJECT,
      exp: payload.iat! + response.body.expires_in,
      iat: expect.any(Number),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_id: inference.id,
      scope: 'inference',
      federation_policy_id: inference.id,
      federation_issuer_id: inference.issuerId,
      api_key_hash: hashApiKey(service.runtime.demo.keys.workspace),
    });
    // Lifetime: the earlier of 15 minutes and the subject token's expiry (10 minutes here).
    expect(response.body.expires_in).toBeGreaterThan(590);
    expect(response.body.expires_in).toBeLessThanOrEqual(600);

    const recorded = await events(inference);
    expect(recorded[0]).toMatchObject({
      request_id: response.headers.get('x-request-id'),
      outcome: 'issued',
      reason: null,
      subject: SUBJECT,
      token_jti: payload.jti,
    });
  });

  it('takes an OIDC ID token by its own type (RFC 8693 §3) and the API as the resource; refuses any other resource (RFC 8707)', async () => {
    const idToken = await request(inference, {}, { subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', resource: service.runtime.baseUrl });
    expect([idToken.status, idToken.body.token_type]).toEqual([200, 'Bearer']);
    const elsewhere = await request(inference, {}, { resource: 'https://elsewhere.example.com/api/v1' });
    expectRefusal(elsewhere, 400, 'invalid_target', `resource must be ${service.runtime.baseUrl}, the API tokens are issued for`);
  });

  it('issues tokens a resource server accepts with oauth4webapi validateJwtAccessToken', async () => {
    const { body } = await request(management);
    expect(body.scope).toBe('management');
    const as = { issuer: service.runtime.baseUrl, jwks_uri: `${service.runtime.baseUrl}/oauth/jwks` };
    const resourceRequest = new Request('https://resource.example/', { headers: { Authorization: `Bearer ${body.access_token}` } });
    const claims = await validateJwtAccessToken(as, resourceRequest, service.runtime.baseUrl, { [allowInsecureRequests]: true });
    expect(claims).toMatchObject({ iss: service.runtime.baseUrl, sub: SUBJECT, client_id: management.id, scope: 'management' });
  });

  it("works with the official SDK: oAuth.createOauthToken and listOauthJwks", async () => {
    const sdk = new OpenRouter({ serverURL: service.runtime.baseUrl, apiKey: '' });
    const issued = await sdk.oAuth.createOauthToken({
      tokenExchangeRequest: {
        grantType: GRANT,
        subjectTokenType: JWT_TYPE,
        subjectToken: idp.sign({ sub: SUBJECT, aud: AUDIENCE }),
        federationPolicyId: inference.id,
        scope: 'inference',
      },
    });
    countSent();
    expect(issued).toEqual({
      accessToken: expect.any(String),
      issuedTokenType: 'urn:ietf:params:oauth:token-type:access_token',
      tokenType: 'Bearer',
      expiresIn: expect.any(Number),
      scope: 'inference',
    });
    const jwks = await sdk.oAuth.listOauthJwks();
    expect(jwks.keys.map((key) => key.kid)).toContain(decodeProtectedHeader(issued.accessToken).kid);
  });

  it('publishes the keys with Cache-Control public, max-age=300', async () => {
    const response = await service.call('/oauth/jwks');
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(response.body.keys).toEqual([
      { kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), alg: 'ES256', use: 'sig' },
    ]);
  });

  it.each([
    ['a missing field', { grant_type: GRANT, subject_token_type: JWT_TYPE }, 'subject_token is required'],
    ['a subject token that is not a JWT', { grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: 'x', federation_policy_id: 'p' }, 'subject_token is not a JWT'],
    [
      'another subject token type',
      { grant_type: GRANT, subject_token_type: 'urn:ietf:params:oauth:token-type:saml2', subject_token: 'a.b.c', federation_policy_id: 'p' },
      `subject_token_type must be ${JWT_TYPE} or urn:ietf:params:oauth:token-type:id_token`,
    ],
    ['an actor token', { grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: 'a.b.c', federation_policy_id: 'p', actor_token: 'a.b.c' }, 'actor_token is not supported: tokens are issued for the subject alone'],
  ])('answers 400 invalid_request for %s', async (_name, fields, description) => {
    expectRefusal(await exchange(fields), 400, 'invalid_request', description);
  });

  it('answers 400 unsupported_grant_type for another grant', async () => {
    expectRefusal(await exchange({ grant_type: 'client_credentials' }), 400, 'unsupported_grant_type', `grant_type must be ${GRANT}`);
  });

  it('answers 400 invalid_scope for a scope that is neither value, and for one the policy does not grant', async () => {
    expectRefusal(await request(inference, {}, { scope: 'admin' }), 400, 'invalid_scope', 'scope must be inference or management');
    const differs = await request(inference, {}, { scope: 'management' });
    expectRefusal(differs, 400, 'invalid_scope', 'scope must be the scope the policy grants');
    expect((await events(inference))[0]).toMatchObject({ request_id: differs.headers.get('x-request-id'), reason: 'scope_mismatch' });
  });

  it('answers one generic invalid_grant for every grant failure, and records the true reason for the admin', async () => {
    const cases: [string, Promise<Awaited<ReturnType<typeof exchange>>>][] = [
      ['aud_mismatch', request(inference, { aud: 'https://elsewhere.example' })],
      ['sub_mismatch', request(inference, { sub: 'repo:acme/app:ref:refs/heads/feature' })],
      ['expired', request(inference, { exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 })],
      ['claim_too_large', request(inference, { sub: 's'.repeat(513) })],
    ];
    for (const [reason, pending] of cases) {
      const response = await pending;
      expectRefusal(response, 400, 'invalid_grant', GENERIC);
      const recorded = (await events(inference)).find((event) => event.request_id === response.headers.get('x-request-id'));
      expect([reason, recorded?.outcome, recorded?.reason]).toEqual([reason, 'refused', reason]);
    }
    // A policy id that names no policy: the same answer, and no organization to tell.
    const unknown = await request({ ...inference, id: randomUUID() });
    expectRefusal(unknown, 400, 'invalid_grant', GENERIC);
  });

  it('refuses a replayed jti when the issuer checks jti, and a token without one', async () => {
    // Issuer URLs are unique per organization; tokens of this one name it as their `iss`.
    const issuer = await addIssuer({ issuerUrl: `${idp.issuerUrl}/jti`, checkJti: true, jwksUrl: idp.keysUrl });
    const policy = await addPolicy(issuer);
    const token = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE, jti: 'deploy-42' });
    const fields = { grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: token, federation_policy_id: policy.id };
    expect((await exchange(fields)).status).toBe(200);
    expectRefusal(await exchange(fields), 400, 'invalid_grant', GENERIC);
    const withoutJti = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE });
    expectRefusal(await exchange({ ...fields, subject_token: withoutJti }), 400, 'invalid_grant', GENERIC);
    expect((await events(policy)).map((event) => [event.outcome, event.reason])).toEqual([
      ['refused', 'replayed'],
      ['refused', 'replayed'],
      ['issued', null],
    ]);
  });

  it('refuses NumericDates from 2^53 and non-numbers as malformed_token on a check_jti issuer, records them, and the tester agrees', async () => {
    const issuer = await addIssuer({ issuerUrl: `${idp.issuerUrl}/numbers`, checkJti: true, jwksUrl: idp.keysUrl });
    const policy = await addPolicy(issuer);
    const now = Math.floor(Date.now() / 1000);
    const hostile: [string, unknown][] = [
      ['2^53', 2 ** 53],
      ['2^53 + 2', 2 ** 53 + 2],
      ['1e300', 1e300],
      ['a string', String(now + 60)],
    ];
    for (const [name, exp] of hostile) {
      const token = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE, jti: `numbers-${name}`, exp });
      const response = await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: token, federation_policy_id: policy.id });
      expectRefusal(response, 400, 'invalid_grant', GENERIC);
      const recorded = (await events(policy)).find((event) => event.request_id === response.headers.get('x-request-id'));
      expect([name, recorded?.reason]).toEqual([name, 'malformed_token']);
      // The tester counts against the same per-address limit as the exchange.
      countSent();
      const tested = await service.call(`/workload-identity/policies/${policy.id}/evaluate`, {
        method: 'POST',
        key: service.runtime.demo.keys.managementReadOnly,
        body: { subject_token: token },
      });
      const failed = (tested.body.data.steps as { name: string; status: string; detail: string }[]).find((step) => step.status === 'failed');
      expect([name, tested.status, tested.body.data.result, failed?.name]).toEqual([name, 200, 'fail', 'signature']);
      expect(failed?.detail).toMatch(/NumericDate/);
    }
    // A whole-second exp: the lifetime is whole seconds, to the second the subject token ends.
    const token = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE, jti: 'numbers-whole', exp: now + 61 });
    const issued = await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: token, federation_policy_id: policy.id });
    expect(issued.status).toBe(200);
    expect(Number.isInteger(issued.body.expires_in)).toBe(true);
    expect(JSON.parse(Buffer.from(issued.body.access_token.split('.')[1], 'base64url').toString()).exp).toBe(now + 61);
    // A fractional exp (RFC 7519 §2): whole seconds, the fraction dropped, never past the subject token.
    const fractional = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE, jti: 'numbers-fraction', exp: now + 60.25, iat: now - 0.5 });
    const fromFraction = await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: fractional, federation_policy_id: policy.id });
    expect(fromFraction.status).toBe(200);
    const accessClaims = JSON.parse(Buffer.from(fromFraction.body.access_token.split('.')[1], 'base64url').toString());
    expect(accessClaims.exp).toBe(now + 60);
    expect(fromFraction.body.expires_in).toBe(accessClaims.exp - accessClaims.iat);
    expect(Number.isInteger(fromFraction.body.expires_in)).toBe(true);
  });

  it('refuses a fetched key written in a second encoding (a 33-byte coordinate) and records why', async () => {
    const issuer = await addIssuer({ issuerUrl: `${idp.issuerUrl}/padded`, jwksUrl: `${idp.issuerUrl}/padded/keys` });
    const policy = await addPolicy(issuer);
    const published = idp.jwks().keys.map((key) =>
      key.kty === 'EC' ? { ...key, y: Buffer.concat([Buffer.alloc(1), Buffer.from(key.y!, 'base64url')]).toString('base64url') } : key,
    );
    idp.respond('/padded/keys', { status: 200, body: { keys: published } });
    const token = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE });
    expectRefusal(await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: token, federation_policy_id: policy.id }), 400, 'invalid_grant', GENERIC);
    const tested = await service.call(`/workload-identity/policies/${policy.id}/evaluate`, {
      method: 'POST',
      key: service.runtime.demo.keys.managementReadOnly,
      body: { subject_token: token },
    });
    countSent();
    const failed = (tested.body.data.steps as { status: string; detail: string }[]).find((step) => step.status === 'failed');
    expect(failed?.detail).toMatch(/has y of 33 bytes: a P-256 coordinate is exactly 32 bytes/);
  });

  it('answers 503 temporarily_unavailable when the issuer keys cannot be fetched', async () => {
    const issuer = await addIssuer({ issuerUrl: `${idp.issuerUrl}/down`, jwksUrl: `${idp.issuerUrl}/down/keys` });
    const policy = await addPolicy(issuer);
    idp.respond('/down/keys', { status: 500, body: 'unavailable' });
    const token = idp.sign({ iss: issuer.issuerUrl, sub: SUBJECT, aud: AUDIENCE });
    const response = await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: token, federation_policy_id: policy.id });
    expectRefusal(response, 503, 'temporarily_unavailable', "The identity provider's keys could not be fetched; retry shortly");
    expect(response.headers.get('retry-after')).toBe('5');
    expect((await events(policy))[0]).toMatchObject({ reason: 'keys_unavailable' });
  });

  /** A subject token the provider signs, of exactly `bytes` bytes: a claim no rule reads makes up the size. */
  function tokenOfSize(bytes: number, claims: Record<string, unknown>): string {
    // The payload is base64url: 4 characters for 3 bytes, and the rest of the token under 700.
    for (let padding = Math.floor(((bytes - 700) * 3) / 4); padding < bytes; padding++) {
      // Base64url never makes a part of 4n + 1 characters: a one-character header member shifts it.
      for (const shift of [undefined, 'x', 'xy']) {
        const token = idp.sign({ ...claims, padding: 'p'.repeat(padding) }, { header: { shift } });
        if (token.length === bytes) return token;
      }
    }
    throw new Error(`no token of exactly ${bytes} bytes`);
  }

  it('takes a subject token of exactly 16 KB (docs/reference.md#limits) and refuses one byte more, before anything about the policy is read', async () => {
    const claims = { sub: SUBJECT, aud: AUDIENCE, jti: randomUUID() };
    const largest = tokenOfSize(16 * 1024, claims);
    expect(Buffer.byteLength(largest)).toBe(16_384);
    const taken = await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: largest, federation_policy_id: inference.id });
    expect([taken.status, taken.body.token_type]).toEqual([200, 'Bearer']);
    const over = tokenOfSize(16 * 1024 + 1, { ...claims, jti: randomUUID() });
    const before = (await events(inference)).length;
    expectRefusal(await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: over, federation_policy_id: inference.id }), 400, 'invalid_request', 'subject_token is larger than 16 KB');
    // Refused as a malformed request: no policy was read, so no event is recorded under it.
    expect((await events(inference)).length).toBe(before);
    // Bytes, not characters: 16,384 characters, one of them of 2 bytes, are over.
    const multiByte = `${largest.slice(0, -1)}é`;
    expect([multiByte.length, Buffer.byteLength(multiByte)]).toEqual([16_384, 16_385]);
    expectRefusal(await exchange({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: multiByte, federation_policy_id: inference.id }), 400, 'invalid_request', 'subject_token is larger than 16 KB');
  });

  it('answers 413 invalid_request for a body of 32 KB or more', async () => {
    expectRefusal(await exchange(`grant_type=x&pad=${'a'.repeat(40 * 1024)}`), 413, 'invalid_request', 'Request body must be smaller than 32 KB');
  });

  // Last: it spends what is left of this address's budget.
  it('answers 429 invalid_request with an integer Retry-After past the per-address limit, concurrent requests included', async () => {
    const remaining = LIMIT - (sent.get(currentWindow()) ?? 0);
    expect(remaining).toBeGreaterThan(0);
    const burst = await Promise.all(Array.from({ length: remaining + 10 }, () => exchange({ grant_type: 'client_credentials' })));
    const limited = burst.filter((response) => response.status === 429);
    expect(limited).toHaveLength(10);
    expect(burst.filter((response) => response.status === 400)).toHaveLength(remaining);
    for (const response of limited) {
      expectRefusal(response, 429, 'invalid_request', 'Too many token requests from this address');
      expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(Number(response.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    }
  });
});
