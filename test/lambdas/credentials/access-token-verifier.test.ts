import { ACTING_KEY_CLAIM, AccessTokenError, SigningKeyAccessTokenVerifier } from '../../../lambdas/credentials/access-token-verifier';
import type { LocalSigner } from '../../../lambdas/signing/local-signer';
import { newLocalSigner, signJwt, signingKeyRecord } from '../../support/access-tokens';
import { FixedClock } from '../../support/fixed-clock';
import { MemorySigningKeyStore } from '../../support/memory-signing-key-store';

const ISSUER = 'https://api.example.com/api/v1';
const KEY_HASH = 'a'.repeat(64);

describe('SigningKeyAccessTokenVerifier', () => {
  let signer: LocalSigner;
  let other: LocalSigner;
  let store: MemorySigningKeyStore;
  let clock: FixedClock;
  let lists: number;
  let verifier: SigningKeyAccessTokenVerifier;
  const now = () => clock.now().getTime() / 1000;
  const claims = (overrides: Record<string, unknown> = {}) => ({
    iss: ISSUER,
    aud: ISSUER,
    sub: 'repo:acme/app',
    iat: now(),
    exp: now() + 900,
    scope: 'inference',
    federation_policy_id: 'policy-1',
    federation_issuer_id: 'issuer-1',
    [ACTING_KEY_CLAIM]: KEY_HASH,
    ...overrides,
  });
  const refusal = (token: string) => verifier.verify(token).then(() => 'accepted', (error: AccessTokenError) => error.code);

  beforeAll(async () => {
    [signer, other] = await Promise.all([newLocalSigner(), newLocalSigner()]);
  });
  beforeEach(async () => {
    clock = new FixedClock();
    store = new MemorySigningKeyStore();
    await store.put(signingKeyRecord(signer));
    lists = 0;
    const counted = { list: () => (lists++, store.list()) };
    verifier = new SigningKeyAccessTokenVerifier({ signingKeys: counted, clock, issuer: ISSUER, maxTokenLifetimeSeconds: 900 });
  });

  it('accepts an ES256 at+jwt of ours and names the acting key and the policy', async () => {
    await expect(verifier.verify(await signJwt(signer, claims()))).resolves.toEqual({ keyHash: KEY_HASH, federationPolicyId: 'policy-1', boundKey: null });
    await expect(verifier.verify(await signJwt(signer, claims(), { typ: 'application/at+jwt' }))).resolves.toMatchObject({ keyHash: KEY_HASH });
  });

  it('names the DPoP key a bound token is bound to, and refuses a cnf that is not one thumbprint', async () => {
    const jkt = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
    await expect(verifier.verify(await signJwt(signer, { ...claims(), cnf: { jkt } }))).resolves.toMatchObject({ boundKey: jkt });
    for (const cnf of [{}, { jkt: 42 }, { jkt: `${jkt}x` }, 'jkt', null, { x5t: jkt }]) {
      expect(await refusal(await signJwt(signer, { ...claims(), cnf }))).toBe('claims');
    }
  });

  it.each([
    ['another alg', { alg: 'ES384' }, 'unsupported_alg'],
    ['alg none', { alg: 'none' }, 'unsupported_alg'],
    ['typ JWT', { typ: 'JWT' }, 'wrong_typ'],
    ['no typ', { typ: undefined }, 'wrong_typ'],
    ['no kid', { kid: undefined }, 'unknown_kid'],
    ['a kid we never had', { kid: 'not-ours' }, 'unknown_kid'],
  ])('refuses a header with %s', async (_name, header, code) => {
    expect(await refusal(await signJwt(signer, claims(), header))).toBe(code);
  });

  it('refuses a token signed by a key that is not ours under our kid, and a tampered payload', async () => {
    expect(await refusal(await signJwt(other, claims(), { kid: signer.kid }))).toBe('bad_signature');
    const [h, , s] = (await signJwt(signer, claims())).split('.');
    const forged = Buffer.from(JSON.stringify(claims({ [ACTING_KEY_CLAIM]: 'b'.repeat(64) }))).toString('base64url');
    expect(await refusal(`${h}.${forged}.${s}`)).toBe('bad_signature');
  });

  it.each([
    ['another issuer', { iss: 'https://evil.example.com/api/v1' }],
    ['another audience', { aud: 'https://evil.example.com' }],
    ['no exp', { exp: undefined }],
    ['exp reached (no leeway on exp, as in the exchange)', { exp: Date.parse('2026-11-21T12:00:00Z') / 1000 }],
    ['nbf beyond the 30 s leeway', { nbf: Date.parse('2026-11-21T12:00:31Z') / 1000 }],
    ['iat beyond the 30 s leeway', { iat: Date.parse('2026-11-21T12:00:31Z') / 1000 }],
    ['no acting key', { [ACTING_KEY_CLAIM]: undefined }],
    ['an acting key that is not a key hash', { [ACTING_KEY_CLAIM]: 'sk-mg-v1-secret' }],
  ])('refuses claims with %s', async (_name, overrides) => {
    expect(await refusal(await signJwt(signer, claims(overrides)))).toBe('claims');
  });

  it('accepts nbf and iat within the 30 s leeway and an audience list that holds our URL', async () => {
    const skewed = claims({ nbf: now() + 30, iat: now() + 30, aud: ['https://other.example.com', ISSUER] });
    await expect(verifier.verify(await signJwt(signer, skewed))).resolves.toMatchObject({ keyHash: KEY_HASH });
  });

  it('refreshes on an unknown kid at most every 30 s, and then knows a new key', async () => {
    const token = await signJwt(signer, claims());
    await verifier.verify(token);
    expect(lists).toBe(1);
    const rotated = await signJwt(other, claims());
    expect(await refusal(rotated)).toBe('unknown_kid');
    expect(lists).toBe(1);
    await store.put(signingKeyRecord(other));
    clock.advance(10_000);
    expect(await refusal(rotated)).toBe('unknown_kid');
    expect(lists).toBe(1);
    clock.advance(20_000);
    await expect(verifier.verify(await signJwt(other, claims()))).resolves.toMatchObject({ keyHash: KEY_HASH });
    expect(lists).toBe(2);
    // Known kids cost no read.
    await verifier.verify(await signJwt(signer, claims()));
    expect(lists).toBe(2);
  });

  it('stops verifying with a key whose record is gone, or retired longer ago than a token lives', async () => {
    await verifier.verify(await signJwt(signer, claims()));
    store.records.delete(signer.kid);
    clock.advance(300_000);
    expect(await refusal(await signJwt(signer, claims()))).toBe('unknown_kid');

    await store.put(signingKeyRecord(signer, { status: 'retired', retiredAt: clock.now().toISOString() }));
    clock.advance(300_000);
    await expect(verifier.verify(await signJwt(signer, claims()))).resolves.toMatchObject({ keyHash: KEY_HASH });
    clock.advance(601_000);
    expect(await refusal(await signJwt(signer, claims()))).toBe('unknown_kid');
  });

  it('refuses garbage without reading the keys', async () => {
    expect(await refusal('not.a.jwt')).toBe('malformed');
    expect(lists).toBe(0);
  });
});
