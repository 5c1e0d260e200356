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
