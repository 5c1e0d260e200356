import type { JtiStore } from '../../lambdas/federation/jti-replay';

/** Subject-token `jti` claims in process memory, for tests and the benchmark. */
export class MemoryJtiStore implements JtiStore {
  private readonly seen = new Map<string, { expiresAt: number; claimant: string }>();

  async claim(issuerId: string, jti: string, expiresAt: number, claimant: string, now: Date): Promise<boolean> {
    const key = JSON.stringify([issuerId, jti]);
    const current = this.seen.get(key);
    if (current && current.expiresAt > Math.floor(now.getTime() / 1000)) return false;
    this.seen.set(key, { expiresAt, claimant });
    return true;
  }

  async release(issuerId: string, jti: string, claimant: string): Promise<void> {
    const key = JSON.stringify([issuerId, jti]);
    if (this.seen.get(key)?.claimant === claimant) this.seen.delete(key);
  }
}
