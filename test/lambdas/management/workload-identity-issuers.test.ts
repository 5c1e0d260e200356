import { createServer, type Server } from 'node:net';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ISSUERS, POLICIES, UUID, ISO, badRequest, useWorkloadIdentityAdmin } from '../../support/workload-identity-admin';

const ecJwk = (kid: string) => ({ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }), kid });
const rsaJwk = (kid: string, modulusLength = 2048) => ({
  ...generateKeyPairSync('rsa', { modulusLength }).publicKey.export({ format: 'jwk' }),
  kid,
});
/** The same number with a zero byte in front: what a lenient decoder reads as the same key. */
const leadingZero = (member: string) => Buffer.concat([Buffer.alloc(1), Buffer.from(member, 'base64url')]).toString('base64url');

describe('workload identity admin API on the local service', () => {
  const api = useWorkloadIdentityAdmin();
  const { organization, call, post, patch, remove, uniqueUrl, createIssuer, createPolicy } = api;

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
});
