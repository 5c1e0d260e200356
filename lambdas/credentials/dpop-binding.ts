import { API_BASE_PATH } from '../base-paths';
import type { Clock } from '../clock';
import { normalizeHostname } from '../hostname';
import type { ProofChecker, ProofRequest } from './authenticate';
import { verifyDpopProof, type ProofReplayStore, type VerifiedProof } from './dpop-proof';

/** What a deployment's DPoP checks need: the URLs it serves, the replay store and the clock. */
export interface DpopCheckerOptions {
  /** The API base URL (`API_BASE_URL`): the public URL of every route, as clients are told it. */
  apiBaseUrl: string;
  /** The other hostnames the deployment serves (its regional hostnames). */
  servedHostnames: readonly string[];
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
  private readonly served: ServedHosts;

  constructor(private readonly options: DpopCheckerOptions) {
    this.served = servedHosts(options.apiBaseUrl, options.servedHostnames);
  }

  check(proofs: readonly string[], request: ProofRequest): Promise<VerifiedProof> {
    return verifyDpopProof(proofs, {
      method: request.method,
      urls: publicRequestUrls(this.options.apiBaseUrl, request, this.served),
      accessToken: request.accessToken,
      now: this.options.clock.now(),
    });
  }

  /** False when the proof was seen before within its window: a replay. */
  claim(proof: VerifiedProof): Promise<boolean> {
    return this.options.replays.claim(proof.replayKey, proof.acceptedUntil, this.options.clock.now());
  }
}

/** The scheme every URL of the deployment has, and the hostnames it answers on, normalised. */
export interface ServedHosts {
  scheme: string;
  hostnames: ReadonlySet<string>;
}

/** The {@link ServedHosts} of a deployment: the API base URL's host and its other hostnames. */
export function servedHosts(apiBaseUrl: string, others: readonly string[]): ServedHosts {
  const base = new URL(apiBaseUrl);
  return { scheme: base.protocol, hostnames: new Set([base.host, ...others].map(normalizeHostname)) };
}

/**
 * The URLs a client may have used for a request (RFC 9449 `htu`): the route below the API base
 * URL, which is what discovery and the docs give clients; the URL on the request's own `Host`
 * when that is a hostname the deployment serves (a regional hostname: `http://eu.localhost:8787/…`
 * locally, `https://eu.api.example.com/…` in AWS); and, in AWS, the URL API Gateway says the
 * request came in on (the stage URL when the API base URL is a custom domain). `path` is the
 * request path (API Gateway's `path`), which may carry a base-path mapping before the API base path.
 */
export function publicRequestUrls(apiBaseUrl: string, request: Pick<ProofRequest, 'path' | 'stageUrl' | 'host'>, served: ServedHosts): string[] {
  const { path, stageUrl, host } = request;
  const at = path.startsWith(`${API_BASE_PATH}/`) || path === API_BASE_PATH ? 0 : path.indexOf(`${API_BASE_PATH}/`);
  const urls = at === -1 ? [] : [`${apiBaseUrl.replace(/\/+$/, '')}${path.slice(at + API_BASE_PATH.length)}`];
  if (host !== undefined && served.hostnames.has(normalizeHostname(host))) urls.push(`${served.scheme}//${host}${path}`);
  if (stageUrl !== undefined) urls.push(stageUrl);
  return urls;
}
