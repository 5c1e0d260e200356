import { createHash } from 'node:crypto';
import { decodeProtectedHeader, EmbeddedJWK, jwtVerify, type CryptoKey, type JWK, type JWTVerifyGetKey } from 'jose';
import { DPOP_SIGNING_ALGS, MAX_DPOP_PROOF_BYTES } from './dpop-wire';
import { MAX_RSA_BITS, MIN_RSA_BITS, PRIVATE_JWK_MEMBERS, definingMembers, keyEncodingProblem, publicMembersOf, rsaKeyProblem } from './key-admission';
import { normalisedTargetUri } from './target-uri';
import { CLOCK_LEEWAY_SECONDS } from './token-time-rules';

/**
 * DPoP proofs (RFC 9449): a JWT the client signs with its own key for one HTTP request. The
 * token endpoint binds the access token it issues to the proof's key (`cnf.jkt`); every
 * protected route then takes that token only with a fresh proof by the same key, so a token
 * that leaks without its key is useless.
 */

/** RFC 9449 §4.2: the media type of a proof, in its `typ` header. */
export const DPOP_PROOF_TYP = 'dpop+jwt';

/**
 * A proof is accepted for this long after its `iat` (RFC 9449 §11.1 leaves the window to the
 * server), and up to {@link CLOCK_LEEWAY_SECONDS} before it. Its `jti` is remembered for the
 * whole window, so within it a proof is good exactly once.
 */
export const DPOP_PROOF_WINDOW_SECONDS = 300;

/** The longest `jti` a proof may carry (clients send 22 to 43 characters). */
export const MAX_DPOP_JTI_LENGTH = 256;
/** The longest `htu` a proof may carry. */
const MAX_HTU_LENGTH = 2048;

/** Why a proof was refused: the description says which check failed (RFC 9449 `invalid_dpop_proof`). */
export class DpopProofError extends Error {
  constructor(readonly description: string) {
    super(description);
    this.name = 'DpopProofError';
  }
}

/** The request a proof must be for. */
export interface ProofContext {
  /** The request's HTTP method, exactly as received. */
  method: string;
  /** The URLs the request may have been sent to (the API base URL's form, the stage URL's form). */
  urls: readonly string[];
  /** On a protected route: the access token the proof must name in `ath` (RFC 9449 §4.3 step 12). */
  accessToken?: string;
  now: Date;
}

/** A proof that passed every check but replay: its key's thumbprint, and what its replay record needs. */
export interface VerifiedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key: the `cnf.jkt` of a bound token. */
  jkt: string;
  /** The replay record's key: the proof's `jti` is unique per key (RFC 9449 §11.1). */
  replayKey: string;
  /** Epoch seconds at which the proof stops being accepted, so its replay record may go. */
  acceptedUntil: number;
}

/**
 * Every check of RFC 9449 §4.3 but the replay one, which needs the store
 * ({@link ProofReplayStore}) and is the caller's: exactly one proof; a JWT with `typ`
 * `dpop+jwt`, an asymmetric `alg` of {@link DPOP_SIGNING_ALGS} and a public `jwk`; its
 * signature by that key; `jti`, `htm`, `htu` and `iat` present, `htm` and `htu` the request's,
 * `iat` within the window; and on a protected route `ath`, the hash of the token it comes with.
 * Server nonces are not used (docs/workload-identity.md says why); a proof's `nonce` is ignored.
 */
