import type { Clock } from '../clock';
import type { Signer, SigningKeyRecord, SigningKeyStore } from './signer';

/** How long a container trusts the active signing-key record it read last. */
export const ACTIVE_KEY_RECHECK_SECONDS = 30;

/**
 * The signer of the active signing key, re-read from the signing-key records at most every
 * {@link ACTIVE_KEY_RECHECK_SECONDS}. After a rotation, running containers sign with the new
 * key within that time, without a restart; the key was published (its record written)
 * before any container can sign with it, because signers learn of keys from the records.
 */
export class ActiveSigner {
  private current: { signer: Signer; checkedAt: number } | undefined;
  private refreshing: Promise<Signer> | undefined;

  constructor(
    private readonly store: SigningKeyStore,
    private readonly build: (record: SigningKeyRecord) => Signer | Promise<Signer>,
    private readonly clock: Clock,
    private readonly recheckSeconds = ACTIVE_KEY_RECHECK_SECONDS,
  ) {}

  async signer(): Promise<Signer> {
    const now = this.clock.now().getTime();
    if (this.current && now - this.current.checkedAt < this.recheckSeconds * 1000) return this.current.signer;
    // Concurrent requests share one read.
    this.refreshing ??= this.refresh(now).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(now: number): Promise<Signer> {
    let record: SigningKeyRecord | undefined;
    try {
      record = newestActive(await this.store.list());
    } catch (error) {
      // A failed re-read keeps the key we have: it was active a moment ago and still verifies.
      if (this.current) return this.current.signer;
      throw error;
    }
    if (!record) throw new Error('No active signing key is recorded');
    const signer = this.current?.signer.kid === record.kid ? this.current.signer : await this.build(record);
    this.current = { signer, checkedAt: now };
    return signer;
  }
}

/** The key that signs: the newest active record (a rotation leaves exactly one active). */
export function newestActive(records: readonly SigningKeyRecord[]): SigningKeyRecord | undefined {
  return records
    .filter((record) => record.status === 'active')
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.kid.localeCompare(a.kid))[0];
}
