import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActiveSigner } from '../../../lambdas/signing/active-signer';
import { LocalSigner } from '../../../lambdas/signing/local-signer';
import type { SigningKeyRecord, SigningKeyStore } from '../../../lambdas/signing/signer';
import { signerForRecord } from '../../../lambdas/wiring/signer-for-record';
import { FixedClock } from '../../support/fixed-clock';

class MemoryKeyStore implements SigningKeyStore {
  records: SigningKeyRecord[] = [];
  reads = 0;
  failing = false;
  async put(record: SigningKeyRecord) {
    this.records = [...this.records.filter((r) => r.kid !== record.kid), record];
  }
  async list() {
    this.reads++;
    if (this.failing) throw new Error('throttled');
    return structuredClone(this.records);
  }
}

describe('ActiveSigner', () => {
  const dir = mkdtempSync(join(tmpdir(), 'active-signer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function localRecord(file: string, createdAt: string, status: SigningKeyRecord['status'] = 'active'): Promise<SigningKeyRecord> {
    const signer = await LocalSigner.fromFile(join(dir, file));
    return { kid: signer.kid, keyRef: `local:${file}`, publicJwk: signer.publicJwk, status, createdAt, retiredAt: status === 'retired' ? createdAt : null };
  }

  it('signs with the newest active key and moves to a rotated key within the recheck time, without a restart', async () => {
    const store = new MemoryKeyStore();
    const clock = new FixedClock();
    const first = await localRecord('a.pem', '2026-11-01T00:00:00Z');
    await store.put(first);
    const active = new ActiveSigner(store, signerForRecord({ localKeyDir: dir }), clock, 30);

    expect((await active.signer()).kid).toBe(first.kid);
    const second = await localRecord('b.pem', '2026-11-21T12:00:00Z');
    await store.put({ ...first, status: 'retired', retiredAt: '2026-11-21T12:00:00Z' });
    await store.put(second);

    clock.advance(29_000);
    expect((await active.signer()).kid).toBe(first.kid);
    clock.advance(1_000);
    expect((await active.signer()).kid).toBe(second.kid);
    expect(store.reads).toBe(2);
  });

  it('shares one read between concurrent requests and keeps the known key when a re-read fails', async () => {
    const store = new MemoryKeyStore();
    const clock = new FixedClock();
    const record = await localRecord('c.pem', '2026-11-01T00:00:00Z');
    await store.put(record);
    const active = new ActiveSigner(store, signerForRecord({ localKeyDir: dir }), clock, 30);
    const signers = await Promise.all(Array.from({ length: 10 }, () => active.signer()));
    expect(new Set(signers.map((s) => s.kid))).toEqual(new Set([record.kid]));
    expect(store.reads).toBe(1);

    store.failing = true;
    clock.advance(60_000);
    expect((await active.signer()).kid).toBe(record.kid);
  });

  it('refuses to sign when no key is active, or when a key file holds another key than recorded', async () => {
    const store = new MemoryKeyStore();
    const clock = new FixedClock();
    await store.put(await localRecord('d.pem', '2026-11-01T00:00:00Z', 'retired'));
    const active = new ActiveSigner(store, signerForRecord({ localKeyDir: dir }), clock);
    await expect(active.signer()).rejects.toThrow('No active signing key is recorded');

    const build = signerForRecord({ localKeyDir: dir });
    const e = await localRecord('e.pem', '2026-11-01T00:00:00Z');
    await expect(build({ ...e, keyRef: 'local:d.pem' })).rejects.toThrow(`The key file of signing key ${e.kid} holds another key`);
    await expect(build({ ...e, keyRef: 'local:missing.pem' })).rejects.toThrow('does not exist');
    await expect(build({ ...e, keyRef: 'local:../e.pem' })).rejects.toThrow('names a file outside the key folder');
    await expect(signerForRecord({})({ ...e, keyRef: 'arn:aws:kms:eu-west-1:1:key/x' })).rejects.toThrow('no KMS client is configured');
  });
});
