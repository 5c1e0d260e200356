import { errors } from 'jose';
import type { TokenRefusalReason } from './token-refusal';

/**
 * The one boundary where jose's verification errors become the service's refusal reasons
 * (one translation of library errors, at one boundary), for subject tokens and access tokens alike. jose's error `code`s are its
 * stable interface (its classes say so: "Stable code identifying the error class"), so the
 * translation reads the code, and for a claim failure the `claim` and `reason` jose reports;
 * never a message.
 *
 * Returns null for anything that is not a jose error: a programming error or an
 * infrastructure failure, which the caller rethrows rather than calls a refusal.
 */
export function refusalReasonFor(error: unknown): TokenRefusalReason | null {
  if (!(error instanceof errors.JOSEError)) return null;
  switch (error.code) {
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    // The header `alg` is not one of the pinned `algorithms` (docs/reference.md#subject-tokens rule 1, docs/reference.md#scopes-and-access rule 5).
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'unsupported_alg';
    // A published key that cannot verify this algorithm, or a key set jose cannot use.
    case 'ERR_JWK_INVALID':
    case 'ERR_JWKS_INVALID':
      return 'unsupported_alg';
    // No key of the set answers the token's `kid` and `alg`; several do and the caller did
    // not try them (the token does not say which key it was signed with).
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'unknown_kid';
    case 'ERR_JWKS_TIMEOUT':
      return 'keys_unavailable';
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return claimRefusal(error as errors.JWTClaimValidationFailed);
    // Not a compact JWS, an undecodable part, a malformed or unprocessed `crit` (RFC 7515
    // §4.1.11: an extension the recipient does not understand makes the JWS invalid), a
    // claims set that is not a JSON object; anything else jose refuses to process.
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
    default:
      return 'malformed_token';
  }
}

/** `jwtVerify`'s claim and header checks, by the claim jose names. */
function claimRefusal({ claim, reason }: errors.JWTClaimValidationFailed): TokenRefusalReason {
  // A claim of the wrong JSON type (`"exp": "soon"`) is a malformed token, whichever claim.
  if (reason === 'invalid') return 'malformed_token';
  switch (claim) {
    case 'typ':
      return 'token_type_refused';
    case 'iss':
      return 'iss_mismatch';
    case 'aud':
      return 'aud_mismatch';
    case 'sub':
      return 'sub_mismatch';
    // docs/reference.md#subject-tokens rule 2: a token without `exp` is refused as expired.
    case 'exp':
      return 'expired';
    case 'nbf':
    case 'iat':
      return reason === 'missing' ? 'malformed_token' : 'not_yet_valid';
    default:
      return 'malformed_token';
  }
}
