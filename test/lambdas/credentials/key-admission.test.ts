import { generateKeyPairSync } from 'node:crypto';
import { importJWK, type CryptoKey } from 'jose';
import { keyEncodingProblem, publicMembersOf, rsaKeyProblem } from '../../../lambdas/credentials/key-admission';

const modulus = (firstByte: number, length: number) => Buffer.concat([Buffer.from([firstByte]), Buffer.alloc(length - 1, 0xab)]).toString('base64url');

describe('rsaKeyProblem: the one RSA admission, for proof keys and issuer keys alike', () => {
  it('measures the modulus as Web Crypto does, before any import', async () => {
    for (const modulusLength of [1024, 2048]) {
      const jwk = generateKeyPairSync('rsa', { modulusLength }).publicKey.export({ format: 'jwk' });
      const imported = (await importJWK(jwk, 'RS256')) as CryptoKey;
      const measured = (imported.algorithm as { modulusLength?: number }).modulusLength!;
      expect([modulusLength, rsaKeyProblem(jwk)]).toEqual([modulusLength, measured < 2048 ? { bits: measured } : null]);
    }
  });

  it.each([
    ['2047 bits', modulus(0x7f, 256), { bits: 2047 }],
    ['2048 bits', modulus(0x80, 256), null],
    ['8192 bits', modulus(0xff, 1024), null],
    ['8193 bits', modulus(0x01, 1025), { bits: 8193 }],
  ])('admits 2048 to 8192 bits: %s', (_name, n, problem) => {
    expect(rsaKeyProblem({ kty: 'RSA', e: 'AQAB', n })).toEqual(problem);
  });

  it('admits the exponent 65537 only, and names the one sent', () => {
    expect(rsaKeyProblem({ kty: 'RSA', e: 'Aw', n: modulus(0x80, 256) })).toEqual({ exponent: 'Aw' });
    expect(rsaKeyProblem({ kty: 'RSA', n: modulus(0x80, 256) })).toEqual({ exponent: 'undefined' });
  });
});

describe('publicMembersOf', () => {
  it('keeps the members that define the public key, and nothing else the sender added', () => {
    const ec = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', kid: 'k', alg: 'ES256', x5c: ['MIIB'], d: 'secret' };
    expect(publicMembersOf(ec)).toEqual({ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' });
    expect(publicMembersOf({ kty: 'RSA', n: 'n', e: 'AQAB', use: 'sig' })).toEqual({ kty: 'RSA', n: 'n', e: 'AQAB' });
    expect(publicMembersOf({ kty: 'OKP', crv: 'Ed25519', x: 'x', y: 'y' })).toEqual({ kty: 'OKP', crv: 'Ed25519', x: 'x' });
    for (const kty of ['oct', '__proto__', 'constructor', undefined]) expect(publicMembersOf({ kty, k: 'secret' })).toEqual({});
  });
});

describe('keyEncodingProblem', () => {
  it('leaves a key type or curve it does not know to the caller', () => {
    expect(keyEncodingProblem({ kty: 'constructor', x: 'AA=' })).toBeNull();
    expect(keyEncodingProblem({ kty: 'EC', crv: 'constructor', x: 'AQ', y: 'AQ' })).toBeNull();
  });
});