export async function verifyDpopProof(proofs: readonly string[], context: ProofContext): Promise<VerifiedProof> {
  if (proofs.length !== 1) throw new DpopProofError(proofs.length === 0 ? 'A DPoP proof is required' : 'Send exactly one DPoP header');
  const proof = proofs[0]!.trim();
  if (Buffer.byteLength(proof, 'utf8') > MAX_DPOP_PROOF_BYTES) throw new DpopProofError(`The DPoP proof is larger than ${MAX_DPOP_PROOF_BYTES} bytes`);
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw new DpopProofError('The DPoP proof is not a signed JWT');

  let header;
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw new DpopProofError('The DPoP proof header is not a JSON object');
  }
  if (header.typ !== DPOP_PROOF_TYP) throw new DpopProofError(`The DPoP proof typ must be ${DPOP_PROOF_TYP}`);
  if (typeof header.alg !== 'string' || !(DPOP_SIGNING_ALGS as readonly string[]).includes(header.alg)) {
    throw new DpopProofError(`The DPoP proof alg must be one of ${DPOP_SIGNING_ALGS.join(', ')}`);
  }
  const jwk = proofKey(header.jwk, header.alg);
  const jkt = jwkThumbprint(jwk);

  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(proof, rememberedEmbeddedKey(jwk, jkt), { algorithms: [header.alg], typ: DPOP_PROOF_TYP }));
  } catch (error) {
    throw new DpopProofError(signatureRefusal(error));
  }

  const { jti, htm, htu, iat } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > MAX_DPOP_JTI_LENGTH) {
    throw new DpopProofError(`The DPoP proof needs a jti of 1 to ${MAX_DPOP_JTI_LENGTH} characters`);
  }
  if (htm !== context.method) throw new DpopProofError(`The DPoP proof htm must be the request method, ${context.method}`);
  if (typeof htu !== 'string' || htu.length > MAX_HTU_LENGTH || !context.urls.some((url) => sameTarget(htu, url))) {
    throw new DpopProofError(`The DPoP proof htu must be the request URL, ${withoutQuery(context.urls[0] ?? '')}`);
  }
  const nowSeconds = context.now.getTime() / 1000;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new DpopProofError('The DPoP proof needs a numeric iat');
  if (iat > nowSeconds + CLOCK_LEEWAY_SECONDS) throw new DpopProofError('The DPoP proof iat is in the future');
  if (iat < nowSeconds - DPOP_PROOF_WINDOW_SECONDS) throw new DpopProofError(`The DPoP proof is older than ${DPOP_PROOF_WINDOW_SECONDS} seconds`);
  if (context.accessToken !== undefined && payload.ath !== accessTokenHash(context.accessToken)) {
    throw new DpopProofError('The DPoP proof ath must be the hash of the access token it is sent with');
  }

  return {
    jkt,
    replayKey: createHash('sha256').update(`${jkt}.${jti}`, 'utf8').digest('base64url'),
    acceptedUntil: Math.ceil(iat) + DPOP_PROOF_WINDOW_SECONDS + 1,
  };
}

/** RFC 9449 §4.2 `ath`: the base64url SHA-256 of the access token's ASCII. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

/**
 * Members about a public key (RFC 7517 §4, and Web Crypto's `ext`) that a client's exported key
 * may carry: `alg` and `use` must agree with the proof, `key_ops` may name only `verify`, and
 * `kid` and `ext` are ignored.
 */
const DESCRIPTIVE_MEMBERS: ReadonlySet<string> = new Set(['alg', 'use', 'kid', 'key_ops', 'ext']);

/**
 * The service's part of RFC 9449 §4.3 step 7: the `jwk` header is an EC, RSA or OKP public key
 * and nothing else (no private member, no certificate or key-set reference such as `x5c` or
 * `jku`, no own `__proto__`), admitted as every key the service verifies with is
 * (key-admission.ts: one encoding, the RSA bounds). Returns its public members, and `alg` and
 * `use`, for jose's EmbeddedJWK to import.
 *
 * EmbeddedJWK checks `use` and `alg` too, but only when it imports, which a remembered key skips
 * (rememberedEmbeddedKey): they are checked here, on every proof, and refused in words that name them.
 */
