import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { Refusal } from '../../../lambdas/federation/exchange-types';
import type { IssuerKeySource } from '../../../lambdas/federation/issuer-keys';
import { decodeUnverified, MAX_KIDLESS_CANDIDATES, type DecodedToken } from '../../../lambdas/federation/subject-token';
import { verifySubjectToken } from '../../../lambdas/federation/subject-token-verification';
import type { FederationIssuer } from '../../../lambdas/federation/types';
import { FixedClock } from '../../support/fixed-clock';
import { signJws } from '../../support/identity-provider';

const NOW = new Date('2026-11-21T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;

function esKey(kid: string): { privateKey: KeyObject; jwk: JWK } {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey: pair.privateKey, jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid } };
}

const first = esKey('es-1');
const second = esKey('es-2');
const stranger = esKey('es-3');

const issuer = { id: 'issuer-1', jwks: { keys: [first.jwk, second.jwk] } } as FederationIssuer;
const inlineKeys: IssuerKeySource = {
  getKeys: async (i) => ({ status: 'available', set: { keys: i.jwks!.keys, origin: 'inline JWK Set', fetchedAt: null } }),
};
const deps = { issuerKeys: inlineKeys, clock: new FixedClock(NOW) };
const claims = { iss: 'https://idp.example.com', sub: 'workload', aud: 'modelgate', exp: NOW_S + 60 };

async function verify(token: string) {
  const decoded = decodeUnverified(token) as DecodedToken;
  return verifySubjectToken(deps, token, decoded.header, issuer);
}

describe('verifySubjectToken: jose verifies, with the key the service chose', () => {
  it('tries each admitted key of the algorithm when the token names no kid, and names the one that verifies', async () => {
    const result = await verify(signJws({ alg: 'ES256' }, claims, { alg: 'ES256', privateKey: second.privateKey }));
    expect(result).toEqual({
      claims,
      detail: 'The ES256 signature verifies with key "es-2" of the key set from inline JWK Set. It is valid until 2026-11-21T12:01:00.000Z (nbf and iat with 30 s leeway).',
    });
  });

  it('refuses a token without kid that none of the keys verifies', async () => {
    const result = await verify(signJws({ alg: 'ES256' }, claims, { alg: 'ES256', privateKey: stranger.privateKey }));
    expect(result).toEqual(new Refusal('bad_signature', 'The signature does not verify with any of the 2 ES256 keys of the key set from inline JWK Set.'));
  });

  it('refuses a crit naming b64, which jose would process, even with an encoded payload', async () => {
    const result = await verify(signJws({ alg: 'ES256', kid: 'es-1', crit: ['b64'], b64: true }, claims, { alg: 'ES256', privateKey: first.privateKey }));
    expect(result).toEqual(new Refusal('malformed_token', 'The token\'s header marks ["b64"] as critical; no JWS extension is accepted.'));
  });

  it('refuses a header without alg as malformed (RFC 7515 §4.1.1: alg is required)', async () => {
    const result = await verify(signJws({ kid: 'es-1' }, claims, { alg: 'ES256', privateKey: first.privateKey }));
    expect(result).toEqual(new Refusal('malformed_token', 'The token is not a valid JWS: JWS "alg" (Algorithm) Header Parameter missing or invalid.'));
  });

  it('refuses a signature that is not base64url-decodable as malformed', async () => {
    const [h, p] = signJws({ alg: 'ES256', kid: 'es-1' }, claims, { alg: 'ES256', privateKey: first.privateKey }).split('.');
    const result = await verify(`${h}.${p}.A`);
    expect(result).toBeInstanceOf(Refusal);
    expect((result as Refusal).reason).toBe('malformed_token');
  });

  it('applies the time rules to the verified claims: a fractional exp is a NumericDate, 2^53 is not', async () => {
    const fractional = await verify(signJws({ alg: 'ES256', kid: 'es-1' }, { ...claims, exp: NOW_S + 60.5 }, { alg: 'ES256', privateKey: first.privateKey }));
    expect(fractional).not.toBeInstanceOf(Refusal);
    const huge = await verify(signJws({ alg: 'ES256', kid: 'es-1' }, { ...claims, exp: 2 ** 53 }, { alg: 'ES256', privateKey: first.privateKey }));
    expect((huge as Refusal).reason).toBe('malformed_token');
  });
});

