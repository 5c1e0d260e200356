import { compactVerify, errors, type CompactJWSHeaderParameters, type CompactVerifyGetKey, type CryptoKey, type VerifyOptions } from 'jose';
import type { Clock } from '../clock';
import { Refusal } from './exchange-types';
import { MAX_KEYS, type IssuerKeySource } from './issuer-keys';
import { refusalReasonFor } from '../credentials/jose-refusal';
import { ACCEPTED_ALGORITHMS, MAX_KIDLESS_CANDIDATES, admitKey, type AdmittedKey, type SubjectTokenAlgorithm } from './subject-token';
import { checkValidityWindow } from '../credentials/token-time-rules';
import type { FederationIssuer } from './types';

/**
 * The exchange's `signature` step (docs/reference.md#subject-tokens rules 1-2): jose verifies the JWS, with the
 * algorithms pinned, against a key the service chose from the policy issuer's published set;
 * then the service's time rules apply. `compactVerify`, not `jwtVerify`: every other claim of
 * a subject token is a step of its own for the policy tester, and jose's single clock
 * tolerance does not fit the service's time rules (lambdas/credentials/token-time-rules.ts).
 *
 * Order, as jose runs it: the compact form and `crit` (RFC 7515 §4.1.11: every extension
 * but `b64` is refused as unrecognized), then `alg` against {@link ACCEPTED_ALGORITHMS}; then
 * the key resolver below, where the service's header rules and key choice run before any
 * key set is read; then the signature.
 */

const VERIFY_OPTIONS: VerifyOptions = { algorithms: [...ACCEPTED_ALGORITHMS] };

/** A subject token that passed the signature step: its payload, and the step's detail for the admin. */
export interface VerifiedSubjectToken {
  /** The verified payload. */
  claims: Record<string, unknown>;
  detail: string;
}

/** Where the issuer's keys come from, and the clock the time rules read. */
export interface SubjectTokenVerificationDeps {
  issuerKeys: IssuerKeySource;
  clock: Clock;
}

/** One verification of a subject token with one admitted key, exactly as the exchange runs it. */
export function verifySubjectJws(token: string, key: CryptoKey): Promise<{ payload: Uint8Array }> {
  return compactVerify(token, key, VERIFY_OPTIONS);
}

/**
 * Verifies `token` with the keys of `issuer`. `header` is the token's header as decoded
 * without trust, for the admin-facing detail of a refusal jose raises before any key is chosen.
 */
export async function verifySubjectToken(
  deps: SubjectTokenVerificationDeps,
  token: string,
  header: Record<string, unknown>,
  issuer: FederationIssuer,
): Promise<VerifiedSubjectToken | Refusal> {
  let selection: KeySelection | undefined;
  let verified: { payload: Uint8Array; key: CryptoKey };
  try {
    verified = await verifyWithCandidates(token, async (protectedHeader) => {
      selection = await selectKeys(deps.issuerKeys, issuer, protectedHeader);
      return offer(selection.keys);
    });
  } catch (error) {
    if (error instanceof SelectionRefused) return error.refusal;
    const reason = refusalReasonFor(error);
    if (reason === null) throw error;
    return new Refusal(reason, describeJoseRefusal(error as errors.JOSEError, header, selection));
  }
  const claims = parseClaims(verified.payload);
  if (!claims) return new Refusal('malformed_token', 'The verified payload is not a JSON object.');
  const validity = checkValidityWindow(claims, deps.clock.now());
  if (validity instanceof Refusal) return validity;
  const { alg, from, keys } = selection!;
  const kid = keys.find((candidate) => candidate.key === verified.key)?.kid ?? null;
  return { claims, detail: `The ${alg} signature verifies with ${kid === null ? 'a key without kid' : `key ${JSON.stringify(kid)}`} of ${from}. ${validity}` };
}

/**
 * jose's protocol for a key set in which several keys fit a token that names no `kid` (as its
 * `createLocalJWKSet` does it): the resolver throws `JWKSMultipleMatchingKeys`, iterable over
 * the keys, and each is tried until one verifies.
 */
async function verifyWithCandidates(token: string, resolveKey: CompactVerifyGetKey<CryptoKey>): Promise<{ payload: Uint8Array; key: CryptoKey }> {
  try {
    const { payload, key } = await compactVerify(token, resolveKey, VERIFY_OPTIONS);
    return { payload, key };
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const key of error) {
      try {
        return { payload: (await verifySubjectJws(token, key)).payload, key };
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

function offer(keys: readonly AdmittedKey[]): CryptoKey {
  if (keys.length === 1) return keys[0]!.key;
  const several = new errors.JWKSMultipleMatchingKeys();
  several[Symbol.asyncIterator] = async function* () {
    for (const candidate of keys) yield candidate.key;
  };
  throw several;
}

interface KeySelection {
  kid: string | null;
  alg: SubjectTokenAlgorithm;
  /** Where the set came from, for the admin. */
  from: string;
  /** Admitted keys for the token's `alg`: those with its `kid`, or at most {@link MAX_KIDLESS_CANDIDATES} when it names none. */
  keys: AdmittedKey[];
}

/** A refusal of the service's own, carried through jose's key resolution. */
class SelectionRefused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.detail);
  }
}

