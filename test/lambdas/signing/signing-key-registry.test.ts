import type { JWK } from 'jose';
import { publishedKeys } from '../../../lambdas/signing/published-keys';
import { registerSigningKey, retireSigningKey } from '../../../lambdas/signing/signing-key-registry';
import { FixedClock } from '../../support/fixed-clock';
import { MemorySigningKeyStore } from '../../support/memory-signing-key-store';

const jwk = (x: string): JWK => ({ kty: 'EC', crv: 'P-256', x, y: `${x}-y` });
const keyA = { kid: 'kid-a', keyRef: 'arn:aws:kms:eu-west-1:1:key/a', publicJwk: jwk('a') };
const keyB = { kid: 'kid-b', keyRef: 'arn:aws:kms:eu-west-1:1:key/b', publicJwk: jwk('b') };

describe('registerSigningKey', () => {
  let store: MemorySigningKeyStore;
  let clock: FixedClock;
  beforeEach(() => {
    store = new MemorySigningKeyStore();
    clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
  });

  it('records the first key as the active one, created now', async () => {
    const result = await registerSigningKey(store, keyA, clock);
    expect(result).toEqual({
      active: { ...keyA, status: 'active', createdAt: '2026-11-21T12:00:00.000Z', retiredAt: null },
      retired: [],
      changed: true,
    });
    expect(await store.list()).toEqual([result.active]);
  });

  it('writes nothing when the key is already the active one', async () => {
    await registerSigningKey(store, keyA, clock);
    clock.advance(60_000);
    const again = await registerSigningKey(store, keyA, clock);
    expect(again.changed).toBe(false);
    expect(store.writes).toHaveLength(1);
    expect(store.get('kid-a')?.createdAt).toBe('2026-11-21T12:00:00.000Z');
  });

  it('rotates: the new key becomes active first, the old one is retired now and stays published', async () => {
    await registerSigningKey(store, keyA, clock);
    clock.set('2026-11-21T13:00:00Z');
    const result = await registerSigningKey(store, keyB, clock);
    expect(result.retired.map((r) => r.kid)).toEqual(['kid-a']);
    expect(store.writes.slice(1).map((w) => [w.kid, w.status])).toEqual([
      ['kid-b', 'active'],
      ['kid-a', 'retired'],
    ]);
    expect(store.get('kid-a')).toMatchObject({ status: 'retired', retiredAt: '2026-11-21T13:00:00.000Z', createdAt: '2026-11-21T12:00:00.000Z' });
    // docs/reference.md#verification-keys: both verify for the lifetime of the longest token; then only the new one.
    expect(publishedKeys(await store.list(), clock.now(), 900).keys.map((k) => k.kid)).toEqual(['kid-b', 'kid-a']);
    clock.advance(901_000);
    expect(publishedKeys(await store.list(), clock.now(), 900).keys.map((k) => k.kid)).toEqual(['kid-b']);
  });

  it('brings a retired key back (a rolled-back rotation), keeping its creation time', async () => {
    await registerSigningKey(store, keyA, clock);
    clock.advance(60_000);
    await registerSigningKey(store, keyB, clock);
    clock.advance(60_000);
    await registerSigningKey(store, keyA, clock);
    expect(store.get('kid-a')).toMatchObject({ status: 'active', retiredAt: null, createdAt: '2026-11-21T12:00:00.000Z' });
    expect(store.get('kid-b')).toMatchObject({ status: 'retired', retiredAt: '2026-11-21T12:02:00.000Z' });
  });

  it('leaves one active key when several were active', async () => {
    await store.put({ ...keyA, status: 'active', createdAt: '2026-01-01T00:00:00Z', retiredAt: null });
    await store.put({ ...keyB, status: 'active', createdAt: '2026-01-02T00:00:00Z', retiredAt: null });
    await registerSigningKey(store, keyB, clock);
    expect((await store.list()).filter((r) => r.status === 'active').map((r) => r.kid)).toEqual(['kid-b']);
  });
});

describe('retireSigningKey', () => {
  it('retires an active key as of now, and leaves a retired key’s time alone', async () => {
    const store = new MemorySigningKeyStore();
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    await registerSigningKey(store, keyA, clock);
    clock.advance(1000);
    expect(await retireSigningKey(store, 'kid-a', clock)).toMatchObject({ status: 'retired', retiredAt: '2026-11-21T12:00:01.000Z' });
    clock.advance(1000);
    expect(await retireSigningKey(store, 'kid-a', clock)).toBeUndefined();
    expect(await retireSigningKey(store, 'kid-unknown', clock)).toBeUndefined();
    expect(store.get('kid-a')?.retiredAt).toBe('2026-11-21T12:00:01.000Z');
  });
});
