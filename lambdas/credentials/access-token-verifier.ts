import { createLocalJWKSet, jwtVerify, type JWTVerifyGetKey, type JWTVerifyOptions } from 'jose';
import type { Clock } from '../clock';
import { publishedKeys } from '../signing/published-keys';
import type { SigningKeyStore } from '../signing/signer';
import type { AccessTokenVerifier, VerifiedAccessToken } from './authenticate';
import { refusalReasonFor } from './jose-refusal';
import { Refusal, type TokenRefusalReason } from './token-refusal';
import { CLOCK_LEEWAY_SECONDS, checkValidityWindow } from './token-time-rules';

/**
 * RFC 9068 §2.1: the media type of a JWT access token, in the `typ` header. The token endpoint
 * writes it (lambdas/oauth/access-token.ts), this verifier requires it.
 */
export const ACCESS_TOKEN_TYP = 'at+jwt';

/** The claim that names the API key the token acts as (its SHA-256 hash, as the key records store it). */
export const ACTING_KEY_CLAIM = 'api_key_hash';

type AccessTokenErrorCode = 'malformed' | 'unsupported_alg' | 'wrong_typ' | 'unknown_kid' | 'bad_signature' | 'claims';

/** Why a token was refused; never shown to the caller, who gets one 401 message. */
export class AccessTokenError extends Error {
  constructor(readonly code: AccessTokenErrorCode) {
    super(`access token refused: ${code}`);
    this.name = 'AccessTokenError';
  }
}

/** The verifier's codes for the refusal reasons; every claim-level reason is `claims`. */
const ERROR_CODES: Partial<Record<TokenRefusalReason, AccessTokenErrorCode>> = {
  malformed_token: 'malformed',
  unsupported_alg: 'unsupported_alg',
  token_type_refused: 'wrong_typ',
  unknown_kid: 'unknown_kid',
  bad_signature: 'bad_signature',
};

function refused(reason: TokenRefusalReason): AccessTokenError {
  return new AccessTokenError(ERROR_CODES[reason] ?? 'claims');
}

/** Where the verifier finds the signing keys, and how long it keeps them. */
export interface AccessTokenVerifierOptions {
  signingKeys: Pick<SigningKeyStore, 'list'>;
  clock: Clock;
  /** The API base URL: `iss` and `aud` of every token the exchange issues (docs/reference.md#access-tokens). */
  issuer: string;
  /** docs/reference.md#limits: retired signing keys verify this long after they stopped signing. */
  maxTokenLifetimeSeconds: number;
  /** An unknown `kid` reloads the signing-key records at most this often. @default 30 */
  unknownKidRefreshSeconds?: number;
  /** Known keys are re-read this often, so a retired or removed record stops verifying. @default 300 */
  maxKeyAgeSeconds?: number;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** An RFC 7638 SHA-256 thumbprint, base64url. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/** RFC 9449 §6.1: `cnf.jkt` of a bound token; no `cnf`, an unbound one. We never issue another `cnf`. */
function boundKeyOf(cnf: unknown): string | null {
  if (cnf === undefined) return null;
  const jkt = typeof cnf === 'object' && cnf !== null ? (cnf as { jkt?: unknown }).jkt : undefined;
  if (typeof jkt !== 'string' || !THUMBPRINT.test(jkt)) throw new AccessTokenError('claims');
  return jkt;
}

/**
 * Verifies the service's own access tokens (docs/reference.md#access-tokens,
 * docs/reference.md#scopes-and-access rule 5). jose's `jwtVerify` checks ES256 only, header
 * `typ` `at+jwt` (RFC 9068 §2.1, also in its `application/` form), the signature with the key of
 * the header `kid` among those the JWKS publishes (active ones, and retired ones while their
 * tokens live), our `iss` and `aud`. The service's time rules then decide (token-time-rules.ts,
 * shared with the exchange: no leeway on `exp`, {@link CLOCK_LEEWAY_SECONDS} on `nbf` and `iat`;
 * jose's own checks, run first with that tolerance, never refuse what they accept). Keys are
 * cached per container and re-read on an unknown `kid` at most every 30 s, so a flood of forged
 * kids costs one query per 30 s. No decision is cached: the caller reads the acting key on
 * every request ({@link authenticate}).
 */
export class SigningKeyAccessTokenVerifier implements AccessTokenVerifier {
  private keySet: ReturnType<typeof createLocalJWKSet> = createLocalJWKSet({ keys: [] });
  private kids = new Set<string>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private readonly unknownKidRefreshMs: number;
  private readonly maxKeyAgeMs: number;

  constructor(private readonly options: AccessTokenVerifierOptions) {
    this.unknownKidRefreshMs = (options.unknownKidRefreshSeconds ?? 30) * 1000;
    this.maxKeyAgeMs = (options.maxKeyAgeSeconds ?? 300) * 1000;
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    const now = this.options.clock.now();
    const options: JWTVerifyOptions = {
      algorithms: ['ES256'],
      typ: ACCESS_TOKEN_TYP,
      issuer: this.options.issuer,
      audience: this.options.issuer,
      currentDate: now,
      clockTolerance: CLOCK_LEEWAY_SECONDS,
    };
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(token, this.resolveKey, options));
    } catch (error) {
      if (error instanceof AccessTokenError) throw error;
      const reason = refusalReasonFor(error);
      if (reason === null) throw error;
      throw refused(reason);
    }
    const validity = checkValidityWindow(claims, now);
    if (validity instanceof Refusal) throw refused(validity.reason);
    const keyHash = claims[ACTING_KEY_CLAIM];
    if (typeof keyHash !== 'string' || !SHA256_HEX.test(keyHash)) throw new AccessTokenError('claims');
    const policy = claims.federation_policy_id;
    return { keyHash, federationPolicyId: typeof policy === 'string' ? policy : null, boundKey: boundKeyOf(claims.cnf) };
  }

  /**
   * Called by jose once the token is a compact JWS naming ES256: every token we issue names
   * its key, and jose picks it from the published set (`ERR_JWKS_NO_MATCHING_KEY` otherwise).
   */
  private readonly resolveKey: JWTVerifyGetKey = async (header, token) => {
    if (typeof header.kid !== 'string' || header.kid === '') throw new AccessTokenError('unknown_kid');
    await this.refreshFor(header.kid);
    return this.keySet(header, token);
  };

  private async refreshFor(kid: string): Promise<void> {
    const age = this.options.clock.now().getTime() - this.loadedAt;
    if (age >= this.maxKeyAgeMs || (!this.kids.has(kid) && age >= this.unknownKidRefreshMs)) await this.reload();
  }

  /** One reload at a time; concurrent verifications share it. */
  private reload(): Promise<void> {
    this.loading ??= (async () => {
      const now = this.options.clock.now();
      const records = await this.options.signingKeys.list();
      // Exactly the keys the JWKS publishes.
      const published = publishedKeys(records, now, this.options.maxTokenLifetimeSeconds);
      this.keySet = createLocalJWKSet(published);
      this.kids = new Set(published.keys.map((key) => key.kid!));
      this.loadedAt = now.getTime();
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }
}
