import type { JWK } from 'jose';

/**
 * What the service admits as a public key to verify with, the same for DPoP proof keys
 * (dpop-proof.ts) and identity providers' keys (lambdas/federation/: a key set when it is
 * saved, each key before it verifies a subject token): the members of a public key and none of
 * a private one, one encoding per key, and the RSA bounds. Each caller adds what its protocol
 * allows (algorithms, other members) and words the refusal for its reader.
 *
 * One encoding per public key: a base64url decoder forgives what RFC 7518 does not (a 33-byte EC
 * coordinate with a leading zero, an RSA modulus with leading zero bytes, padding, stray bits in
 * the last character), so one key would have several RFC 7638 thumbprints (several `cnf.jkt`
 * values, several replay records for one proof key) and several spellings in a key set.
 */

/** The members that define a public key, by type (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2). */
const PUBLIC_JWK_MEMBERS: Readonly<Record<string, readonly string[]>> = { EC: ['kty', 'crv', 'x', 'y'], RSA: ['kty', 'n', 'e'], OKP: ['kty', 'crv', 'x'] };

/** JWK members that only a private or symmetric key has (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2). */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** The members that define a public key of type `kty`; none for a type the service does not know. */
export function definingMembers(kty: unknown): readonly string[] {
  return Object.hasOwn(PUBLIC_JWK_MEMBERS, String(kty)) ? PUBLIC_JWK_MEMBERS[String(kty)]! : [];
}

/** The members of `jwk` that define its public key, and no other, so nothing else reaches an import. */
export function publicMembersOf(jwk: Readonly<Record<string, unknown>>): JWK {
  return Object.fromEntries(definingMembers(jwk.kty).filter((name) => jwk[name] !== undefined).map((name) => [name, jwk[name]]));
}

/** RFC 7518 §6.2.1.2-3 and RFC 8037 §2: the exact byte length of a coordinate, by curve. */
const COORDINATE_BYTES: Readonly<Record<string, number>> = { 'P-256': 32, 'P-384': 48, 'P-521': 66, Ed25519: 32, Ed448: 57, X25519: 32, X448: 56 };

/**
 * Why the public key members of `jwk` are not in their one encoding (RFC 7518 §6.2.1.2,
 * §6.2.1.3, §6.3.1.1; RFC 8037 §2), or null when they are. A key type or curve it does not
 * know is for the caller to refuse.
 */
export function keyEncodingProblem(jwk: Readonly<Record<string, unknown>>): string | null {
  // The members that hold a number or a coordinate: all but the type and the curve's name.
  for (const name of definingMembers(jwk.kty).filter((member) => member !== 'kty' && member !== 'crv')) {
    const value = jwk[name];
    if (typeof value !== 'string' || value === '') return `needs the member ${name}`;
    const bytes = canonicalBase64url(value);
    if (bytes === null) return `has ${name} in another form than unpadded base64url without stray bits`;
    if (jwk.kty === 'RSA') {
      if (bytes[0] === 0) return `has ${name} with a leading zero byte: RFC 7518 §6.3.1 wants the shortest encoding`;
      continue;
    }
    const length = Object.hasOwn(COORDINATE_BYTES, String(jwk.crv)) ? COORDINATE_BYTES[String(jwk.crv)] : undefined;
    if (length !== undefined && bytes.length !== length) {
      return `has ${name} of ${bytes.length} bytes: a ${String(jwk.crv)} coordinate is exactly ${length} bytes (RFC 7518 §6.2.1.2)`;
    }
  }
  return null;
}

/** The bytes of a base64url string written the one way base64url writes them, or null. */
function canonicalBase64url(value: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]+$/.test(value)) return null;
  const bytes = Buffer.from(value, 'base64url');
  return bytes.toString('base64url') === value ? bytes : null;
}

/** docs/reference.md#subject-tokens rule 1: the shortest RSA modulus, in bits, verified with, from identity providers and in DPoP proofs alike. */
export const MIN_RSA_BITS = 2048;
/** The longest RSA modulus, in bits, verified with (the same rule). */
export const MAX_RSA_BITS = 8192;
/**
 * The one RSA public exponent admitted, 65537 (base64url `AQAB`), which every major provider
 * publishes: verification costs grow with the exponent, and a key with a 3,071-bit exponent
 * makes one verification take milliseconds.
 */
export const RSA_PUBLIC_EXPONENT = 'AQAB';

/** Why an RSA key is not admitted: its public exponent (as sent), or its modulus length in bits. */
export type RsaKeyProblem = { exponent: string } | { bits: number };

/**
 * The one RSA admission: the exponent {@link RSA_PUBLIC_EXPONENT} and a modulus of
 * {@link MIN_RSA_BITS} to {@link MAX_RSA_BITS} bits, or what is wrong, for the caller to word.
 * For a key in its one encoding ({@link keyEncodingProblem} first): the modulus is measured on
 * `n` itself, as Web Crypto's `modulusLength` would be, so a key is refused before any import.
 */
export function rsaKeyProblem(jwk: Readonly<Record<string, unknown>>): RsaKeyProblem | null {
  if (jwk.e !== RSA_PUBLIC_EXPONENT) return { exponent: String(jwk.e) };
  const modulus = Buffer.from(String(jwk.n), 'base64url');
  const first = modulus.findIndex((byte) => byte !== 0);
  const bits = first === -1 ? 0 : (modulus.length - first - 1) * 8 + (32 - Math.clz32(modulus[first]!));
  return bits < MIN_RSA_BITS || bits > MAX_RSA_BITS ? { bits } : null;
}