function proofKey(value: unknown, alg: string): JWK {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DpopProofError('The DPoP proof header needs the public key as jwk');
  const jwk = value as Record<string, unknown>;
  if (PRIVATE_JWK_MEMBERS.some((member) => Object.hasOwn(jwk, member))) throw new DpopProofError('The DPoP proof jwk must be a public key, without private members');
  const publicMembers = definingMembers(jwk.kty);
  if (publicMembers.length === 0) throw new DpopProofError('The DPoP proof jwk must be an EC, RSA or OKP public key');
  const stray = Object.keys(jwk).find((name) => !publicMembers.includes(name) && !DESCRIPTIVE_MEMBERS.has(name));
  if (stray !== undefined) throw new DpopProofError(`The DPoP proof jwk may hold only the members of an ${jwk.kty} public key, not ${stray.slice(0, 40)}`);
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.every((operation) => operation === 'verify'))) {
    throw new DpopProofError('The DPoP proof jwk key_ops may name only verify: it is a public key');
  }
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new DpopProofError('The DPoP proof jwk use must be sig when present');
  if (jwk.alg !== undefined && jwk.alg !== alg) throw new DpopProofError(`The DPoP proof jwk alg must be ${alg} when present`);
  const problem = keyEncodingProblem(jwk);
  if (problem !== null) throw new DpopProofError(`The DPoP proof jwk ${problem}`);
  const rsa = jwk.kty === 'RSA' ? rsaKeyProblem(jwk) : null;
  if (rsa !== null) {
    throw new DpopProofError('exponent' in rsa ? 'The DPoP proof RSA key must have the public exponent 65537' : `The DPoP proof RSA key must have ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits`);
  }
  return { ...publicMembersOf(jwk), ...(jwk.alg === undefined ? {} : { alg }), ...(jwk.use === undefined ? {} : { use: 'sig' }) };
}

/**
 * RFC 7638: the SHA-256 of the key's required members, in lexical order, without whitespace.
 * Computed here rather than by jose's (asynchronous, Web Crypto) digest: it runs per request.
 */
function jwkThumbprint(jwk: JWK): string {
  const members = jwk.kty === 'RSA' ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  for (const [name, value] of Object.entries(members)) {
    if (typeof value !== 'string' || value === '') throw new DpopProofError(`The DPoP proof jwk needs the member ${name}`);
  }
  return createHash('sha256').update(JSON.stringify(members), 'utf8').digest('base64url');
}

/**
 * Imported public keys by thumbprint and algorithm: a workload signs every proof with one key,
 * and importing it again for each request would cost more than verifying the proof. The
 * thumbprint covers every member that defines the public key, so a hit is the same key.
 */
const importedKeys = new Map<string, Promise<CryptoKey>>();
/** Far more proof keys than one container sees at once; the oldest is forgotten first. */
const IMPORTED_KEYS_KEPT = 1000;

/**
 * The proof's key for jose to verify with: jose's EmbeddedJWK (the header's `jwk` an object,
 * its `use` and `alg` the proof's when present, imported as a public key), handed the admitted
 * members only (proofKey), and remembered by thumbprint and algorithm.
 */
function rememberedEmbeddedKey(jwk: JWK, jkt: string): JWTVerifyGetKey {
  return (header) => {
    const id = `${header.alg}.${jkt}`;
    let key = importedKeys.get(id);
    if (key === undefined) {
      key = EmbeddedJWK({ ...header, jwk });
      // A key that does not import is not remembered.
      key.catch(() => importedKeys.delete(id));
      if (importedKeys.size >= IMPORTED_KEYS_KEPT) importedKeys.delete(importedKeys.keys().next().value!);
      importedKeys.set(id, key);
    }
    return key;
  };
}

/** jose's refusal, in the words of the check that failed. */
function signatureRefusal(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return 'The DPoP proof signature does not verify with its jwk';
  if (code === 'ERR_JWT_EXPIRED' || code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') return `The DPoP proof claims are not valid: ${(error as Error).message}`;
  if (code === 'ERR_JWT_INVALID') return 'The DPoP proof payload is not a JSON object';
  return `The DPoP proof is not valid: ${(error as Error).message}`;
}

/**
 * RFC 9449 §4.3 step 9: `htu` names the request's URL, ignoring query and fragment, after
 * normalisation on which RFC 3986 and the WHATWG URL Standard agree (target-uri.ts): a spelling
 * only one of them reads is no URL at all.
 */
function sameTarget(htu: string, url: string): boolean {
  const claimed = normalisedTargetUri(htu);
  return claimed !== null && claimed === normalisedTargetUri(url);
}

function withoutQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/**
 * Remembers the proofs seen within their window (RFC 9449 §11.1), shared by every function
 * container: a proof's replay key is claimed once, by one conditional write.
 */
export interface ProofReplayStore {
  /** Answers false when `replayKey` was claimed before and its record has not expired. */
  claim(replayKey: string, acceptedUntil: number, now: Date): Promise<boolean>;
}
