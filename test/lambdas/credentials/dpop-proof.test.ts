import { createHash, generateKeyPairSync } from 'node:crypto';
import { EmbeddedJWK } from 'jose';
import { DpopChecker, publicRequestUrls, servedHosts } from '../../../lambdas/credentials/dpop-binding';
import {
  DPOP_PROOF_WINDOW_SECONDS,
  DpopProofError,
  verifyDpopProof,
  type ProofContext,
} from '../../../lambdas/credentials/dpop-proof';
import { MAX_DPOP_PROOF_BYTES } from '../../../lambdas/credentials/dpop-wire';
import { proofKey, signProof, type ProofKey } from '../../support/dpop';
import { MemoryProofReplayStore } from '../../support/memory-proof-replay-store';

// jose's own EmbeddedJWK, counted: the proof keys it imports are remembered per container.
jest.mock('jose', () => {
  const actual = jest.requireActual('jose');
  return { ...actual, EmbeddedJWK: jest.fn(actual.EmbeddedJWK) };
});

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

  it('step 7: the jwk holds the public members of its type only: no private key_ops, x5c, jku or own __proto__', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['key_ops of a private operation', { ...key.publicJwk, key_ops: ['sign'] }, 'The DPoP proof jwk key_ops may name only verify: it is a public key'],
      ['key_ops that is not a list', { ...key.publicJwk, key_ops: 'verify' }, 'The DPoP proof jwk key_ops may name only verify: it is a public key'],
      ['a certificate chain', { ...key.publicJwk, x5c: ['MIIB'] }, 'The DPoP proof jwk may hold only the members of an EC public key, not x5c'],
      ['a key set URL', { ...key.publicJwk, jku: 'https://evil.example/jwks' }, 'The DPoP proof jwk may hold only the members of an EC public key, not jku'],
      ['an RSA member on an EC key', { ...key.publicJwk, n: 'AQAB' }, 'The DPoP proof jwk may hold only the members of an EC public key, not n'],
      ['an own __proto__ member', JSON.parse(`{"__proto__": {"kty": "oct"}, ${JSON.stringify(key.publicJwk).slice(1)}`), 'The DPoP proof jwk may hold only the members of an EC public key, not __proto__'],
    ];
    for (const [name, jwk, description] of cases) {
      expect([name, await refusal([await signProof(key, { header: { jwk } })], atToken())]).toEqual([name, description]);
    }
    // What Web Crypto exports for a public key is taken: key_ops ["verify"] and ext.
    await expect(verifyDpopProof([await signProof(key, { header: { jwk: { ...key.publicJwk, key_ops: ['verify'], ext: true, kid: 'k1' } } })], atToken())).resolves.toMatchObject({ jkt: key.jkt });
  });

  it('step 7: one encoding per key, so one key has one thumbprint (RFC 7518 §6.2.1.2, §6.3.1.1)', async () => {
    const padded = (value: string) => Buffer.concat([Buffer.alloc(1), Buffer.from(value, 'base64url')]).toString('base64url');
    const strayBits = (value: string) => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const changed = `${value.slice(0, -1)}${alphabet[alphabet.indexOf(value.at(-1)!) ^ 1]}`;
      expect(Buffer.from(changed, 'base64url')).toEqual(Buffer.from(value, 'base64url'));
      return changed;
    };
    const ec = key.publicJwk as { x: string; y: string };
    expect(await refusal([await signProof(key, { header: { jwk: { ...key.publicJwk, x: padded(ec.x) } } })], atToken())).toBe(
      'The DPoP proof jwk has x of 33 bytes: a P-256 coordinate is exactly 32 bytes (RFC 7518 §6.2.1.2)',
    );
    expect(await refusal([await signProof(key, { header: { jwk: { ...key.publicJwk, y: strayBits(ec.y) } } })], atToken())).toBe(
      'The DPoP proof jwk has y in another form than unpadded base64url without stray bits',
    );
    expect(await refusal([await signProof(key, { header: { jwk: { ...key.publicJwk, x: `${ec.x}=` } } })], atToken())).toMatch(/unpadded base64url/);
    const rsa = await proofKey('RS256');
    const n = (rsa.publicJwk as { n: string }).n;
    expect(await refusal([await signProof(rsa, { header: { jwk: { ...rsa.publicJwk, n: padded(n) } } })], atToken())).toBe(
      'The DPoP proof jwk has n with a leading zero byte: RFC 7518 §6.3.1 wants the shortest encoding',
    );
    const ed = await proofKey('EdDSA');
    const x = (ed.publicJwk as { x: string }).x;
    expect(await refusal([await signProof(ed, { header: { jwk: { ...ed.publicJwk, x: padded(x) } } })], atToken())).toMatch(/^The DPoP proof jwk has x of 33 bytes/);
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

  it('step 7: jose imports a key once per container (EmbeddedJWK), and again only when it did not import', async () => {
    const fresh = await proofKey();
    const importsOf = (x: unknown) => jest.mocked(EmbeddedJWK).mock.calls.filter(([header]) => (header?.jwk as { x?: unknown } | undefined)?.x === x).length;
    for (let proof = 0; proof < 3; proof += 1) await expect(verifyDpopProof([await signProof(fresh)], atToken())).resolves.toMatchObject({ jkt: fresh.jkt });
    expect(importsOf(fresh.publicJwk.x)).toBe(1);
    // Coordinates in their one encoding, of no point on the curve: refused by the import, every time.
    const offCurve = { kty: 'EC', crv: 'P-256', x: Buffer.alloc(32, 1).toString('base64url'), y: Buffer.alloc(32, 2).toString('base64url') };
    for (let proof = 0; proof < 2; proof += 1) expect(await refusal([await signProof(fresh, { header: { jwk: offCurve } })], atToken())).toMatch(/^The DPoP proof is not valid: /);
    expect(importsOf(offCurve.x)).toBe(2);
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

  it('step 9: refuses htu spellings that RFC 3986 and WHATWG URL read differently', async () => {
    const local = 'http://127.0.0.1:8787/api/v1/oauth/token';
    const atLocal: ProofContext = { method: 'POST', urls: [local], now: now() };
    await expect(verifyDpopProof([await signProof(key, { htu: local })], atLocal)).resolves.toMatchObject({ jkt: key.jkt });
    for (const htu of [
      'http://127.0.0.1.:8787/api/v1/oauth/token',
      'http://0x7f000001:8787/api/v1/oauth/token',
      'http://127.1:8787/api/v1/oauth/token',
      'http://127.0.0.1:8787\\api\\v1\\oauth\\token',
      'http://127.0.0.1:8787/api/v1/oauth/to\tken',
      'http://127.0.0.1:8787/api/v1/oauth/token\n',
      ' http://127.0.0.1:8787/api/v1/oauth/token',
    ]) {
      expect([htu, await refusal([await signProof(key, { htu })], atLocal)]).toEqual([htu, `The DPoP proof htu must be the request URL, ${local}`]);
    }
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
    const checker = new DpopChecker({ apiBaseUrl: 'https://api.modelgate.example/api/v1', servedHostnames: [], replays: new MemoryProofReplayStore(), clock: { now } });
    const verified = await checker.check([proof], { method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined, host: undefined });
    expect(await checker.claim(verified)).toBe(true);
    expect(await checker.claim(await checker.check([proof], { method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined, host: undefined }))).toBe(false);
  });
});

describe('publicRequestUrls', () => {
  const request = (path: string, stageUrl?: string, host?: string) => ({ path, stageUrl, host });

  it('gives the route below the API base URL, and the stage URL API Gateway saw', () => {
    const served = servedHosts('https://api.example.com/api/v1', []);
    expect(publicRequestUrls('https://api.example.com/api/v1', request('/api/v1/models/user'), served)).toEqual(['https://api.example.com/api/v1/models/user']);
    const gateway = servedHosts('https://gw.example.com/prod/api/v1', []);
    expect(publicRequestUrls('https://gw.example.com/prod/api/v1', request('/api/v1/keys', 'https://abc.execute-api.us-east-1.amazonaws.com/prod/api/v1/keys'), gateway)).toEqual([
      'https://gw.example.com/prod/api/v1/keys',
      'https://abc.execute-api.us-east-1.amazonaws.com/prod/api/v1/keys',
    ]);
    expect(publicRequestUrls('https://api.example.com/api/v1', request('/mapped/api/v1/keys'), served)).toEqual(['https://api.example.com/api/v1/keys']);
  });

  it('adds the URL on the request Host when the deployment serves that hostname, in the API base URL scheme', () => {
    const local = servedHosts('http://127.0.0.1:8787/api/v1', ['eu.localhost']);
    expect(publicRequestUrls('http://127.0.0.1:8787/api/v1', request('/api/v1/oauth/token', undefined, 'EU.localhost:8787'), local)).toEqual([
      'http://127.0.0.1:8787/api/v1/oauth/token',
      'http://EU.localhost:8787/api/v1/oauth/token',
    ]);
    const aws = servedHosts('https://api.example.com/api/v1', ['eu.api.example.com']);
    expect(publicRequestUrls('https://api.example.com/api/v1', request('/api/v1/keys', undefined, 'eu.api.example.com'), aws)).toEqual([
      'https://api.example.com/api/v1/keys',
      'https://eu.api.example.com/api/v1/keys',
    ]);
    for (const host of ['evil.example', 'eu.localhost.evil.example', 'eu.localhost/evil', 'localhost:8787']) {
      expect([host, publicRequestUrls('http://127.0.0.1:8787/api/v1', request('/api/v1/oauth/token', undefined, host), local)]).toEqual([host, ['http://127.0.0.1:8787/api/v1/oauth/token']]);
    }
  });

  it('lets a checker accept a proof for the regional hostname it was sent to, and no other', async () => {
    const key = await proofKey();
    const checker = new DpopChecker({ apiBaseUrl: 'http://127.0.0.1:8787/api/v1', servedHostnames: ['eu.localhost'], replays: new MemoryProofReplayStore(), clock: { now } });
    const at = (host: string | undefined) => ({ method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined, host });
    const regional = await signProof(key, { htu: 'http://eu.localhost:8787/api/v1/oauth/token' });
    await expect(checker.check([regional], at('eu.localhost:8787'))).resolves.toMatchObject({ jkt: key.jkt });
    await expect(checker.check([regional], at('127.0.0.1:8787'))).rejects.toThrow('The DPoP proof htu must be the request URL, http://127.0.0.1:8787/api/v1/oauth/token');
    const stranger = await signProof(key, { htu: 'http://evil.example:8787/api/v1/oauth/token' });
    await expect(checker.check([stranger], at('evil.example:8787'))).rejects.toThrow(/htu must be the request URL/);
  });
});
