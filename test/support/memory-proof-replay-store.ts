import type { ProofReplayStore } from '../../lambdas/credentials/dpop-proof';

/** DPoP proof replay records in process memory, for tests and the benchmark. */
export class MemoryProofReplayStore implements ProofReplayStore {
  private readonly seen = new Map<string, number>();

  async claim(replayKey: string, acceptedUntil: number, now: Date): Promise<boolean> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const current = this.seen.get(replayKey);
    if (current !== undefined && current > nowSeconds) return false;
    this.seen.set(replayKey, acceptedUntil);
    return true;
  }
}
