/**
 * Per-issuer memory of subject-token `jti` values (issuer `checkJti`): a `jti` is claimed
 * once, for the subject token's lifetime, by one conditional write.
 */
export interface JtiStore {
  /**
   * Records `jti` for `issuerId` until `expiresAt` (epoch seconds). Answers false when it is
   * already recorded and not expired. `claimant` identifies this claim for {@link release}.
   */
  claim(issuerId: string, jti: string, expiresAt: number, claimant: string, now: Date): Promise<boolean>;
  /** Forgets a claim made by `claimant` (when no token was issued after all). */
  release(issuerId: string, jti: string, claimant: string): Promise<void>;
}

export class InMemoryJtiStore implements JtiStore {
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
