import type { SigningKeyRecord, SigningKeyStore } from '../../lambdas/signing/signer';

/** Signing-key records in memory, with every write kept for assertions. */
export class MemorySigningKeyStore implements SigningKeyStore {
  readonly records = new Map<string, SigningKeyRecord>();
  readonly writes: SigningKeyRecord[] = [];

  async put(record: SigningKeyRecord): Promise<void> {
    const copy = structuredClone(record);
    this.records.set(record.kid, copy);
    this.writes.push(copy);
  }

  async list(): Promise<SigningKeyRecord[]> {
    return [...this.records.values()].map((record) => structuredClone(record));
  }

  get(kid: string): SigningKeyRecord | undefined {
    return this.records.get(kid);
  }
}
