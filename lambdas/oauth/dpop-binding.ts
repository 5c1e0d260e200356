import type { ProofChecker, ProofRequest } from '../accounts/authenticate';
import { API_BASE_PATH } from '../base-paths';
import type { Clock } from '../clock';
import { verifyDpopProof, type ProofReplayStore, type VerifiedProof } from './dpop-proof';

export interface DpopCheckerOptions {
  /** The API base URL (`API_BASE_URL`): the public URL of every route, as clients are told it. */
  apiBaseUrl: string;
  replays: ProofReplayStore;
  clock: Clock;
}

/**
 * The DPoP checks of one deployment (RFC 9449 §4.3), shared by the token endpoint and every
 * protected route: {@link check} verifies a proof against the request it came with, without
 * I/O; {@link claim} records it in the replay store, which callers run beside their own reads
 * so a proof adds no sequential round trip.
 */
export class DpopChecker implements ProofChecker {
  constructor(private readonly options: DpopCheckerOptions) {}

  check(proofs: readonly string[], request: ProofRequest): Promise<VerifiedProof> {
    return verifyDpopProof(proofs, {
      method: request.method,
      urls: publicRequestUrls(this.options.apiBaseUrl, request.path, request.stageUrl),
      accessToken: request.accessToken,
      now: this.options.clock.now(),
    });
  }

  /** False when the proof was seen before within its window: a replay. */
  claim(proof: VerifiedProof): Promise<boolean> {
    return this.options.replays.claim(proof.replayKey, proof.acceptedUntil, this.options.clock.now());
  }
}

/**
 * The URLs a client may have used for a request (RFC 9449 `htu`): the route below the API base
 * URL, which is what discovery and the docs give clients, and, in AWS, the URL API Gateway says
 * the request came in on (the stage URL when the API base URL is a custom domain). `path` is the
 * request path (API Gateway's `path`), which may carry a base-path mapping before the API base path.
 */
export function publicRequestUrls(apiBaseUrl: string, path: string, stageUrl: string | undefined): string[] {
  const at = path.startsWith(`${API_BASE_PATH}/`) || path === API_BASE_PATH ? 0 : path.indexOf(`${API_BASE_PATH}/`);
  const urls = at === -1 ? [] : [`${apiBaseUrl.replace(/\/+$/, '')}${path.slice(at + API_BASE_PATH.length)}`];
  if (stageUrl !== undefined) urls.push(stageUrl);
  return urls;
}
