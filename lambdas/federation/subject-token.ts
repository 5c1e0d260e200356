import { decodeJwt, decodeProtectedHeader, importJWK, type CryptoKey, type JWK } from 'jose';
import { MAX_RSA_BITS, MIN_RSA_BITS, RSA_PUBLIC_EXPONENT, keyEncodingProblem, publicMembersOf, rsaKeyProblem } from '../credentials/key-admission';

/**
 * What the service decides about a subject token before jose verifies it: decoding without
 * trust (for the limits, docs/reference.md#limits, checked before any rule runs), and which published keys are
 * admitted to verify, each for the one algorithm its type fixes (RFC 8725 §3.1), never the
 * token's header alone. Verification itself is jose's (see subject-token-verification.ts).
 */

/** The algorithms a subject token may be signed with: ES256 (EC P-256) or RS256. */
export type SubjectTokenAlgorithm = 'ES256' | 'RS256';

/** docs/reference.md#subject-tokens rule 1. */
export const ACCEPTED_ALGORITHMS: readonly SubjectTokenAlgorithm[] = ['ES256', 'RS256'];
/**
 * Keys a token that names no `kid` is tried against, at most: each try is one verification,
 * so a set of many keys cannot make one unsigned token cost many.
 */
export const MAX_KIDLESS_CANDIDATES = 4;

/** A token's header and payload, decoded without trust. */
export interface DecodedToken {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

const SEGMENT = /^[A-Za-z0-9_-]*$/;

/** Decodes header and payload (jose) without trusting either; a problem string when it is not a JWS of a JSON object. */
export function decodeUnverified(token: string): DecodedToken | { problem: string } {
  const parts = token.split('.');
  if (parts.length !== 3) return { problem: `a JWS has 3 dot-separated parts, this token has ${parts.length}` };
  if (!parts.every((part) => SEGMENT.test(part))) return { problem: 'a part is not base64url' };
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token) as Record<string, unknown>;
  } catch {
    return { problem: 'the header is not a base64url-encoded JSON object' };
  }
  try {
    return { header, payload: decodeJwt(token) };
  } catch {
    return { problem: 'the payload is not a base64url-encoded JSON object (an unencoded or encrypted payload is not accepted)' };
  }
}

/** A published key admitted to verify, imported for the one algorithm it verifies. */
export interface AdmittedKey {
  kid: string | null;
  alg: SubjectTokenAlgorithm;
  key: CryptoKey;
}

/**
 * Admitted keys by their published members: a key set is re-read (inline sets with every
 * policy read), but importing a key costs as much as verifying with it.
 */
const admitted = new Map<string, Promise<AdmittedKey | { problem: string }>>();
const MAX_ADMITTED = 1000;

/**
 * The service's key admission (lambdas/credentials/key-admission.ts, as for DPoP proof keys): an
 * EC P-256 key verifies ES256 and an RSA key of {@link MIN_RSA_BITS} to {@link MAX_RSA_BITS} bits
 * with the exponent 65537 RS256, each in its one encoding; a key's `alg`, `use` and `key_ops`,
 * when present, must agree. Anything else is refused with the reason, for the admin.
 */
export function admitKey(jwk: JWK): Promise<AdmittedKey | { problem: string }> {
  const cacheKey = JSON.stringify([jwk.kty, jwk.crv, jwk.x, jwk.y, jwk.n, jwk.e, jwk.kid, jwk.alg, jwk.use, jwk.key_ops]);
  const cached = admitted.get(cacheKey);
  if (cached) return cached;
  const result = importAdmitted(jwk);
  if (admitted.size >= MAX_ADMITTED) admitted.delete(admitted.keys().next().value!);
  admitted.set(cacheKey, result);
  return result;
}

async function importAdmitted(jwk: JWK): Promise<AdmittedKey | { problem: string }> {
  const name = typeof jwk.kid === 'string' ? `key ${JSON.stringify(jwk.kid.slice(0, 100))}` : 'a key without kid';
  let alg: SubjectTokenAlgorithm;
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') alg = 'ES256';
  else if (jwk.kty === 'RSA') alg = 'RS256';
  else return { problem: `${name} is ${String(jwk.kty)}${jwk.crv ? ` ${String(jwk.crv)}` : ''}; only EC P-256 (ES256) and RSA (RS256) keys are accepted` };
  if (jwk.alg !== undefined && jwk.alg !== alg) return { problem: `${name} declares alg ${String(jwk.alg)}; it may only verify ${alg}` };
  if (jwk.use !== undefined && jwk.use !== 'sig') return { problem: `${name} is published for use ${String(jwk.use)}, not sig` };
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) {
    return { problem: `${name} does not list verify in key_ops` };
  }
  const encoding = keyEncodingProblem(jwk as Record<string, unknown>);
  if (encoding !== null) return { problem: `${name} ${encoding}` };
  const rsa = alg === 'RS256' ? rsaKeyProblem(jwk as Record<string, unknown>) : null;
  if (rsa !== null && 'exponent' in rsa) {
    return { problem: `${name} has the RSA public exponent ${JSON.stringify(rsa.exponent.slice(0, 20))}; only 65537 ("${RSA_PUBLIC_EXPONENT}") is accepted` };
  }
  if (rsa !== null) return { problem: `${name} is RSA of ${rsa.bits} bits; from ${MIN_RSA_BITS} to ${MAX_RSA_BITS} are accepted` };
  try {
    // The public members only, so nothing else the publisher sent reaches the import.
    const key = (await importJWK(publicMembersOf(jwk as Record<string, unknown>), alg)) as CryptoKey;
    return { kid: typeof jwk.kid === 'string' ? jwk.kid : null, alg, key };
  } catch {
    return { problem: `${name} is not a valid ${alg === 'ES256' ? 'EC P-256' : 'RSA'} public key` };
  }
}
