/**
 * One encoding per public key. A JWK's key members are base64url byte strings, and a decoder
 * forgives what RFC 7518 does not: a 33-byte EC coordinate with a leading zero, an RSA modulus
 * with leading zero bytes, padding, or stray bits in the last character all decode to the same
 * key. Each would give one key several RFC 7638 thumbprints (so several `cnf.jkt` values, several
 * replay records for one proof key) and several spellings in a key set. Keys from DPoP proofs and
 * identity providers' key sets, inline or fetched, are admitted in the one encoding only.
 */

/** RFC 7518 §6.2.1.2-3 and RFC 8037 §2: the exact byte length of a coordinate, by curve. */
const COORDINATE_BYTES: Readonly<Record<string, number>> = { 'P-256': 32, 'P-384': 48, 'P-521': 66, Ed25519: 32, Ed448: 57, X25519: 32, X448: 56 };

/** The key members, by key type, that hold a number or a coordinate. */
const KEY_MEMBERS: Readonly<Record<string, readonly string[]>> = { EC: ['x', 'y'], OKP: ['x'], RSA: ['n', 'e'] };

/**
 * Why the public key members of `jwk` are not in their one encoding (RFC 7518 §6.2.1.2,
 * §6.2.1.3, §6.3.1.1; RFC 8037 §2), or null when they are. A key type or curve it does not
 * know is for the caller to refuse.
 */
export function keyEncodingProblem(jwk: Readonly<Record<string, unknown>>): string | null {
  const members = KEY_MEMBERS[String(jwk.kty)] ?? [];
  for (const name of members) {
    const value = jwk[name];
    if (typeof value !== 'string' || value === '') return `needs the member ${name}`;
    const bytes = canonicalBase64url(value);
    if (bytes === null) return `has ${name} in another form than unpadded base64url without stray bits`;
    if (jwk.kty === 'RSA') {
      if (bytes[0] === 0) return `has ${name} with a leading zero byte: RFC 7518 §6.3.1 wants the shortest encoding`;
      continue;
    }
    const length = COORDINATE_BYTES[String(jwk.crv)];
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
