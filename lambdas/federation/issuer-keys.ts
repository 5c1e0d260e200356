import type { JWK } from 'jose';
import type { Clock } from '../clock';
import { DocumentFetchError, createHttpsJsonFetcher, type HttpsJsonFetcherOptions, type JsonFetcher } from './https-json-fetch';
import type { FederationIssuer } from './types';

/**
 * The public keys an issuer signs its tokens with (docs/reference.md#subject-tokens rule 1): its inline JWK Set, or
 * the set at its `jwks_url`, or at the `jwks_uri` of its OpenID discovery document. Fetched
 * sets are cached per container.
 */

/** An issuer's key set as the exchange verifies with it, and where and when it was had. */
export interface IssuerKeySet {
  /** Public members only, as published. */
  keys: readonly JWK[];
  /** Where the set came from, for the admin: `inline JWK Set` or a URL. */
  origin: string;
  /** When it was fetched (ISO time); null for an inline set. */
  fetchedAt: string | null;
}

/** The issuer's key set, or why there is none to verify with. */
export type IssuerKeyLookup =
  | { status: 'available'; set: IssuerKeySet }
  /** Nothing usable: the reason is for the admin (docs/reference.md#oauth-errors: 503 `temporarily_unavailable`). */
  | { status: 'unavailable'; problem: string };

/** Where the exchange gets an issuer's keys. */
export interface IssuerKeySource {
  /**
   * The issuer's current key set. When `kid` is given and the cached set lacks it, the set is
   * fetched again first (at most once per {@link REFETCH_INTERVAL_MS} per issuer). Never throws
   * for a network or publisher failure: that is `unavailable`.
   */
  getKeys(issuer: FederationIssuer, kid: string | null): Promise<IssuerKeyLookup>;
}

/** The shortest a fetched set is cached, whatever its `Cache-Control` says. */
export const MIN_CACHE_SECONDS = 5 * 60;
/** The longest a fetched set is cached, whatever its `Cache-Control` says. */
export const MAX_CACHE_SECONDS = 24 * 60 * 60;
/** At most one fetch per issuer in this interval while a set is cached (unknown kids, refresh failures). */
export const REFETCH_INTERVAL_MS = 30_000;
/** With nothing cached, a failed fetch is retried no sooner than this. */
export const FAILURE_RETRY_MS = 5_000;
/** A cached set stays usable while its refresh fails, up to this long after it was fetched. */
export const STALE_LIMIT_MS = MAX_CACHE_SECONDS * 1000;
/** A key set is for signature keys, not a key store. */
export const MAX_KEYS = 100;
const MAX_ISSUERS_CACHED = 1000;

interface CacheEntry {
  set: IssuerKeySet | null;
  expiresAt: number;
  lastAttemptAt: number;
  lastProblem: string | null;
}

/** How a {@link CachingIssuerKeySource} fetches documents, and its clock. */
export interface CachingIssuerKeySourceOptions {
  fetchJson: JsonFetcher;
  clock: Clock;
}

/**
 * The key source a container keeps for its lifetime: HTTPS fetches under the SSRF rules,
 * cached per issuer. `allowLoopback` is `config.allowLoopbackIssuers` (the local runtime).
 */
export function createIssuerKeySource(options: { clock: Clock } & Pick<HttpsJsonFetcherOptions, 'allowLoopback' | 'extraCaPems'>): IssuerKeySource {
  return new CachingIssuerKeySource({
    clock: options.clock,
    fetchJson: createHttpsJsonFetcher({ allowLoopback: options.allowLoopback, extraCaPems: options.extraCaPems }),
  });
}

/**
 * Issuer key sets cached per container, between {@link MIN_CACHE_SECONDS} and
 * {@link MAX_CACHE_SECONDS} whatever `Cache-Control` says: an unknown `kid` or a failed
 * refresh fetches again at most once per {@link REFETCH_INTERVAL_MS}, and a set whose refresh
 * fails stays usable up to {@link STALE_LIMIT_MS} after it was fetched.
 */
export class CachingIssuerKeySource implements IssuerKeySource {
  private readonly cache = new Map<string, CacheEntry>();
  /** One fetch per issuer at a time: concurrent exchanges share it. */
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(private readonly options: CachingIssuerKeySourceOptions) {}

  async getKeys(issuer: FederationIssuer, kid: string | null): Promise<IssuerKeyLookup> {
    if (issuer.jwks) return { status: 'available', set: { keys: publicKeys(issuer.jwks.keys), origin: 'inline JWK Set', fetchedAt: null } };
    // Keyed by what the fetch depends on: an edited issuer URL or JWKS URL starts afresh.
    const cacheKey = `${issuer.id}\n${issuer.issuerUrl}\n${issuer.jwksUrl ?? ''}`;
    let entry = this.cache.get(cacheKey);
    const now = this.options.clock.now().getTime();
    if (this.needsFetch(entry, kid, now)) {
      await this.fetchOnce(cacheKey, issuer);
      entry = this.cache.get(cacheKey);
    }
    const usable = entry?.set && this.options.clock.now().getTime() - Date.parse(entry.set.fetchedAt!) <= STALE_LIMIT_MS;
    if (entry && usable) return { status: 'available', set: entry.set! };
    return { status: 'unavailable', problem: entry?.lastProblem ?? 'the key set has not been fetched' };
  }