/**
 * The service's header rules and key choice, run by jose once it has accepted `crit` and
 * `alg`. The key comes from the issuer's set only: `jwk`, `jku`, `x5u` and `x5c` in the
 * header are never read (RFC 8725 §3.10).
 */
async function selectKeys(issuerKeys: IssuerKeySource, issuer: FederationIssuer, header: CompactJWSHeaderParameters): Promise<KeySelection> {
  const refused = headerRefusal(header);
  if (refused) throw new SelectionRefused(refused);
  const alg = header.alg as SubjectTokenAlgorithm;
  const kid = header.kid ?? null;
  const lookup = await issuerKeys.getKeys(issuer, kid);
  if (lookup.status === 'unavailable') {
    throw new SelectionRefused(new Refusal('keys_unavailable', `The issuer's keys cannot be fetched and none are cached: ${lookup.problem}`));
  }
  const { set } = lookup;
  const from = `the key set from ${set.origin}`;
  // A token without kid is tried against at most MAX_KIDLESS_CANDIDATES keys of its alg's key
  // type, so a set of many keys cannot make one token cost many verifications.
  const candidates =
    kid === null
      ? set.keys.filter((key) => key.kty === (alg === 'ES256' ? 'EC' : 'RSA')).slice(0, MAX_KIDLESS_CANDIDATES)
      : set.keys.filter((key) => key.kid === kid).slice(0, MAX_KEYS);
  if (candidates.length === 0) {
    if (kid === null) throw new SelectionRefused(new Refusal('unknown_kid', `The token names no kid and ${from} is empty.`));
    const known = set.keys.map((key) => (typeof key.kid === 'string' ? JSON.stringify(key.kid.slice(0, 100)) : '(no kid)'));
    throw new SelectionRefused(
      new Refusal('unknown_kid', `No key with kid ${JSON.stringify(kid.slice(0, 100))} is in ${from}; it has ${known.length ? known.slice(0, 10).join(', ') : 'no keys'}.`),
    );
  }
  const keys: AdmittedKey[] = [];
  const problems: string[] = [];
  for (const key of await Promise.all(candidates.map(admitKey))) {
    if ('problem' in key) problems.push(key.problem);
    else if (key.alg !== alg) problems.push(`${key.kid === null ? 'a key without kid' : `key ${JSON.stringify(key.kid)}`} verifies ${key.alg}, but the token's header says ${alg}`);
    else keys.push(key);
  }
  if (keys.length === 0) {
    const summary = kid === null ? `no ${alg} key in ${from}` : problems.join('; ');
    throw new SelectionRefused(new Refusal('unsupported_alg', `No key can verify this token: ${summary}.`));
  }
  return { kid, alg, from, keys };
}

/** What the service refuses in a header that jose accepts. */
function headerRefusal(header: CompactJWSHeaderParameters): Refusal | null {
  // RFC 8725 §3.11, RFC 9068 §4: access tokens are never accepted as subject tokens.
  if (typeof header.typ === 'string' && header.typ.toLowerCase().replace(/^application\//, '') === 'at+jwt') {
    return new Refusal('token_type_refused', `The token's header typ is ${JSON.stringify(header.typ)}: access tokens are not accepted as subject tokens.`);
  }
  // jose always processes `b64` (RFC 7797) and cannot be told not to; a JWT's payload is
  // base64url (RFC 7519 §7.2), so the exchange accepts no extension at all, `b64` included.
  if (header.crit !== undefined) return new Refusal('malformed_token', critDetail(header.crit));
  if (header.b64 !== undefined && header.b64 !== true) {
    return new Refusal('malformed_token', 'The token uses an unencoded payload (b64, RFC 7797), which is not accepted.');
  }
  if (header.kid !== undefined && typeof header.kid !== 'string') return new Refusal('malformed_token', "The token's header kid is not a string.");
  return null;
}

/** The admin-facing detail of a refusal jose raised; its reason comes from {@link refusalReasonFor}. */
function describeJoseRefusal(error: errors.JOSEError, header: Record<string, unknown>, selection: KeySelection | undefined): string {
  if (error.code === 'ERR_JOSE_ALG_NOT_ALLOWED') {
    return `The token's header alg is ${JSON.stringify(header.alg ?? null).slice(0, 200)}; only ${ACCEPTED_ALGORITHMS.join(' and ')} are accepted.`;
  }
  if (error.code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' && selection) {
    const { kid, alg, keys, from } = selection;
    const named = kid === null ? `any of the ${keys.length} ${alg} keys` : `key ${JSON.stringify(kid.slice(0, 100))} (${alg})`;
    return `The signature does not verify with ${named} of ${from}.`;
  }
  if (header.crit !== undefined) return critDetail(header.crit);
  return `The token is not a valid JWS: ${error.message}.`;
}

function critDetail(crit: unknown): string {
  return `The token's header marks ${JSON.stringify(crit).slice(0, 200)} as critical; no JWS extension is accepted.`;
}

function parseClaims(payload: Uint8Array): Record<string, unknown> | null {
  try {
    const claims: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