describe('key admission bounds the work one token can cause', () => {
  const rsa = (kid: string, publicExponent = 65537) => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent });
    return { privateKey: pair.privateKey, jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), kid } };
  };
  const withKeys = (keys: JWK[]) => ({ id: 'issuer-rsa', jwks: { keys } }) as FederationIssuer;
  const verifyWith = (token: string, keys: JWK[]) => verifySubjectToken(deps, token, (decodeUnverified(token) as DecodedToken).header, withKeys(keys));

  it('admits RSA keys only with the exponent 65537: another exponent, small or huge, is refused with the reason', async () => {
    const three = rsa('rsa-e3', 3);
    const token = signJws({ alg: 'RS256', kid: 'rsa-e3' }, claims, { alg: 'RS256', privateKey: three.privateKey });
    expect(await verifyWith(token, [three.jwk])).toEqual(
      new Refusal('unsupported_alg', 'No key can verify this token: key "rsa-e3" has the RSA public exponent "Aw"; only 65537 ("AQAB") is accepted.'),
    );
    // A 3,071-bit exponent: never imported, so never a slow verification.
    const huge = { ...rsa('rsa-huge').jwk, e: Buffer.alloc(384, 0xff).toString('base64url') };
    const refusal = await verifyWith(signJws({ alg: 'RS256', kid: 'rsa-huge' }, claims, { alg: 'RS256', privateKey: three.privateKey }), [huge]);
    expect(refusal).toBeInstanceOf(Refusal);
    expect((refusal as Refusal).detail).toMatch(/only 65537 \("AQAB"\) is accepted/);
  });

  it('admits a published key in its one encoding only, inline or fetched: no 33-byte coordinate, no modulus with a leading zero', async () => {
    const leadingZero = (member: string) => Buffer.concat([Buffer.alloc(1), Buffer.from(member, 'base64url')]).toString('base64url');
    const ec = esKey('es-padded');
    const padded = { ...ec.jwk, x: leadingZero(ec.jwk.x!) };
    expect(await verifyWith(signJws({ alg: 'ES256', kid: 'es-padded' }, claims, { alg: 'ES256', privateKey: ec.privateKey }), [padded])).toEqual(
      new Refusal('unsupported_alg', 'No key can verify this token: key "es-padded" has x of 33 bytes: a P-256 coordinate is exactly 32 bytes (RFC 7518 §6.2.1.2).'),
    );
    const key = rsa('rsa-padded');
    const refusal = await verifyWith(signJws({ alg: 'RS256', kid: 'rsa-padded' }, claims, { alg: 'RS256', privateKey: key.privateKey }), [{ ...key.jwk, n: leadingZero(key.jwk.n!) }]);
    expect((refusal as Refusal).detail).toBe('No key can verify this token: key "rsa-padded" has n with a leading zero byte: RFC 7518 §6.3.1 wants the shortest encoding.');
    // The same keys, written the one way, verify.
    expect(await verifyWith(signJws({ alg: 'ES256', kid: 'es-padded' }, claims, { alg: 'ES256', privateKey: ec.privateKey }), [ec.jwk])).not.toBeInstanceOf(Refusal);
  });

  it(`tries a token without kid against at most ${MAX_KIDLESS_CANDIDATES} keys of its type`, async () => {
    const keys = Array.from({ length: MAX_KIDLESS_CANDIDATES + 1 }, (_, i) => esKey(`es-${i}`));
    const rsaKey = rsa('rsa-first');
    // Keys of the other type do not take a place among the candidates.
    const set = [rsaKey.jwk, ...keys.map((k) => k.jwk)];
    const last = keys[MAX_KIDLESS_CANDIDATES - 1]!;
    const within = await verifyWith(signJws({ alg: 'ES256' }, claims, { alg: 'ES256', privateKey: last.privateKey }), set);
    expect(within).not.toBeInstanceOf(Refusal);
    const beyond = keys[MAX_KIDLESS_CANDIDATES]!;
    expect(await verifyWith(signJws({ alg: 'ES256' }, claims, { alg: 'ES256', privateKey: beyond.privateKey }), set)).toEqual(
      new Refusal('bad_signature', `The signature does not verify with any of the ${MAX_KIDLESS_CANDIDATES} ES256 keys of the key set from inline JWK Set.`),
    );
    // Named by its kid, the same key verifies.
    const named = await verifyWith(signJws({ alg: 'ES256', kid: `es-${MAX_KIDLESS_CANDIDATES}` }, claims, { alg: 'ES256', privateKey: beyond.privateKey }), set);
    expect(named).not.toBeInstanceOf(Refusal);
  });
});