  private needsFetch(entry: CacheEntry | undefined, kid: string | null, now: number): boolean {
    if (!entry) return true;
    const sinceAttempt = now - entry.lastAttemptAt;
    if (!entry.set) return sinceAttempt >= FAILURE_RETRY_MS;
    const fresh = now < entry.expiresAt;
    const kidMissing = kid !== null && !entry.set.keys.some((key) => key.kid === kid);
    if (fresh && !kidMissing) return false;
    // A flood of random kids (or a dead publisher) costs the issuer one request per interval.
    return sinceAttempt >= REFETCH_INTERVAL_MS;
  }

  private fetchOnce(cacheKey: string, issuer: FederationIssuer): Promise<void> {
    const running = this.inFlight.get(cacheKey);
    if (running) return running;
    const attempt = this.refresh(cacheKey, issuer).finally(() => this.inFlight.delete(cacheKey));
    this.inFlight.set(cacheKey, attempt);
    return attempt;
  }

  private async refresh(cacheKey: string, issuer: FederationIssuer): Promise<void> {
    const startedAt = this.options.clock.now().getTime();
    const previous = this.cache.get(cacheKey);
    try {
      const { set, maxAgeSeconds } = await this.download(issuer);
      const ttl = Math.min(MAX_CACHE_SECONDS, Math.max(MIN_CACHE_SECONDS, maxAgeSeconds ?? MIN_CACHE_SECONDS));
      this.store(cacheKey, { set, expiresAt: startedAt + ttl * 1000, lastAttemptAt: startedAt, lastProblem: null });
    } catch (error) {
      if (!(error instanceof DocumentFetchError)) throw error;
      this.store(cacheKey, {
        set: previous?.set ?? null,
        expiresAt: previous?.expiresAt ?? 0,
        lastAttemptAt: startedAt,
        lastProblem: error.message,
      });
    }
  }

  private store(cacheKey: string, entry: CacheEntry): void {
    this.cache.delete(cacheKey);
    if (this.cache.size >= MAX_ISSUERS_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(cacheKey, entry);
  }

  private async download(issuer: FederationIssuer): Promise<{ set: IssuerKeySet; maxAgeSeconds: number | null }> {
    const jwksUrl = issuer.jwksUrl ?? (await this.discoverJwksUri(issuer));
    const { body, maxAgeSeconds } = await this.options.fetchJson(jwksUrl);
    const fetchedAt = this.options.clock.now().toISOString();
    return { set: { keys: parseKeySet(body, jwksUrl), origin: jwksUrl, fetchedAt }, maxAgeSeconds };
  }

  /** OpenID Connect Discovery 1.0 §4. */
  private async discoverJwksUri(issuer: FederationIssuer): Promise<string> {
    // §4.1: a terminating slash of the issuer is removed before appending the well-known path.
    const url = `${issuer.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const { body } = await this.options.fetchJson(url);
    if (!isRecord(body)) throw new DocumentFetchError(`${url}: the discovery document is not a JSON object`);
    // §4.3: the issuer in the document must be exactly the issuer it was fetched for.
    if (body.issuer !== issuer.issuerUrl) {
      throw new DocumentFetchError(
        `${url}: the discovery document names issuer ${JSON.stringify(String(body.issuer)).slice(0, 200)}, not ${JSON.stringify(issuer.issuerUrl)}`,
      );
    }
    if (typeof body.jwks_uri !== 'string' || !body.jwks_uri.startsWith('https://')) {
      throw new DocumentFetchError(`${url}: the discovery document has no https:// jwks_uri`);
    }
    return body.jwks_uri;
  }
}

/**
 * RFC 7517 §5: a JWK Set. Members that are not objects are skipped; whether a key may verify
 * a token is judged when it is used, so one odd key does not make a whole set unusable.
 */
export function parseKeySet(body: unknown, where: string): JWK[] {
  if (!isRecord(body) || !Array.isArray(body.keys)) throw new DocumentFetchError(`${where}: not a JWK Set (no "keys" array)`);
  if (body.keys.length > MAX_KEYS) throw new DocumentFetchError(`${where}: more than ${MAX_KEYS} keys`);
  return publicKeys(body.keys.filter(isRecord) as JWK[]);
}

const PUBLIC_MEMBERS = ['kty', 'kid', 'use', 'key_ops', 'alg', 'crv', 'x', 'y', 'n', 'e'] as const;

/** Private members a careless publisher may include are dropped, never used or kept. */
function publicKeys(keys: readonly JWK[]): JWK[] {
  return keys.map((key) => {
    const copy: Record<string, unknown> = {};
    for (const member of PUBLIC_MEMBERS) if (key[member] !== undefined) copy[member] = key[member];
    return Object.freeze(copy) as JWK;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
