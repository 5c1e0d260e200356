import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { Refusal } from '../../../lambdas/federation/exchange-types';
import type { IssuerKeySource } from '../../../lambdas/federation/issuer-keys';
import { decodeUnverified, type DecodedToken } from '../../../lambdas/federation/subject-token';
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

  it('applies the time rules to the verified claims: a fractional exp is malformed', async () => {
    const result = await verify(signJws({ alg: 'ES256', kid: 'es-1' }, { ...claims, exp: NOW_S + 60.5 }, { alg: 'ES256', privateKey: first.privateKey }));
    expect((result as Refusal).reason).toBe('malformed_token');
  });
});
