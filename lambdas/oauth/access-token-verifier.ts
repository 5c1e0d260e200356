import { compactVerify, errors as joseErrors, importJWK, type CryptoKey, type JWK } from 'jose';
import type { AccessTokenVerifier, VerifiedAccessToken } from '../accounts/authenticate';
import type { Clock } from '../clock';
import { CLOCK_LEEWAY_SECONDS } from '../federation/evaluate-exchange';
import type { SigningKeyStore } from '../signing/signer';
import { ACCESS_TOKEN_TYP, ACTING_KEY_CLAIM } from './access-token';
import { publishedKeys } from './jwks';

/** Why a token was refused; never shown to the caller, who gets one 401 message. */
export class AccessTokenError extends Error {
  constructor(readonly code: 'malformed' | 'unsupported_alg' | 'wrong_typ' | 'unknown_kid' | 'bad_signature' | 'claims') {
    super(`access token refused: ${code}`);
    this.name = 'AccessTokenError';
  }
}

export interface AccessTokenVerifierOptions {
  signingKeys: Pick<SigningKeyStore, 'list'>;
  clock: Clock;
  /** The API base URL: `iss` and `aud` of every token the exchange issues (SPEC 2.13). */
  issuer: string;
  /** SPEC 8: retired signing keys verify this long after they stopped signing. */
  maxTokenLifetimeSeconds: number;
  /** An unknown `kid` reloads the signing-key records at most this often. @default 30 */
  unknownKidRefreshSeconds?: number;
  /** Known keys are re-read this often, so a retired or removed record stops verifying. @default 300 */
  maxKeyAgeSeconds?: number;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * Verifies the service's own access tokens (SPEC 2.13, 5 rule 5): ES256 only, header `typ`
 * `at+jwt`, a `kid` of one of our signing-key records that may still verify (the same set
 * the JWKS publishes), our `iss` and `aud`, and `exp` with the exchange's rule: none of
 * leeway on `exp`, {@link CLOCK_LEEWAY_SECONDS} on `nbf` and `iat`.
 *
 * Keys are cached per container and re-read on an unknown `kid` at most every 30 s, so a
 * flood of forged kids costs one query per 30 s. No decision is cached: the acting key is
 * read on every request by the caller ({@link authenticate}).
 */
export class SigningKeyAccessTokenVerifier implements AccessTokenVerifier {
  private keys = new Map<string, Promise<CryptoKey | Uint8Array>>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private readonly unknownKidRefreshMs: number;
  private readonly maxKeyAgeMs: number;

  constructor(private readonly options: AccessTokenVerifierOptions) {
    this.unknownKidRefreshMs = (options.unknownKidRefreshSeconds ?? 30) * 1000;
    this.maxKeyAgeMs = (options.maxKeyAgeSeconds ?? 300) * 1000;
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    const header = decodeHeader(token);
    if (header.alg !== 'ES256') throw new AccessTokenError('unsupported_alg');
    // RFC 9068 §2.1: `at+jwt`, also accepted in its `application/` form.
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
    if (typ !== ACCESS_TOKEN_TYP && typ !== `application/${ACCESS_TOKEN_TYP}`) throw new AccessTokenError('wrong_typ');
    if (typeof header.kid !== 'string' || header.kid === '') throw new AccessTokenError('unknown_kid');

    const key = await this.keyFor(header.kid);
    let payload: Uint8Array;
    try {
      ({ payload } = await compactVerify(token, key, { algorithms: ['ES256'] }));
    } catch (error) {
      if (error instanceof joseErrors.JOSEError) throw new AccessTokenError('bad_signature');
      throw error;
    }
    return this.checkClaims(payload);
  }

  private checkClaims(raw: Uint8Array): VerifiedAccessToken {
    let claims: Record<string, unknown>;
    try {
      claims = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      throw new AccessTokenError('malformed');
    }
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new AccessTokenError('malformed');
    const now = this.options.clock.now().getTime() / 1000;
    const { iss, aud, exp, nbf, iat } = claims;
    const audiences = Array.isArray(aud) ? aud : [aud];
    const ok =
      iss === this.options.issuer &&
      audiences.includes(this.options.issuer) &&
      isNumericDate(exp) &&
      now < exp &&
      (nbf === undefined || (isNumericDate(nbf) && now >= nbf - CLOCK_LEEWAY_SECONDS)) &&
      (iat === undefined || (isNumericDate(iat) && iat <= now + CLOCK_LEEWAY_SECONDS)) &&
      typeof claims[ACTING_KEY_CLAIM] === 'string' &&
      SHA256_HEX.test(claims[ACTING_KEY_CLAIM] as string);
    if (!ok) throw new AccessTokenError('claims');
    const policy = claims.federation_policy_id;
    return { keyHash: claims[ACTING_KEY_CLAIM] as string, federationPolicyId: typeof policy === 'string' ? policy : null };
  }

  private async keyFor(kid: string): Promise<CryptoKey | Uint8Array> {
    const now = this.options.clock.now().getTime();
    const age = now - this.loadedAt;
    if (age >= this.maxKeyAgeMs || (!this.keys.has(kid) && age >= this.unknownKidRefreshMs)) await this.reload();
    const key = this.keys.get(kid);
    if (!key) throw new AccessTokenError('unknown_kid');
    return key;
  }

  /** One reload at a time; concurrent verifications share it. */
  private reload(): Promise<void> {
    this.loading ??= (async () => {
      const now = this.options.clock.now();
      const records = await this.options.signingKeys.list();
      const keys = new Map<string, Promise<CryptoKey | Uint8Array>>();
      // Exactly the keys the JWKS publishes: active ones, and retired ones while their tokens live.
      for (const jwk of publishedKeys(records, now, this.options.maxTokenLifetimeSeconds).keys) {
        keys.set(jwk.kid!, importJWK(jwk as JWK, 'ES256'));
      }
      this.keys = keys;
      this.loadedAt = now.getTime();
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }
}

function decodeHeader(token: string): Record<string, unknown> {
  const [encoded] = token.split('.');
  try {
    const header = JSON.parse(Buffer.from(encoded ?? '', 'base64url').toString('utf8'));
    if (typeof header === 'object' && header !== null && !Array.isArray(header)) return header as Record<string, unknown>;
  } catch {
    // Falls through to the refusal below.
  }
  throw new AccessTokenError('malformed');
}

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
