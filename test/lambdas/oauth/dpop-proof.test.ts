import { createHash, generateKeyPairSync } from 'node:crypto';
import { DpopChecker, publicRequestUrls } from '../../../lambdas/oauth/dpop-binding';
import {
  DPOP_PROOF_WINDOW_SECONDS,
  DpopProofError,
  InMemoryProofReplayStore,
  verifyDpopProof,
  type ProofContext,
} from '../../../lambdas/oauth/dpop-proof';
import { MAX_DPOP_PROOF_BYTES } from '../../../lambdas/oauth/dpop-wire';
import { proofKey, signProof, type ProofKey } from '../../support/dpop';

const TOKEN_URL = 'https://api.modelgate.example/api/v1/oauth/token';
const MODELS_URL = 'https://api.modelgate.example/api/v1/models/user';
const ACCESS_TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3In0.c2ln';

let key: ProofKey;
beforeAll(async () => {
  key = await proofKey();
});

const now = () => new Date();
const atToken = (): ProofContext => ({ method: 'POST', urls: [TOKEN_URL], now: now() });
const atModels = (): ProofContext => ({ method: 'GET', urls: [MODELS_URL], accessToken: ACCESS_TOKEN, now: now() });

async function refusal(proofs: readonly string[], context: ProofContext): Promise<string> {
  try {
    await verifyDpopProof(proofs, context);
  } catch (error) {
    if (error instanceof DpopProofError) return error.description;
    throw error;
  }
  throw new Error('expected the proof to be refused');
}

