import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { EXCHANGE_STEPS } from '../../../lambdas/federation/evaluate-exchange';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { proofKey, signProof } from '../../support/dpop';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const evaluatePath = (policyId: string) => `/workload-identity/policies/${policyId}/evaluate`;
/** Exchanges and tester calls one address may make in this file's window (shared budget). */
const LIMIT = 60;

/** A window of half an hour to an hour that began less than a minute before `nowSeconds`. */
function freshWindowSeconds(nowSeconds: number): number {
  for (let seconds = 3600; seconds >= 1800; seconds--) if (Math.floor(nowSeconds) % seconds < 60) return seconds;
  throw new Error('no window of 30 to 60 minutes began in the last minute');
}

/**
 * `POST /workload-identity/policies/{id}/evaluate` (the policy tester) and
 * `POST /workload-identity/conditions/check` through the local runtime's HTTP path, with
 * tokens signed by a real identity provider whose keys the issuer holds inline.
 */
describe('policy tester API on the local service', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  let admin: string;
  let issuerId: string;
  let policy: { id: string };
  /** Tester calls that reached the per-address limit (authenticated with a management key). */
  let counted = 0;

  const post = (path: string, body: unknown, key = admin) => {
    if (path.endsWith('/evaluate') && key !== service.runtime.demo.keys.workspace) counted++;
    return service.call(path, { key, method: 'POST', body });
  };
  const evaluate = (policyId: string, subjectToken: string, key = admin) => post(evaluatePath(policyId), { subject_token: subjectToken }, key);
  const token = (claims: Record<string, unknown> = {}) => idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID(), ...claims });
  /** A policy of the suite's issuer for SUBJECT and AUDIENCE, acting as the demo workspace key, with `fields` besides. */
  const createPolicy = (fields: Record<string, unknown>) =>
    post('/workload-identity/policies', {
      issuer_id: issuerId,
      subject: SUBJECT,
      audience: AUDIENCE,
      api_key_hash: hashApiKey(service.runtime.demo.keys.workspace),
      ...fields,
    });

  beforeAll(async () => {
    // A window far longer than this file runs, begun less than a minute ago (windows count from
    // the epoch), so the shared budget is counted exactly whatever the hour.
    [service, idp] = await Promise.all([startTestService({ exchangeRateLimit: LIMIT, exchangeRateWindowSeconds: freshWindowSeconds(Date.now() / 1000) }), startIdentityProvider()]);
    stores = connectToRuntime(service.runtime);
    admin = service.runtime.demo.keys.managementReadWrite;
    const issuer = await post('/workload-identity/issuers', {
      name: 'CI',
      issuer_url: idp.issuerUrl,
      jwks: { keys: idp.keys.map((key) => key.publicJwk) },
    });
    expect(issuer.status).toBe(201);
    issuerId = issuer.body.data.id;
    const created = await createPolicy({ name: 'Deploy', condition: 'token_type == "" || token_type == "id"' });
    expect(created.status).toBe(201);
    policy = created.body.data;
  });
  afterAll(async () => {
    stores.destroy();
    await Promise.all([service.stop(), idp.close()]);
  });

  it('passes a good token through every step and says how long the issued token would live', async () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    const response = await evaluate(policy.id, token({ exp }));
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(Object.keys(response.body.data)).toEqual(['result', 'expires_in', 'token_type', 'dpop_jkt', 'steps']);
    expect([response.body.data.token_type, response.body.data.dpop_jkt]).toEqual(['Bearer', null]);
    expect(response.body.data.result).toBe('pass');
    // docs/reference.md#scopes-and-access rule 4: never beyond the exchanged token's exp.
    expect(response.body.data.expires_in).toBeGreaterThanOrEqual(298);
    expect(response.body.data.expires_in).toBeLessThanOrEqual(300);
    expect(response.body.data.steps.map((step: { name: string }) => step.name)).toEqual([...EXCHANGE_STEPS, 'dpop']);
    for (const step of response.body.data.steps) expect(step).toEqual({ name: step.name, status: 'passed', detail: expect.any(String) });
    expect(response.body.data.steps.find((step: { name: string }) => step.name === 'condition').detail).toContain(`subject "${SUBJECT}"`);
    // Nothing minted: no token anywhere in the answer.
    expect(response.text).not.toMatch(/access_token|eyJ/);
  });

  it('caps the lifetime at 15 minutes for a long-lived subject token', async () => {
    const response = await evaluate(policy.id, token({ exp: Math.floor(Date.now() / 1000) + 3600 }));
    expect(response.body.data).toMatchObject({ result: 'pass', expires_in: 900 });
  });

  it('names the failing step of a token with the wrong audience and marks the rest not reached', async () => {
    const response = await evaluate(policy.id, token({ aud: 'https://other.example' }));
    expect(response.status).toBe(200);
    expect(response.body.data.result).toBe('fail');
    expect(response.body.data.expires_in).toBeNull();
    const statuses = Object.fromEntries(response.body.data.steps.map((step: { name: string; status: string }) => [step.name, step.status]));
    expect(statuses).toEqual({
      size_limits: 'passed',
      policy_state: 'passed',
      signature: 'passed',
      iss: 'passed',
      aud: 'failed',
      sub: 'not_reached',
      'claim_check:scopes': 'not_reached',
      'claim_check:token_type': 'not_reached',
      condition: 'not_reached',
      dpop: 'not_reached',
    });
    expect(response.body.data.steps[4]).toEqual({
      name: 'aud',
      status: 'failed',
      detail: `No aud value of the token ("https://other.example") equals the policy audience "${AUDIENCE}" exactly.`,
    });
  });

  it('shows the condition value, and a paused policy as the policy_state step', async () => {
    const condition = await evaluate(policy.id, token({ token_type: 'access' }));
    expect(condition.body.data.steps.at(-2)).toEqual({ name: 'condition', status: 'failed', detail: expect.stringMatching(/^The condition is false for /) });

    const paused = await createPolicy({ name: 'Paused', enabled: false });
    const response = await evaluate(paused.body.data.id, token());
    expect(response.body.data.steps.slice(0, 2)).toEqual([
      { name: 'size_limits', status: 'passed', detail: expect.any(String) },
      { name: 'policy_state', status: 'failed', detail: 'The policy "Paused" is paused.' },
    ]);
  });

  it('shows the binding a DPoP proof would give, checks the proof as the exchange does, and a policy that requires one', async () => {
    const key = await proofKey();
    const proof = (options: Parameters<typeof signProof>[1] = {}) => signProof(key, { htu: `${service.runtime.baseUrl}/oauth/token`, ...options });
    const evaluateWith = async (policyId: string, dpopProof?: string) =>
      (await post(evaluatePath(policyId), { subject_token: token(), ...(dpopProof ? { dpop_proof: dpopProof } : {}) })).body.data;

    const bound = await evaluateWith(policy.id, await proof());
    expect([bound.result, bound.token_type, bound.dpop_jkt, bound.steps.at(-1)]).toEqual([
      'pass',
      'DPoP',
      key.jkt,
      { name: 'dpop', status: 'passed', detail: `The token is bound to the proof key with thumbprint ${key.jkt} (cnf.jkt)` },
    ]);
    const invalid = await evaluateWith(policy.id, await proof({ htm: 'GET' }));
    expect([invalid.result, invalid.token_type, invalid.steps.at(-1)]).toEqual(['fail', null, { name: 'dpop', status: 'failed', detail: 'The DPoP proof htm must be the request method, POST' }]);

    const requiring = await createPolicy({ name: 'Bound only', require_dpop: true });
    const withoutProof = await evaluateWith(requiring.body.data.id);
    expect([withoutProof.result, withoutProof.steps.at(-1).status, withoutProof.steps.at(-1).detail]).toEqual([
      'fail',
      'failed',
      'The policy issues DPoP-bound tokens only: the exchange needs a DPoP proof',
    ]);
    // The tester never uses a proof up: the same proof still binds a real exchange.
    const once = await proof();
    expect((await evaluateWith(requiring.body.data.id, once)).token_type).toBe('DPoP');
    const exchanged = await service.call('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: once },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        subject_token: token(),
        federation_policy_id: requiring.body.data.id,
      }).toString(),
    });
    expect([exchanged.status, exchanged.body.token_type]).toEqual([200, 'DPoP']);
    counted++;
  });

  it('judges a proof as the token endpoint on the same host does: the API base URL, or a served hostname it was sent to', async () => {
    const key = await proofKey();
    const { port } = new URL(service.runtime.baseUrl);
    const hosted = await createPolicy({ name: 'Hosts' });
    const on = (hostname: string) => `http://${hostname}:${port}/api/v1/oauth/token`;
    /** The `dpop` step's verdict, and the token endpoint's answer to the same proof on the same host. */
    const verdicts = async (host: string | undefined, htu: string) => {
      const proof = await signProof(key, { htu });
      counted += 2;
      const tested = await service.call(evaluatePath(hosted.body.data.id), { key: admin, method: 'POST', host, body: { subject_token: token(), dpop_proof: proof } });
      const exchanged = await service.call('/oauth/token', {
        method: 'POST',
        host,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: proof },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          subject_token: token(),
          federation_policy_id: hosted.body.data.id,
        }).toString(),
      });
      const step = tested.body.data.steps.at(-1);
      return {
        tester: step.status === 'passed' ? 'accepted' : step.detail,
        // The token endpoint adds the request's id to what it says.
        exchange: exchanged.status === 200 ? 'accepted' : `${exchanged.body.error}: ${exchanged.body.error_description.replace(/ \(request id [0-9a-f-]+\)$/, '')}`,
      };
    };
    const refused = (url: string) => `The DPoP proof htu must be the request URL, ${url}`;

    // Sent to the API base URL's host: a proof naming the regional hostname is for another URL.
    expect(await verdicts(undefined, on('127.0.0.1'))).toEqual({ tester: 'accepted', exchange: 'accepted' });
    expect(await verdicts(undefined, on('eu.localhost'))).toEqual({ tester: refused(on('127.0.0.1')), exchange: `invalid_dpop_proof: ${refused(on('127.0.0.1'))}` });
    // Sent to the regional hostname: a proof may name it, or the API base URL.
    expect(await verdicts(`eu.localhost:${port}`, on('eu.localhost'))).toEqual({ tester: 'accepted', exchange: 'accepted' });
    expect(await verdicts(`EU.localhost:${port}`, on('eu.localhost'))).toEqual({ tester: 'accepted', exchange: 'accepted' });
    expect(await verdicts(`eu.localhost:${port}`, on('127.0.0.1'))).toEqual({ tester: 'accepted', exchange: 'accepted' });
    // A hostname the deployment does not serve is named by neither.
    expect(await verdicts(`other.localhost:${port}`, on('other.localhost'))).toEqual({
      tester: refused(on('127.0.0.1')),
      exchange: `invalid_dpop_proof: ${refused(on('127.0.0.1'))}`,
    });
  });

  it('reports a forged signature as the signature step', async () => {
    const forged = idp.sign({ sub: SUBJECT, aud: AUDIENCE }, { privateKey: idp.addKey('ES256', 'unpublished').privateKey, kid: idp.keys[0]!.kid });
    const response = await evaluate(policy.id, forged);
    expect(response.body.data.steps[2]).toMatchObject({ name: 'signature', status: 'failed' });
  });

  it('lets a read-only management key test, and refuses other credentials', async () => {
    expect((await evaluate(policy.id, token(), service.runtime.demo.keys.managementReadOnly)).body.data.result).toBe('pass');
    expect((await evaluate(policy.id, token(), service.runtime.demo.keys.workspace)).status).toBe(403);
    const anonymous = await service.call(evaluatePath(policy.id), { method: 'POST', body: { subject_token: token() } });
    expect(anonymous.status).toBe(401);
  });

  it("answers 404 for another organization's policy and for an unknown id", async () => {
    const { organization } = await stores.accounts.createOrganization({ name: `Other ${randomUUID()}`, plan: 'enterprise' });
    const { secret } = await stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
    const other = await evaluate(policy.id, token(), secret);
    expect([other.status, other.body.error.code]).toEqual([404, 404]);
    expect((await evaluate(randomUUID(), token())).status).toBe(404);
  });

  it('refuses a missing, oversized or extra field with 400 naming it', async () => {
    expect((await post(evaluatePath(policy.id), {})).body).toEqual({
      error: { code: 400, message: 'Invalid subject_token: is required', metadata: { parameter: 'subject_token' } },
    });
    const oversized = await evaluate(policy.id, 'a'.repeat(16 * 1024 + 1));
    expect([oversized.status, oversized.body.error.metadata]).toEqual([400, { parameter: 'subject_token' }]);
    const extra = await post(evaluatePath(policy.id), { subject_token: token(), federation_policy_id: policy.id });
    expect([extra.status, extra.body.error.metadata]).toEqual([400, { parameter: 'federation_policy_id' }]);
    const notJwt = await evaluate(policy.id, 'not a token');
    expect(notJwt.body.data.steps[0]).toMatchObject({ name: 'size_limits', status: 'failed', detail: expect.stringMatching(/^The token cannot be decoded/) });
  });

  describe('condition check', () => {
    const check = (condition: unknown, key = admin) => post('/workload-identity/conditions/check', { condition }, key);

    it('accepts a well-typed boolean condition and lists the variables it reads', async () => {
      const response = await check('subject.startsWith("repo:acme/") && "deploy" in scopes', service.runtime.demo.keys.managementReadOnly);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { valid: true, message: null, variables: ['subject', 'scopes'] } });
    });

    it('gives the message saving the policy would give', async () => {
      const response = await check('subjekt == "x"');
      expect(response.body).toEqual({ data: { valid: false, message: 'unknown variable subjekt', variables: [] } });
      const save = await service.call(`/workload-identity/policies/${policy.id}`, { key: admin, method: 'PATCH', body: { condition: 'subjekt == "x"' } });
      expect(save.body.error.message).toBe('Invalid condition: unknown variable subjekt');
      expect((await check('subject')).body.data.message).toBe('the condition must yield a bool, not string');
    });

    it('refuses a condition that is not a string', async () => {
      expect((await check(42)).body).toEqual({
        error: { code: 400, message: 'Invalid condition: must be a CEL expression (a string)', metadata: { parameter: 'condition' } },
      });
    });
  });

  it('records no exchange event, whatever it evaluated', async () => {
    const events = await service.call(`/workload-identity/events?policy_id=${policy.id}`, { key: admin });
    expect([events.status, events.body.data]).toEqual([200, []]);
  });

  it('counts against the per-address limit of the token endpoint, which it shares', async () => {
    // Requests the token endpoint refuses after counting them (unsupported grant: no event).
    const exchange = () =>
      service.call('/oauth/token', { method: 'POST', body: 'grant_type=password', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    const left = LIMIT - counted;
    expect(left).toBeGreaterThan(1);
    for (let i = 0; i < left - 1; i++) expect((await exchange()).status).toBe(400);
    // The last hit of the budget goes to the tester; then both are refused.
    expect((await evaluate(policy.id, token())).status).toBe(200);
    const refused = await service.call(evaluatePath(policy.id), { key: admin, method: 'POST', body: { subject_token: token() } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toEqual({
      error: { code: 429, message: 'Too many token evaluations from this address; retry later', metadata: { retry_after_seconds: Number(refused.headers.get('retry-after')) } },
    });
    expect((await exchange()).status).toBe(429);
  });
});
