import { createServer, type Server } from 'node:net';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import type { Plan } from '../../../lambdas/accounts/types';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { startTestService, type TestService } from '../../support/local-service';

const ISSUERS = '/workload-identity/issuers';
const POLICIES = '/workload-identity/policies';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ENTITLEMENT = 'Workload identity federation requires the Business or Enterprise plan';

const ecJwk = (kid: string) => ({ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }), kid });
const rsaJwk = (kid: string, modulusLength = 2048) => ({
  ...generateKeyPairSync('rsa', { modulusLength }).publicKey.export({ format: 'jwk' }),
  kid,
});
/** The same number with a zero byte in front: what a lenient decoder reads as the same key. */
const leadingZero = (member: string) => Buffer.concat([Buffer.alloc(1), Buffer.from(member, 'base64url')]).toString('base64url');

describe('workload identity admin API on the local service', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let admin: string;
  let workspaceKeyHash: string;
  let managementKeyHash: string;

  /** A second organization with its own read-write management key. */
  async function organization(plan: Plan) {
    const { organization } = await stores.accounts.createOrganization({ name: `Org ${randomUUID()}`, plan });
    const { secret } = await stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
    const workspace = await stores.accounts.createApiKey(organization.id, { kind: 'workspace', name: 'CI' });
    return { id: organization.id, admin: secret, workspaceKeyHash: workspace.key.hash };
  }

  const call = (path: string, options: { key?: string; method?: string; body?: unknown } = {}) =>
    service.call(path, { key: admin, ...options });
  const post = (path: string, body: unknown, key = admin) => service.call(path, { key, method: 'POST', body });
  const patch = (path: string, body: unknown, key = admin) => service.call(path, { key, method: 'PATCH', body });
  const remove = (path: string, key = admin) => service.call(path, { key, method: 'DELETE' });

  let urls = 0;
  const uniqueUrl = () => `https://idp-${++urls}.example.com`;
  const createIssuer = async (body: Record<string, unknown> = {}, key = admin) => {
    const response = await post(ISSUERS, { name: 'IdP', issuer_url: uniqueUrl(), ...body }, key);
    expect(response.status).toBe(201);
    return response.body.data;
  };
  const policyBody = (issuerId: string, body: Record<string, unknown> = {}) => ({
    name: 'Deploy',
    issuer_id: issuerId,
    subject: 'system:serviceaccount:ci:runner',
    audience: 'https://modelgate.example',
    api_key_hash: workspaceKeyHash,
    ...body,
  });
  const createPolicy = async (issuerId: string, body: Record<string, unknown> = {}, key = admin) => {
    const response = await post(POLICIES, policyBody(issuerId, body), key);
    expect([response.status, response.body]).toEqual([201, expect.anything()]);
    return response.body.data;
  };
  const badRequest = (message: string, parameter: string) => ({ error: { code: 400, message, metadata: { parameter } } });

  beforeAll(async () => {
    service = await startTestService();
    stores = connectToRuntime(service.runtime);
    admin = service.runtime.demo.keys.managementReadWrite;
    workspaceKeyHash = hashApiKey(service.runtime.demo.keys.workspace);
    managementKeyHash = hashApiKey(service.runtime.demo.keys.managementReadOnly);
  });
  afterAll(async () => {
    stores.destroy();
    await service.stop();
  });

  describe('access', () => {
    it('lets any management key read, and refuses writes with a read-only key', async () => {
      const readOnly = service.runtime.demo.keys.managementReadOnly;
      expect((await call(ISSUERS, { key: readOnly })).status).toBe(200);
      expect((await call(POLICIES, { key: readOnly })).status).toBe(200);
      for (const response of [
        await post(ISSUERS, { name: 'x', issuer_url: uniqueUrl() }, readOnly),
        await post(POLICIES, {}, readOnly),
        await patch(`${ISSUERS}/${randomUUID()}`, { name: 'x' }, readOnly),
        await remove(`${POLICIES}/${randomUUID()}`, readOnly),
      ]) {
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: 'This management key is read-only' } }]);
      }
    });

    it('refuses workspace and personal keys with 403', async () => {
      for (const key of [service.runtime.demo.keys.workspace, service.runtime.demo.keys.personal]) {
        const response = await call(ISSUERS, { key });
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: 'Operation reserved for management keys' } }]);
      }
    });

    it('refuses a request without a key with 401', async () => {
      const response = await service.call(POLICIES);
      expect([response.status, response.body]).toEqual([401, { error: { code: 401, message: 'Missing Authentication header' } }]);
    });

    it('answers a body that is not JSON with 400', async () => {
      const response = await post(ISSUERS, '{"name": ');
      expect([response.status, response.body]).toEqual([400, { error: { code: 400, message: 'Request body is not valid JSON' } }]);
    });
  });

  describe('entitlement (docs/reference.md#workload-identity)', () => {
    it.each(['free', 'pro'] as const)('refuses create on the %s plan with 403', async (plan) => {
      const org = await organization(plan);
      for (const [path, body] of [
        [ISSUERS, { name: 'IdP', issuer_url: uniqueUrl() }],
        [POLICIES, policyBody(randomUUID())],
      ] as const) {
        const response = await post(path, body, org.admin);
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: ENTITLEMENT } }]);
      }
    });

    it('after a downgrade, lets the organization list, read and delete what it had, but not update it', async () => {
      const org = await organization('business');
      const issuer = await createIssuer({}, org.admin);
      const policy = await createPolicy(issuer.id, { api_key_hash: org.workspaceKeyHash }, org.admin);
      await stores.accounts.setPlan(org.id, 'pro');

      expect((await call(ISSUERS, { key: org.admin })).body).toEqual({ data: [issuer], total_count: 1 });
      expect((await call(`${POLICIES}/${policy.id}`, { key: org.admin })).body).toEqual({ data: policy });
      for (const response of [
        await patch(`${ISSUERS}/${issuer.id}`, { name: 'renamed' }, org.admin),
        await patch(`${POLICIES}/${policy.id}`, { enabled: false }, org.admin),
      ]) {
        expect([response.status, response.body]).toEqual([403, { error: { code: 403, message: ENTITLEMENT } }]);
      }
      expect((await remove(`${POLICIES}/${policy.id}`, org.admin)).body).toEqual({ deleted: true });
      expect((await remove(`${ISSUERS}/${issuer.id}`, org.admin)).body).toEqual({ deleted: true });
    });
  });

  describe('issuers', () => {
    it('creates an issuer (201) and reads it back alone and in the list', async () => {
      const url = uniqueUrl();
      const created = await post(ISSUERS, { name: 'Cluster', issuer_url: url, jwks_url: `${url}/keys`, check_jti: true });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          name: 'Cluster',
          issuer_url: url,
          jwks_url: `${url}/keys`,
          jwks: null,
          check_jti: true,
          created_at: expect.stringMatching(ISO),
          updated_at: null,
        },
      });
      const issuer = created.body.data;
      expect(await call(`${ISSUERS}/${issuer.id}`)).toMatchObject({ status: 200, body: { data: issuer } });
      const list = await call(ISSUERS);
      expect(list.body.total_count).toBe(list.body.data.length);
      expect(list.body.data).toContainEqual(issuer);
    });

    it('defaults to discovery (no jwks_url, no jwks) and check_jti false', async () => {
      expect(await createIssuer()).toMatchObject({ jwks_url: null, jwks: null, check_jti: false });
    });

    it('keeps inline public keys, EC P-256 and RSA, with only their public members', async () => {
      const ec = ecJwk('ec-1');
      const rsa = { ...rsaJwk('rsa-1'), alg: 'RS256', use: 'sig', x5t: 'ignored' };
      const issuer = await createIssuer({ jwks: { keys: [ec, rsa] } });
      expect(issuer.jwks).toEqual({
        keys: [
          { kty: 'EC', crv: 'P-256', x: ec.x, y: ec.y, kid: 'ec-1' },
          { kty: 'RSA', n: rsa.n, e: rsa.e, kid: 'rsa-1', alg: 'RS256', use: 'sig' },
        ],
      });
    });

    it('keeps the issuer URL character for character: a trailing slash is another issuer; a duplicate is 409', async () => {
      const url = uniqueUrl();
      await createIssuer({ issuer_url: url });
      const slash = await createIssuer({ issuer_url: `${url}/` });
      expect(slash.issuer_url).toBe(`${url}/`);
      const duplicate = await post(ISSUERS, { name: 'Again', issuer_url: url });
      expect([duplicate.status, duplicate.body]).toEqual([
        409,
        { error: { code: 409, message: `An issuer with issuer_url ${url} already exists in this organization` } },
      ]);
    });

    it('lets another organization trust the same issuer URL', async () => {
      const url = uniqueUrl();
      await createIssuer({ issuer_url: url });
      const other = await organization('enterprise');
      expect((await post(ISSUERS, { name: 'Same', issuer_url: url }, other.admin)).status).toBe(201);
    });

    it('fetches nothing when saving: the identity provider is never contacted', async () => {
      let connections = 0;
      const server: Server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      try {
        await createIssuer({ issuer_url: `https://127.0.0.1:${port}` });
        await createIssuer({ issuer_url: `https://127.0.0.1:${port}/other`, jwks_url: `https://127.0.0.1:${port}/jwks` });
        expect(connections).toBe(0);
      } finally {
        server.close();
      }
    });

    const long = (n: number) => `https://idp.example.com/${'a'.repeat(n - 'https://idp.example.com/'.length)}`;
    it.each([
      ['no name', { issuer_url: 'https://a.example' }, 'Invalid name: is required', 'name'],
      ['a name of 101 characters', { name: 'n'.repeat(101), issuer_url: 'https://a.example' }, 'Invalid name: must be at most 100 characters', 'name'],
      ['no issuer_url', { name: 'x' }, 'Invalid issuer_url: is required', 'issuer_url'],
      ['an http issuer', { name: 'x', issuer_url: 'http://idp.example.com' }, 'Invalid issuer_url: must be an https:// URL', 'issuer_url'],
      ['an issuer_url of 513 characters', { name: 'x', issuer_url: long(513) }, 'Invalid issuer_url: must be at most 512 characters', 'issuer_url'],
      ['an issuer_url with a query', { name: 'x', issuer_url: 'https://idp.example.com?tenant=1' }, 'Invalid issuer_url: must not have a query or fragment', 'issuer_url'],
      ['an issuer_url with credentials', { name: 'x', issuer_url: 'https://u:p@idp.example.com' }, 'Invalid issuer_url: must not contain credentials', 'issuer_url'],
      ['an issuer_url with a space', { name: 'x', issuer_url: 'https://idp.example.com/a b' }, 'Invalid issuer_url: must not contain whitespace or control characters', 'issuer_url'],
      ['an http jwks_url', { name: 'x', issuer_url: 'https://a.example', jwks_url: 'http://a.example/keys' }, 'Invalid jwks_url: must be an https:// URL', 'jwks_url'],
      [
        'both jwks_url and jwks',
        { name: 'x', issuer_url: 'https://a.example', jwks_url: 'https://a.example/keys', jwks: { keys: [ecJwk('k')] } },
        'Invalid jwks: an issuer takes jwks_url or jwks, not both (set the other to null)',
        'jwks',
      ],
      // The key set's shape is CreateIssuerRequest's now, and a refusal of it names the member at
      // fault, as every schema refusal does (was `Invalid jwks: must have a non-empty "keys" array`).
      ['an empty key set', { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [] } }, 'Invalid jwks.keys: must be a non-empty array', 'jwks.keys'],
      [
        'a private key',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...ecJwk('k'), d: 'secret' }] } },
        'Invalid jwks: keys[0] has the private member "d": give public keys only',
        'jwks',
      ],
      [
        'a key without kid',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...ecJwk('k'), kid: undefined }] } },
        'Invalid jwks: keys[0] needs a "kid" (a non-empty string of at most 256 characters)',
        'jwks',
      ],
      [
        'an EC key on P-384',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' }), kid: 'k' }] } },
        'Invalid jwks: keys[0] is an EC key on P-384: only P-256 (ES256) is accepted',
        'jwks',
      ],
      [
        'an RSA key of 1024 bits',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [rsaJwk('k', 1024)] } },
        'Invalid jwks: keys[0] is a 1024-bit RSA key: from 2048 to 8192 bits are accepted',
        'jwks',
      ],
      [
        'an RSA key with an exponent other than 65537',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...rsaJwk('k', 2048), e: 'Aw' }] } },
        'Invalid jwks: keys[0] has the RSA exponent "Aw": only 65537 ("AQAB") is accepted',
        'jwks',
      ],
      [
        'an EC coordinate of 33 bytes (a leading zero): one key, a second spelling',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...ecJwk('k'), x: leadingZero(ecJwk('k').x as string) }] } },
        'Invalid jwks: keys[0] has x of 33 bytes: a P-256 coordinate is exactly 32 bytes (RFC 7518 §6.2.1.2)',
        'jwks',
      ],
      [
        'an RSA modulus with a leading zero byte',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...rsaJwk('k', 2048), n: leadingZero(rsaJwk('k', 2048).n as string) }] } },
        'Invalid jwks: keys[0] has n with a leading zero byte: RFC 7518 §6.3.1 wants the shortest encoding',
        'jwks',
      ],
      [
        'an EC point not on the curve',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ ...ecJwk('k'), y: ecJwk('z').x }] } },
        'Invalid jwks: keys[0] is not a valid EC public key',
        'jwks',
      ],
      [
        // The key types are the schema's enumeration now (was `Invalid jwks: keys[0] has "kty" "oct": ...`,
        // named by the key admission that no longer sees such a key).
        'a symmetric key',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [{ kty: 'oct', kid: 'k' }] } },
        'Invalid jwks.keys[0].kty: only EC (P-256) and RSA keys are accepted',
        'jwks.keys[0].kty',
      ],
      [
        'two keys with one kid',
        { name: 'x', issuer_url: 'https://a.example', jwks: { keys: [ecJwk('k'), ecJwk('k')] } },
        'Invalid jwks: keys[1] repeats kid "k"',
        'jwks',
      ],
      ['a check_jti that is not a boolean', { name: 'x', issuer_url: 'https://a.example', check_jti: 'yes' }, 'Invalid check_jti: must be true or false', 'check_jti'],
      ['an unknown field', { name: 'x', issuer_url: 'https://a.example', audience: 'x' }, 'Invalid audience: is not a known field', 'audience'],
      ['a read-only field', { id: randomUUID(), name: 'x', issuer_url: 'https://a.example' }, 'Invalid id: is set by the service and read-only', 'id'],
    ])('refuses %s with 400', async (_name, body, message, parameter) => {
      const response = await post(ISSUERS, body);
      expect([response.status, response.body]).toEqual([400, badRequest(message, parameter)]);
    });

    it.each([
      ['10.1.2.3', 'private'],
      ['172.20.0.1', 'private'],
      ['192.168.1.10', 'private'],
      ['169.254.169.254', 'link-local'],
      ['[fd00::1]', 'private'],
      ['[fe80::1]', 'link-local'],
      ['[::ffff:10.0.0.1]', 'private'],
      ['100.64.0.1', 'shared address space'],
      ['0.0.0.0', 'unspecified'],
    ])('refuses the non-public host %s in issuer_url and jwks_url', async (host, kind) => {
      const issuer = await post(ISSUERS, { name: 'x', issuer_url: `https://${host}/` });
      const shown = new URL(`https://${host}/`).hostname;
      expect([issuer.status, issuer.body]).toEqual([
        400,
        badRequest(`Invalid issuer_url: the host ${shown} is not a public address (${kind})`, 'issuer_url'),
      ]);
      const jwks = await post(ISSUERS, { name: 'x', issuer_url: uniqueUrl(), jwks_url: `https://${host}/keys` });
      expect([jwks.status, jwks.body]).toEqual([
        400,
        badRequest(`Invalid jwks_url: the host ${shown} is not a public address (${kind})`, 'jwks_url'),
      ]);
    });

    it('accepts loopback hosts in the local runtime, for a development identity provider', async () => {
      expect((await createIssuer({ issuer_url: 'https://localhost:9443' })).issuer_url).toBe('https://localhost:9443');
      expect((await createIssuer({ issuer_url: 'https://[::1]:9443' })).issuer_url).toBe('https://[::1]:9443');
    });

    it('updates fields, switches the key source, and keeps what the patch does not name', async () => {
      const issuer = await createIssuer({ jwks_url: 'https://idp.example.com/keys' });
      const key = ecJwk('new');
      const refused = await patch(`${ISSUERS}/${issuer.id}`, { jwks: { keys: [key] } });
      expect([refused.status, refused.body]).toEqual([
        400,
        badRequest('Invalid jwks: an issuer takes jwks_url or jwks, not both (set the other to null)', 'jwks'),
      ]);
      const updated = await patch(`${ISSUERS}/${issuer.id}`, { name: 'Renamed', jwks_url: null, jwks: { keys: [key] }, check_jti: true });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toEqual({
        ...issuer,
        name: 'Renamed',
        jwks_url: null,
        jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: key.x, y: key.y, kid: 'new' }] },
        check_jti: true,
        updated_at: expect.stringMatching(ISO),
      });
      expect((await call(`${ISSUERS}/${issuer.id}`)).body.data).toEqual(updated.body.data);
    });

    it('moves an issuer to a new URL, freeing the old one; a URL another issuer holds is 409', async () => {
      const a = await createIssuer();
      const b = await createIssuer();
      const taken = await patch(`${ISSUERS}/${b.id}`, { issuer_url: a.issuer_url });
      expect([taken.status, taken.body]).toEqual([
        409,
        { error: { code: 409, message: `An issuer with issuer_url ${a.issuer_url} already exists in this organization` } },
      ]);
      const moved = await patch(`${ISSUERS}/${a.id}`, { issuer_url: uniqueUrl() });
      expect(moved.status).toBe(200);
      expect((await post(ISSUERS, { name: 'Reuse', issuer_url: a.issuer_url })).status).toBe(201);
    });

    it('refuses an empty patch and a patch removing a required field', async () => {
      const issuer = await createIssuer();
      const empty = await patch(`${ISSUERS}/${issuer.id}`, {});
      expect([empty.status, empty.body]).toEqual([
        400,
        badRequest('Invalid body: give at least one of name, issuer_url, jwks_url, jwks, check_jti', 'body'),
      ]);
      const removal = await patch(`${ISSUERS}/${issuer.id}`, { issuer_url: null });
      expect([removal.status, removal.body]).toEqual([400, badRequest('Invalid issuer_url: is required and cannot be removed', 'issuer_url')]);
    });

    it('answers 404 for an unknown id, an id that is not a UUID, and another organization’s issuer', async () => {
      const other = await organization('enterprise');
      const theirs = await createIssuer({}, other.admin);
      for (const [id, message] of [
        [randomUUID(), 'Issuer <id> not found'],
        [theirs.id, 'Issuer <id> not found'],
        ['not-a-uuid', 'Issuer not found'],
        [theirs.id.toUpperCase(), 'Issuer not found'],
      ]) {
        for (const response of [await call(`${ISSUERS}/${id}`), await patch(`${ISSUERS}/${id}`, { name: 'x' }), await remove(`${ISSUERS}/${id}`)]) {
          expect([response.status, response.body]).toEqual([404, { error: { code: 404, message: message!.replace('<id>', id!) } }]);
        }
      }
      expect((await call(`${ISSUERS}/${theirs.id}`, { key: other.admin })).status).toBe(200);
    });

    it('deletes an issuer together with its policies (docs/reference.md#lifecycle); a second delete is 404', async () => {
      const issuer = await createIssuer();
      const keep = await createIssuer();
      const p1 = await createPolicy(issuer.id);
      const p2 = await createPolicy(issuer.id, { enabled: false });
      const kept = await createPolicy(keep.id);

      expect(await remove(`${ISSUERS}/${issuer.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
      for (const id of [p1.id, p2.id]) expect((await call(`${POLICIES}/${id}`)).status).toBe(404);
      const policies = (await call(POLICIES)).body.data.map((p: { id: string }) => p.id);
      expect(policies).not.toEqual(expect.arrayContaining([p1.id]));
      expect(policies).toContain(kept.id);
      expect((await remove(`${ISSUERS}/${issuer.id}`)).status).toBe(404);
      expect((await call(`${ISSUERS}/${issuer.id}`)).status).toBe(404);
    });
  });

  describe('policies', () => {
    let issuer: { id: string; issuer_url: string };
    beforeAll(async () => {
      issuer = await createIssuer({ name: 'Cluster' });
    });

    it('creates a policy (201) with a service-generated UUID, enabled, without claim checks, scope from the key', async () => {
      const response = await post(POLICIES, policyBody(issuer.id));
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        data: {
          id: expect.stringMatching(UUID),
          name: 'Deploy',
          issuer_id: issuer.id,
          subject: 'system:serviceaccount:ci:runner',
          audience: 'https://modelgate.example',
          condition: null,
          api_key_hash: workspaceKeyHash,
          scope: 'inference',
          enabled: true,
          claim_checks: { scopes: null, token_type: null },
          require_dpop: false,
          created_at: expect.stringMatching(ISO),
          updated_at: null,
        },
      });
      expect((await call(`${POLICIES}/${response.body.data.id}`)).body).toEqual(response.body);
    });

    it('derives scope management from a management key, and ignores nothing it is given', async () => {
      const policy = await createPolicy(issuer.id, {
        api_key_hash: managementKeyHash,
        subject: null,
        condition: 'subject.startsWith("system:serviceaccount:ops:")',
        enabled: false,
        claim_checks: { scopes: 'admin', token_type: 'id_token' },
        require_dpop: true,
      });
      expect(policy).toMatchObject({
        require_dpop: true,
        scope: 'management',
        subject: null,
        condition: 'subject.startsWith("system:serviceaccount:ops:")',
        enabled: false,
        claim_checks: { scopes: 'admin', token_type: 'id_token' },
      });
    });

    it('lists policies, narrowed by ?issuer_id=', async () => {
      const other = await createIssuer();
      const mine = await createPolicy(other.id);
      const narrowed = await call(`${POLICIES}?issuer_id=${other.id}`);
      expect(narrowed.body).toEqual({ data: [mine], total_count: 1 });
      const all = await call(POLICIES);
      expect(all.body.total_count).toBe(all.body.data.length);
      expect(all.body.data.length).toBeGreaterThan(1);
      const bad = await call(`${POLICIES}?issuer_id=nope`);
      expect([bad.status, bad.body]).toEqual([400, badRequest('Invalid issuer_id: must be a lowercase UUID', 'issuer_id')]);
    });

    it.each([
      ['neither subject nor condition (rule 1)', { subject: null }, 'Invalid subject: a policy needs a subject or a condition, or both', 'subject'],
      ['no audience', { audience: undefined }, 'Invalid audience: is required', 'audience'],
      ['an audience of 513 characters', { audience: 'a'.repeat(513) }, 'Invalid audience: must be at most 512 characters', 'audience'],
      ['a subject of 513 characters', { subject: 's'.repeat(513) }, 'Invalid subject: must be at most 512 characters', 'subject'],
      ['no name', { name: undefined }, 'Invalid name: is required', 'name'],
      ['no issuer_id', { issuer_id: undefined }, 'Invalid issuer_id: is required', 'issuer_id'],
      ['an unknown issuer', { issuer_id: randomUUID() }, 'Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'],
      ['an issuer_id that is not a UUID', { issuer_id: 'github' }, 'Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'],
      ['no api_key_hash', { api_key_hash: undefined }, 'Invalid api_key_hash: is required', 'api_key_hash'],
      [
        'the key itself instead of its hash',
        { api_key_hash: 'sk-mg-v1-0123' },
        "Invalid api_key_hash: must be a key's hash as GET /keys lists it (64 lowercase hex digits), not the key itself",
        'api_key_hash',
      ],
      ['an unknown key', { api_key_hash: 'f'.repeat(64) }, 'Invalid api_key_hash: no key with this hash in the organization', 'api_key_hash'],
      ['scope, which is derived', { scope: 'management' }, 'Invalid scope: is set by the service and read-only', 'scope'],
      ['an unknown field', { subjects: ['a'] }, 'Invalid subjects: is not a known field', 'subjects'],
      ['enabled that is not a boolean', { enabled: 'yes' }, 'Invalid enabled: must be true or false', 'enabled'],
      ['an unknown claim check', { claim_checks: { groups: 'x' } }, 'Invalid claim_checks: has no check "groups" (the checks are scopes and token_type)', 'claim_checks'],
      ['an empty claim check value', { claim_checks: { scopes: '' } }, 'Invalid claim_checks.scopes: must be a non-empty string or null', 'claim_checks.scopes'],
      [
        'a claim check value of 513 characters',
        { claim_checks: { token_type: 't'.repeat(513) } },
        'Invalid claim_checks.token_type: must be at most 512 characters',
        'claim_checks.token_type',
      ],
      ['a condition with an unknown variable', { condition: 'claims.sub == "x"' }, 'Invalid condition: unknown variable claims', 'condition'],
      ['a condition using matches()', { condition: 'subject.matches("^repo:acme/")' }, 'Invalid condition: matches() is not available', 'condition'],
      ['a condition yielding a string', { condition: 'subject' }, 'Invalid condition: the condition must yield a bool, not string', 'condition'],
      ['a nested comprehension', { condition: 'audience.all(a, scopes.exists(s, s == a))' }, 'Invalid condition: nested comprehension', 'condition'],
      ['a condition over 2,000 characters', { condition: `subject == "${'x'.repeat(1990)}"` }, 'Invalid condition: the condition is longer than 2000 characters', 'condition'],
      ['a condition that is not a string', { condition: true }, 'Invalid condition: must be a CEL expression (a string) or null', 'condition'],
    ])('refuses %s with 400', async (_name, body, message, parameter) => {
      const response = await post(POLICIES, policyBody(issuer.id, body));
      expect([response.status, response.body]).toEqual([400, badRequest(message, parameter)]);
    });

    it('refuses a personal key, a disabled key, a deleted key and another organization’s key', async () => {
      const demo = service.runtime.demo;
      const disabled = await stores.accounts.createApiKey(demo.organizationId, { kind: 'workspace', name: 'Disabled' });
      await stores.accounts.updateApiKey(demo.organizationId, disabled.key.hash, { disabled: true });
      const deleted = await stores.accounts.createApiKey(demo.organizationId, { kind: 'workspace', name: 'Deleted' });
      await stores.accounts.deleteApiKey(demo.organizationId, deleted.key.hash);
      const other = await organization('enterprise');
      for (const [hash, reason] of [
        [hashApiKey(demo.keys.personal), 'is a personal key: a policy acts as a workspace or management key'],
        [disabled.key.hash, 'the key is disabled'],
        [deleted.key.hash, 'no key with this hash in the organization'],
        [other.workspaceKeyHash, 'no key with this hash in the organization'],
      ]) {
        const response = await post(POLICIES, policyBody(issuer.id, { api_key_hash: hash }));
        expect([response.status, response.body]).toEqual([400, badRequest(`Invalid api_key_hash: ${reason}`, 'api_key_hash')]);
      }
    });

    it('refuses another organization’s issuer as issuer_id', async () => {
      const other = await organization('enterprise');
      const theirs = await createIssuer({}, other.admin);
      const response = await post(POLICIES, policyBody(theirs.id));
      expect([response.status, response.body]).toEqual([
        400,
        badRequest('Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'),
      ]);
    });

    describe('on a multi-tenant issuer', () => {
      it.each([
        ['https://token.actions.githubusercontent.com', 'GitHub Actions'],
        ['https://gitlab.com', 'GitLab'],
        ['https://agent.buildkite.com', 'Buildkite'],
        ['https://app.terraform.io', 'Terraform Cloud'],
        ['https://accounts.google.com', 'Google'],
      ])('%s: refuses a policy whose condition does not pin subject when no subject is set', async (url, provider) => {
        const shared = await createIssuer({ issuer_url: url });
        const response = await post(POLICIES, policyBody(shared.id, { subject: null, condition: '"deploy" in scopes' }));
        expect([response.status, response.body]).toEqual([
          400,
          badRequest(
            `Invalid condition: ${url} issues tokens to every ${provider} customer, so without an exact subject the condition must pin it: ` +
              'one clause joined by && must compare subject with a literal, require it to be in a list of literals, or test it with startsWith ' +
              'against a literal that names an owner, for example subject.startsWith("repo:acme/") or subject == "repo:acme/app:ref:refs/heads/main"',
            'condition',
          ),
        ]);
        await createPolicy(shared.id, { subject: null, condition: 'subject.startsWith("repo:acme/") && "deploy" in scopes' });
        await createPolicy(shared.id, { subject: 'acme/api', condition: '"deploy" in scopes' });
        expect((await remove(`${ISSUERS}/${shared.id}`)).status).toBe(200);
      });

      it.each([
        ['reads subject without constraining it', 'subject.size() >= 0'],
        ['compares subject with itself', 'subject == subject'],
        ['pins it only on one side of ||', 'true || subject == "x"'],
        ['tests a prefix that names no owner', 'subject.startsWith("repo:")'],
        ['tests a prefix an owner\'s lookalike also has', 'subject.startsWith("repo:acme")'],
        ['pins it inside a negation', '!(subject != "repo:acme/api:ref:refs/heads/main")'],
        ['tests a list that is not all literals', 'subject in ["repo:acme/api:ref:refs/heads/main", token_type]'],
      ])('refuses a condition that %s', async (_name, condition) => {
        const shared = await createIssuer({ issuer_url: 'https://token.actions.githubusercontent.com' });
        const response = await post(POLICIES, policyBody(shared.id, { subject: null, condition }));
        expect(response.status).toBe(400);
        expect(response.body.error.message).toMatch(/must pin it: .* for example subject\.startsWith\("repo:acme\/"\)/);
        await remove(`${ISSUERS}/${shared.id}`);
      });

      it.each([
        ['an exact subject', 'subject == "repo:acme/api:ref:refs/heads/main" && "deploy" in scopes'],
        ['a literal on the left', '"repo:acme/api:ref:refs/heads/main" == subject'],
        ['a list of literals', 'subject in ["repo:acme/api:ref:refs/heads/main", "repo:acme/web:ref:refs/heads/main"]'],
        ['an owner prefix among other clauses', 'token_type == "" && subject.startsWith("repo:acme/") && subject.endsWith(":ref:refs/heads/main")'],
        ['a group prefix', 'subject.startsWith("project_path:acme/")'],
      ])('accepts %s', async (_name, condition) => {
        const shared = await createIssuer({ issuer_url: 'https://token.actions.githubusercontent.com' });
        await createPolicy(shared.id, { subject: null, condition });
        await remove(`${ISSUERS}/${shared.id}`);
      });

      it('applies the rule to updates: removing the subject of such a policy is refused', async () => {
        const shared = await createIssuer({ issuer_url: 'https://token.actions.githubusercontent.com' });
        const policy = await createPolicy(shared.id, { subject: 'repo:acme/api:ref:refs/heads/main', condition: 'token_type == ""' });
        const response = await patch(`${POLICIES}/${policy.id}`, { subject: null });
        expect(response.status).toBe(400);
        expect(response.body.error.metadata).toEqual({ parameter: 'condition' });
        await remove(`${ISSUERS}/${shared.id}`);
      });

      it('refuses moving an issuer onto a multi-tenant URL while one of its policies would let every tenant in', async () => {
        const own = await createIssuer();
        const policy = await createPolicy(own.id, { subject: null, condition: '"deploy" in scopes' });
        const response = await patch(`${ISSUERS}/${own.id}`, { issuer_url: 'https://gitlab.com' });
        expect([response.status, response.body]).toEqual([
          400,
          badRequest(
            `Invalid issuer_url: policy ${policy.id} has no subject and its condition does not pin subject, which https://gitlab.com requires: change the policy first`,
            'issuer_url',
          ),
        ]);
      });
    });

    it('pauses with {"enabled": false} and enables with true', async () => {
      const policy = await createPolicy(issuer.id);
      const paused = await patch(`${POLICIES}/${policy.id}`, { enabled: false });
      expect(paused.body.data).toEqual({ ...policy, enabled: false, updated_at: expect.stringMatching(ISO) });
      expect((await call(`${POLICIES}/${policy.id}`)).body.data.enabled).toBe(false);
      expect((await patch(`${POLICIES}/${policy.id}`, { enabled: true })).body.data.enabled).toBe(true);
    });

    it('removes one claim check with null and leaves the other (rule 3)', async () => {
      const policy = await createPolicy(issuer.id, { claim_checks: { scopes: 'deploy', token_type: 'id_token' } });
      const updated = await patch(`${POLICIES}/${policy.id}`, { claim_checks: { scopes: null } });
      expect(updated.body.data.claim_checks).toEqual({ scopes: null, token_type: 'id_token' });
      const added = await patch(`${POLICIES}/${policy.id}`, { claim_checks: { scopes: 'read' } });
      expect(added.body.data.claim_checks).toEqual({ scopes: 'read', token_type: 'id_token' });
    });

    it('moves a policy to another issuer of the organization, and not to an unknown one', async () => {
      const policy = await createPolicy(issuer.id);
      const other = await createIssuer();
      const moved = await patch(`${POLICIES}/${policy.id}`, { issuer_id: other.id });
      expect(moved.body.data).toMatchObject({ id: policy.id, issuer_id: other.id });
      expect((await call(`${POLICIES}?issuer_id=${other.id}`)).body.data.map((p: { id: string }) => p.id)).toEqual([policy.id]);
      const unknown = await patch(`${POLICIES}/${policy.id}`, { issuer_id: randomUUID() });
      expect([unknown.status, unknown.body]).toEqual([
        400,
        badRequest('Invalid issuer_id: no issuer with this id in the organization', 'issuer_id'),
      ]);
    });

    it('re-derives the scope when the acting key changes', async () => {
      const policy = await createPolicy(issuer.id);
      const updated = await patch(`${POLICIES}/${policy.id}`, { api_key_hash: managementKeyHash });
      expect(updated.body.data).toMatchObject({ api_key_hash: managementKeyHash, scope: 'management' });
    });

    it('refuses rule 1 on update, and a read-only scope', async () => {
      const policy = await createPolicy(issuer.id);
      const noSubject = await patch(`${POLICIES}/${policy.id}`, { subject: null });
      expect([noSubject.status, noSubject.body]).toEqual([400, badRequest('Invalid subject: a policy needs a subject or a condition, or both', 'subject')]);
      const scope = await patch(`${POLICIES}/${policy.id}`, { scope: 'management' });
      expect([scope.status, scope.body]).toEqual([400, badRequest('Invalid scope: is set by the service and read-only', 'scope')]);
      const bad = await patch(`${POLICIES}/${policy.id}`, { condition: 'size(scopes)' });
      expect([bad.status, bad.body]).toEqual([400, badRequest('Invalid condition: the condition must yield a bool, not int', 'condition')]);
      expect((await call(`${POLICIES}/${policy.id}`)).body.data).toEqual(policy);
    });

    it('loses none of several concurrent updates of different fields', async () => {
      const policy = await createPolicy(issuer.id);
      const responses = await Promise.all([
        patch(`${POLICIES}/${policy.id}`, { name: 'Concurrent' }),
        patch(`${POLICIES}/${policy.id}`, { enabled: false }),
        patch(`${POLICIES}/${policy.id}`, { claim_checks: { scopes: 'deploy' } }),
        patch(`${POLICIES}/${policy.id}`, { claim_checks: { token_type: 'id_token' } }),
        patch(`${POLICIES}/${policy.id}`, { audience: 'sts.example' }),
        patch(`${POLICIES}/${policy.id}`, { condition: 'token_type != "refresh"' }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect((await call(`${POLICIES}/${policy.id}`)).body.data).toMatchObject({
        name: 'Concurrent',
        enabled: false,
        claim_checks: { scopes: 'deploy', token_type: 'id_token' },
        audience: 'sts.example',
        condition: 'token_type != "refresh"',
      });
    });

    it('deletes a policy: {"deleted": true}, then 404', async () => {
      const policy = await createPolicy(issuer.id);
      expect(await remove(`${POLICIES}/${policy.id}`)).toMatchObject({ status: 200, body: { deleted: true } });
      expect((await call(`${POLICIES}/${policy.id}`)).status).toBe(404);
      expect((await remove(`${POLICIES}/${policy.id}`)).status).toBe(404);
    });

    it('answers 404 for an unknown id, an id that is not a UUID, and another organization’s policy', async () => {
      const other = await organization('enterprise');
      const theirIssuer = await createIssuer({}, other.admin);
      const theirs = await createPolicy(theirIssuer.id, { api_key_hash: other.workspaceKeyHash }, other.admin);
      for (const [id, message] of [
        [randomUUID(), 'Policy <id> not found'],
        [theirs.id, 'Policy <id> not found'],
        ['nope', 'Policy not found'],
      ]) {
        for (const response of [await call(`${POLICIES}/${id}`), await patch(`${POLICIES}/${id}`, { enabled: false }), await remove(`${POLICIES}/${id}`)]) {
          expect([response.status, response.body]).toEqual([404, { error: { code: 404, message: message!.replace('<id>', id!) } }]);
        }
      }
      expect((await call(`${POLICIES}/${theirs.id}`, { key: other.admin })).body.data).toEqual(theirs);
    });
  });
});