describe('verifyDpopProof (RFC 9449 §4.3)', () => {
  it('accepts a conforming proof and names its key by RFC 7638 thumbprint', async () => {
    const verified = await verifyDpopProof([await signProof(key)], atToken());
    expect(verified.jkt).toBe(key.jkt);
    expect(verified.acceptedUntil).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + DPOP_PROOF_WINDOW_SECONDS);
    const atResource = await verifyDpopProof([await signProof(key, { htm: 'GET', htu: MODELS_URL, accessToken: ACCESS_TOKEN })], atModels());
    expect(atResource.jkt).toBe(key.jkt);
  });

  it.each(['ES384', 'ES512', 'PS256', 'RS256', 'EdDSA'])('accepts the published algorithm %s', async (alg) => {
    const other = await proofKey(alg);
    await expect(verifyDpopProof([await signProof(other)], atToken())).resolves.toMatchObject({ jkt: other.jkt });
  });

  it('step 1: exactly one DPoP header', async () => {
    const proof = await signProof(key);
    expect(await refusal([], atToken())).toBe('A DPoP proof is required');
    expect(await refusal([proof, proof], atToken())).toBe('Send exactly one DPoP header');
  });

  it('step 2: a well-formed, bounded JWT', async () => {
    for (const proof of ['not-a-jwt', 'a.b', 'a.b.c.d', `${'a'.repeat(MAX_DPOP_PROOF_BYTES)}.b.c`]) {
      expect(await refusal([proof], atToken())).toMatch(/not a signed JWT|larger than/);
    }
    expect(await refusal([`${Buffer.from('[1]').toString('base64url')}.e30.c2ln`], atToken())).toMatch(/header/);
  });

  it('steps 3 and 4: typ dpop+jwt', async () => {
    for (const typ of [undefined, 'JWT', 'at+jwt', 'application/dpop+jwt', 'DPOP+JWT']) {
      expect(await refusal([await signProof(key, { header: { typ } })], atToken())).toBe('The DPoP proof typ must be dpop+jwt');
    }
  });

  it('step 5: an asymmetric algorithm from the published list, never none or HMAC', async () => {
    const proof = await signProof(key);
    const [, payload] = proof.split('.');
    for (const alg of ['none', 'HS256', 'ES256K', '']) {
      const header = Buffer.from(JSON.stringify({ alg, typ: 'dpop+jwt', jwk: key.publicJwk })).toString('base64url');
      expect(await refusal([`${header}.${payload}.c2ln`], atToken())).toMatch(/^The DPoP proof alg must be one of ES256/);
    }
  });

  it('step 6: the signature verifies with the jwk of the header', async () => {
    const other = await proofKey();
    expect(await refusal([await signProof(key, { header: { jwk: other.publicJwk } })], atToken())).toBe('The DPoP proof signature does not verify with its jwk');
    const proof = await signProof(key);
    const tampered = `${proof.slice(0, proof.lastIndexOf('.'))}.${Buffer.alloc(64, 1).toString('base64url')}`;
    expect(await refusal([tampered], atToken())).toBe('The DPoP proof signature does not verify with its jwk');
  });

  it('step 7: the jwk is a public key, nothing private in it', async () => {
    const { exportJWK } = await import('jose');
    const privateJwk = await exportJWK(key.privateKey);
    expect(await refusal([await signProof(key, { header: { jwk: privateJwk } })], atToken())).toBe('The DPoP proof jwk must be a public key, without private members');
    expect(await refusal([await signProof(key, { header: { jwk: { kty: 'oct', k: 'c2VjcmV0' } } })], atToken())).toMatch(/without private members/);
    expect(await refusal([await signProof(key, { header: { jwk: undefined } })], atToken())).toBe('The DPoP proof header needs the public key as jwk');
    expect(await refusal([await signProof(key, { header: { jwk: 'key' } })], atToken())).toBe('The DPoP proof header needs the public key as jwk');
    // Members outside the thumbprint are checked every time, also for a key seen before.
    await verifyDpopProof([await signProof(key)], atToken());
    expect(await refusal([await signProof(key, { header: { jwk: { ...key.publicJwk, use: 'enc' } } })], atToken())).toBe('The DPoP proof jwk use must be sig when present');
    expect(await refusal([await signProof(key, { header: { jwk: { ...key.publicJwk, alg: 'ES384' } } })], atToken())).toBe('The DPoP proof jwk alg must be ES256 when present');
    expect(await refusal([await signProof(key, { header: { jwk: { kty: 'EC', crv: 'P-256', x: key.publicJwk.x } } })], atToken())).toBe('The DPoP proof jwk needs the member y');
  });

  it('refuses RSA keys with another exponent or out of 2048 to 8192 bits', async () => {
    const rsa = await proofKey('RS256');
    // The key's size is checked before its signature, so a header naming the key is enough.
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' });
    // An 8,200-bit modulus: generating one takes seconds, and only its length is read.
    const large = { kty: 'RSA', e: 'AQAB', n: Buffer.concat([Buffer.from([0xff]), Buffer.alloc(1024, 0xab)]).toString('base64url') };
    for (const jwk of [small, large]) {
      expect(await refusal([await signProof(rsa, { header: { jwk } })], atToken())).toBe('The DPoP proof RSA key must have 2048 to 8192 bits');
    }
    expect(await refusal([await signProof(rsa, { header: { jwk: { ...rsa.publicJwk, e: 'Aw' } } })], atToken())).toBe('The DPoP proof RSA key must have the public exponent 65537');
  });

  it('step 8: htm is the request method', async () => {
    expect(await refusal([await signProof(key, { htm: 'GET' })], atToken())).toBe('The DPoP proof htm must be the request method, POST');
    expect(await refusal([await signProof(key, { htm: 'post' })], atToken())).toMatch(/htm/);
    expect(await refusal([await signProof(key, { htm: undefined, claims: { htm: undefined } })], atToken())).toMatch(/htm/);
  });

  it('step 9: htu is the request URL, ignoring query and fragment, after normalisation', async () => {
    for (const htu of [`${TOKEN_URL}?a=1`, `${TOKEN_URL}#f`, 'HTTPS://API.modelgate.example:443/api/v1/oauth/token', 'https://api.modelgate.example/api/v1/./oauth/%74oken']) {
      await expect(verifyDpopProof([await signProof(key, { htu })], atToken())).resolves.toMatchObject({ jkt: key.jkt });
    }
    for (const htu of [MODELS_URL, 'https://evil.example/api/v1/oauth/token', 'http://api.modelgate.example/api/v1/oauth/token', `${TOKEN_URL}/`, 'relative/path', 'https://user@api.modelgate.example/api/v1/oauth/token']) {
      expect(await refusal([await signProof(key, { htu })], atToken())).toBe(`The DPoP proof htu must be the request URL, ${TOKEN_URL}`);
    }
    expect(await refusal([await signProof(key, { claims: { htu: 42 } })], atToken())).toMatch(/htu/);
  });

  it('step 11: iat within the window, a finite number', async () => {
    const nowSeconds = Math.floor(Date.now() / 1000);
    await expect(verifyDpopProof([await signProof(key, { iat: nowSeconds - DPOP_PROOF_WINDOW_SECONDS + 5 })], atToken())).resolves.toBeDefined();
    await expect(verifyDpopProof([await signProof(key, { iat: nowSeconds + 0.5 })], atToken())).resolves.toBeDefined();
    expect(await refusal([await signProof(key, { iat: nowSeconds - DPOP_PROOF_WINDOW_SECONDS - 5 })], atToken())).toBe(`The DPoP proof is older than ${DPOP_PROOF_WINDOW_SECONDS} seconds`);
    expect(await refusal([await signProof(key, { iat: nowSeconds + 120 })], atToken())).toBe('The DPoP proof iat is in the future');
    for (const iat of [2 ** 53, 1e300, -1]) expect(await refusal([await signProof(key, { iat })], atToken())).toMatch(/iat|older/);
    expect(await refusal([await signProof(key, { iat: String(nowSeconds) })], atToken())).toMatch(/iat/);
    expect(await refusal([await signProof(key, { claims: { iat: undefined } })], atToken())).toMatch(/iat/);
  });

  it('jti: present, a string, bounded', async () => {
    for (const jti of ['', 42, 'x'.repeat(257)]) {
      expect(await refusal([await signProof(key, { jti })], atToken())).toBe('The DPoP proof needs a jti of 1 to 256 characters');
    }
    expect(await refusal([await signProof(key, { claims: { jti: undefined } })], atToken())).toMatch(/jti/);
  });

  it('step 12: ath on a protected route is the hash of the token it comes with', async () => {
    const base = { htm: 'GET', htu: MODELS_URL };
    expect(await refusal([await signProof(key, base)], atModels())).toBe('The DPoP proof ath must be the hash of the access token it is sent with');
    expect(await refusal([await signProof(key, { ...base, accessToken: `${ACCESS_TOKEN}x` })], atModels())).toMatch(/ath/);
    const hex = createHash('sha256').update(ACCESS_TOKEN).digest('hex');
    expect(await refusal([await signProof(key, { ...base, claims: { ath: hex } })], atModels())).toMatch(/ath/);
  });

  it('the replay key is per key and jti, and the store takes it once within the window', async () => {
    const proof = await signProof(key, { jti: 'same' });
    const other = await proofKey();
    const a = await verifyDpopProof([proof], atToken());
    const b = await verifyDpopProof([await signProof(other, { jti: 'same' })], atToken());
    expect(a.replayKey).not.toBe(b.replayKey);
    const checker = new DpopChecker({ apiBaseUrl: 'https://api.modelgate.example/api/v1', replays: new InMemoryProofReplayStore(), clock: { now } });
    const verified = await checker.check([proof], { method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined });
    expect(await checker.claim(verified)).toBe(true);
    expect(await checker.claim(await checker.check([proof], { method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined }))).toBe(false);
  });
});

describe('publicRequestUrls', () => {
  it('gives the route below the API base URL, and the stage URL API Gateway saw', () => {
    expect(publicRequestUrls('https://api.example.com/api/v1', '/api/v1/models/user', undefined)).toEqual(['https://api.example.com/api/v1/models/user']);
    expect(publicRequestUrls('https://gw.example.com/prod/api/v1', '/api/v1/keys', 'https://abc.execute-api.us-east-1.amazonaws.com/prod/api/v1/keys')).toEqual([
      'https://gw.example.com/prod/api/v1/keys',
      'https://abc.execute-api.us-east-1.amazonaws.com/prod/api/v1/keys',
    ]);
    expect(publicRequestUrls('https://api.example.com/api/v1', '/mapped/api/v1/keys', undefined)).toEqual(['https://api.example.com/api/v1/keys']);
  });
});
