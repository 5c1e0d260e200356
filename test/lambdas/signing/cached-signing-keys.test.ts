import { cachedSigningKeys, PUBLISHED_KEYS_CACHE_SECONDS } from '../../../lambdas/signing/cached-signing-keys';
import type { SigningKeyRecord } from '../../../lambdas/signing/signer';
import { FixedClock } from '../../support/fixed-clock';

const record = (kid: string): SigningKeyRecord => ({ kid, keyRef: `local:${kid}.pem`, publicJwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }, status: 'active', createdAt: '2026-01-01T00:00:00.000Z', retiredAt: null });

/** The key set the JWKS function publishes: one read a container every few seconds, whatever the rate of requests. */
describe('cachedSigningKeys', () => {
  it('reads the records once per interval, however many requests come, and sees a rotation after it', async () => {
    const clock = new FixedClock();
    let reads = 0;
    let records = [record('k1')];
    const keys = cachedSigningKeys({ list: async () => (reads++, records) }, clock);
    const answers = await Promise.all(Array.from({ length: 50 }, () => keys.list()));
    expect(answers.every((answer) => answer[0]!.kid === 'k1')).toBe(true);
    records = [record('k2'), record('k1')];
    clock.advance(PUBLISHED_KEYS_CACHE_SECONDS * 1000 - 1);
    expect((await keys.list()).map((r) => r.kid)).toEqual(['k1']);
    expect(reads).toBe(1);
    clock.advance(1);
    expect((await keys.list()).map((r) => r.kid)).toEqual(['k2', 'k1']);
    expect(reads).toBe(2);
  });

  it('serves the records read before when a re-read fails, and fails only with none to serve', async () => {
    const clock = new FixedClock();
    let fail = true;
    const keys = cachedSigningKeys({ list: async () => { if (fail) throw new Error('throttled'); return [record('k1')]; } }, clock);
    await expect(keys.list()).rejects.toThrow('throttled');
    fail = false;
    expect(await keys.list()).toHaveLength(1);
    fail = true;
    clock.advance(PUBLISHED_KEYS_CACHE_SECONDS * 1000);
    expect((await keys.list())[0]!.kid).toBe('k1');
  });
});
