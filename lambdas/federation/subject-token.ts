import { createPublicKey, verify, type JsonWebKeyInput, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

/**
 * The subject token as a JWS (RFC 7515 compact serialization): decoding without trust, and
 * signature verification with a key whose algorithm is fixed by the key itself (RFC 8725
 * §3.1), never by the token's header alone.
 */

export type SubjectTokenAlgorithm = 'ES256' | 'RS256';

/** SPEC 4.3 rule 1. */
export const ACCEPTED_ALGORITHMS: readonly SubjectTokenAlgorithm[] = ['ES256', 'RS256'];
export const MIN_RSA_BITS = 2048;

export interface DecodedToken {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** The bytes the signature covers: the first two segments as sent. */
  signingInput: string;
  signature: Buffer;
}

const SEGMENT = /^[A-Za-z0-9_-]*$/;

/** Decodes header and payload without trusting either; a problem string when it is not a JWS of a JSON object. */
export function decodeUnverified(token: string): DecodedToken | { problem: string } {
  const parts = token.split('.');
  if (parts.length !== 3) return { problem: `a JWS has 3 dot-separated parts, this token has ${parts.length}` };
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  if (!parts.every((part) => SEGMENT.test(part))) return { problem: 'a part is not base64url' };
  const header = parseJsonObject(headerPart);
  if (!header) return { problem: 'the header is not a base64url-encoded JSON object' };
  const payload = parseJsonObject(payloadPart);
  if (!payload) return { problem: 'the payload is not a base64url-encoded JSON object (an unencoded or encrypted payload is not accepted)' };
  return { header, payload, signingInput: `${headerPart}.${payloadPart}`, signature: Buffer.from(signaturePart, 'base64url') };
}

function parseJsonObject(part: string): Record<string, unknown> | null {
  try {
    // A null-prototype copy: a `__proto__` member stays a plain member.
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    return Object.assign(Object.create(null), value) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** A key the exchange may verify with, and the one algorithm it verifies. */
export interface VerificationKey {
  kid: string | null;
  alg: SubjectTokenAlgorithm;
  key: KeyObject;
}

/**
 * Imported keys by their published members: a key set is re-read (inline sets with every
 * policy read), but importing a key costs as much as verifying with it.
 */
const imported = new Map<string, VerificationKey | { problem: string }>();
const MAX_IMPORTED = 1000;

/**
 * The algorithm a published key verifies, taken from the key: an EC P-256 key verifies ES256
 * and an RSA key of at least 2048 bits RS256; a key's `alg`, `use` and `key_ops`, when
 * present, must agree. Anything else is refused with the reason.
 */
export function toVerificationKey(jwk: JWK): VerificationKey | { problem: string } {
  const cacheKey = JSON.stringify([jwk.kty, jwk.crv, jwk.x, jwk.y, jwk.n, jwk.e, jwk.kid, jwk.alg, jwk.use, jwk.key_ops]);
  const cached = imported.get(cacheKey);
  if (cached) return cached;
  const result = importKey(jwk);
  if (imported.size >= MAX_IMPORTED) imported.delete(imported.keys().next().value!);
  imported.set(cacheKey, result);
  return result;
}

function importKey(jwk: JWK): VerificationKey | { problem: string } {
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
  let key: KeyObject;
  try {
    const members =
      alg === 'ES256' ? { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y } : { kty: 'RSA', n: jwk.n, e: jwk.e };
    key = createPublicKey({ key: members as JsonWebKeyInput['key'], format: 'jwk' });
  } catch {
    return { problem: `${name} is not a valid ${alg === 'ES256' ? 'EC P-256' : 'RSA'} public key` };
  }
  if (alg === 'RS256') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) return { problem: `${name} is RSA of ${bits} bits; at least ${MIN_RSA_BITS} are required` };
  }
  return { kid: typeof jwk.kid === 'string' ? jwk.kid : null, alg, key };
}

/** RFC 7518 §3.3 and §3.4: RS256 is RSASSA-PKCS1-v1_5 with SHA-256; ES256 is r||s, 64 bytes. */
export function verifySignature(token: DecodedToken, key: VerificationKey): boolean {
  const expectedLength = key.alg === 'ES256' ? 64 : Math.ceil((key.key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  if (token.signature.length !== expectedLength) return false;
  try {
    return verify(
      'sha256',
      Buffer.from(token.signingInput, 'ascii'),
      key.alg === 'ES256' ? { key: key.key, dsaEncoding: 'ieee-p1363' } : key.key,
      token.signature,
    );
  } catch {
    return false;
  }
}
