import type { AccountRecords, AccountStore } from '../accounts/account-store';
import { hashApiKey, isApiKeyFormat } from '../accounts/api-keys';
import type { ApiKeyRecord, Principal } from '../accounts/types';
import type { Clock } from '../clock';
import { ForbiddenError, UnauthenticatedError, type AuthenticationScheme } from '../errors';
import { DpopProofError, type VerifiedProof } from './dpop-proof';

/**
 * Verifies an access token issued by the token exchange and names the API key it acts as.
 * Throws for anything that is not a valid, unexpired token of ours.
 */
export interface AccessTokenVerifier {
  verify(token: string): Promise<VerifiedAccessToken>;
}

/** What a verified access token says: the key it acts as, the policy behind it, the key it is bound to. */
export interface VerifiedAccessToken {
  /** The API key the token acts as. */
  keyHash: string;
  /** The policy that authorized it, for usage attribution only (docs/reference.md#access-tokens: never for authorization). */
  federationPolicyId: string | null;
  /** `cnf.jkt` of a DPoP-bound token (RFC 9449 §6.1): it is good only with a proof by that key. */
  boundKey: string | null;
}

/** The request a DPoP proof must be for. */
export interface ProofRequest {
  method: string;
  /** The request path, as API Gateway gives it (`event.path`). */
  path: string;
  /** The URL API Gateway says the request came in on, where it says one. */
  stageUrl: string | undefined;
  /** The request's `Host` header as sent, where there is a request (the policy tester has none). */
  host: string | undefined;
  /** The access token the proof must name in `ath`; absent at the token endpoint. */
  accessToken?: string;
}

/** RFC 9449 proofs: verified without I/O by {@link check}, then claimed once in the replay store. */
export interface ProofChecker {
  /** Throws a `DpopProofError` naming the failed check. */
  check(proofs: readonly string[], request: ProofRequest): Promise<VerifiedProof>;
  /** False when the proof was seen before: a replay. */
  claim(proof: VerifiedProof): Promise<boolean>;
}

/** A request's `DPoP` proofs and what they must name, as the token endpoint and protected routes read them. */
export interface RequestProofs extends Omit<ProofRequest, 'accessToken'> {
  /** Every `DPoP` header value. */
  proofs: readonly string[];
}

/** What a request presents to be authenticated (lambdas/http/request.ts reads it from the event). */
export interface PresentedCredential extends RequestProofs {
  /** The one `Authorization` value, if any. */
  authorization: string | undefined;
}

/** The account store and clock {@link authenticate} reads with, and the verifiers of tokens and proofs. */
export interface AuthenticationDeps {
  accounts: AccountStore;
  clock: Clock;
  accessTokens?: AccessTokenVerifier;
  /** DPoP-bound access tokens are refused without it. */
  proofs?: ProofChecker;
  /**
   * Where the keys this container has seen live, one per container, made where the function is
   * composed: without it every request reads its key, then the key's organization and workspace.
   */
  placements?: KeyPlacements;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const SCHEME = /^(Bearer|DPoP)[ ]+(\S+)\s*$/i;

/** What kind of credential a request presents, for logs: never the credential itself. */
export type CredentialKind = 'none' | 'api_key' | 'access_token' | 'dpop_access_token' | 'unrecognized';

/**
 * The kind of credential an `Authorization` value carries, judged by its shape alone.
 * @example credentialKind('DPoP eyJh.eyJz.c2ln') // 'dpop_access_token'
 */
export function credentialKind(authorization: string | undefined): CredentialKind {
  if (authorization === undefined || authorization.trim() === '') return 'none';
  const match = SCHEME.exec(authorization);
  if (!match) return 'unrecognized';
  const credential = match[2]!;
  if (match[1]!.toLowerCase() === 'dpop') return JWT_SHAPE.test(credential) ? 'dpop_access_token' : 'unrecognized';
  if (isApiKeyFormat(credential)) return 'api_key';
  return JWT_SHAPE.test(credential) ? 'access_token' : 'unrecognized';
}

/**
 * docs/reference.md#scopes-and-access: one authentication path for every protected route. The key record is read on every
 * request (strongly consistent), so disabling or deleting a key, or the key an access token
 * acts as, takes effect on the next request. With its organization and workspace it takes one
 * round trip once the container has seen the key. A DPoP-bound access token (RFC 9449) is
 * taken only as `Authorization: DPoP` with a fresh proof by its key; the proof's replay record
 * is written beside the key read.
 */
export async function authenticate(request: PresentedCredential, deps: AuthenticationDeps): Promise<Principal> {
  const { authorization } = request;
  if (authorization === undefined || authorization.trim() === '') {
    throw new UnauthenticatedError('missing_credential', 'Missing Authentication header');
  }
  const match = SCHEME.exec(authorization);
  if (!match) throw new UnauthenticatedError('malformed_header', 'Malformed Authorization header: expected "Bearer <API key>"');
  const dpop = match[1]!.toLowerCase() === 'dpop';
  const credential = match[2]!;

  let keyHash: string;
  let kind: Principal['credential'];
  let federationPolicyId: string | null = null;
  let proof: VerifiedProof | undefined;
  if (dpop) {
    ({ keyHash, federationPolicyId, proof } = await verifyBoundToken(credential, request, deps));
    kind = 'access_token';
  } else if (isApiKeyFormat(credential)) {
    keyHash = hashApiKey(credential);
    kind = 'api_key';
  } else if (deps.accessTokens && JWT_SHAPE.test(credential)) {
    const token = await verifiedAccessToken(deps.accessTokens, credential, 'Bearer');
    // RFC 9449 §7.1: a bound token sent as a bearer token is refused; that is the theft DPoP stops.
    if (token.boundKey !== null) {
      throw new UnauthenticatedError('invalid_token', 'This access token is DPoP-bound: send it as "Authorization: DPoP <token>" with a DPoP proof', 'DPoP');
    }
    ({ keyHash, federationPolicyId } = token);
    kind = 'access_token';
  } else {
    throw new UnauthenticatedError('unknown_key', 'Invalid API key');
  }

  const [{ key, organization, workspace }, fresh] = await Promise.all([
    readRecords(deps.accounts, keyHash, deps.placements),
    proof ? deps.proofs!.claim(proof) : true,
  ]);
  if (!fresh) throw new UnauthenticatedError('invalid_dpop_proof', 'The DPoP proof was used before: sign a new proof for every request', 'DPoP');
  if (!key) throw new UnauthenticatedError('unknown_key', kind === 'api_key' ? 'Invalid API key' : 'The API key behind this access token no longer exists');
  if (key.disabled) throw new UnauthenticatedError('disabled_key', 'API key is disabled');
  if (key.expiresAt && Date.parse(key.expiresAt) <= deps.clock.now().getTime()) {
    throw new UnauthenticatedError('expired_key', 'API key has expired');
  }
  if (!organization) throw new UnauthenticatedError('unknown_key', 'Invalid API key');
  return { organization, key, workspace: workspace ?? null, scope: scopeOf(key), credential: kind, federationPolicyId };
}

/**
 * `Authorization: DPoP <token>` (RFC 9449 §7): a bound access token of ours and a proof, by the
 * key the token is bound to, for this request and this token. Refusals carry the DPoP challenge.
 */
async function verifyBoundToken(
  credential: string,
  request: PresentedCredential,
  deps: AuthenticationDeps,
): Promise<{ keyHash: string; federationPolicyId: string | null; proof: VerifiedProof }> {
  if (!deps.accessTokens || !deps.proofs || !JWT_SHAPE.test(credential)) {
    throw new UnauthenticatedError('invalid_token', 'The DPoP scheme takes a DPoP-bound access token', 'DPoP');
  }
  const token = await verifiedAccessToken(deps.accessTokens, credential, 'DPoP');
  if (token.boundKey === null) {
    throw new UnauthenticatedError('invalid_token', 'This access token is not DPoP-bound: send it as "Authorization: Bearer <token>"', 'DPoP');
  }
  let proof: VerifiedProof;
  try {
    proof = await deps.proofs.check(request.proofs, { method: request.method, path: request.path, stageUrl: request.stageUrl, host: request.host, accessToken: credential });
  } catch (error) {
    if (!(error instanceof DpopProofError)) throw error;
    throw new UnauthenticatedError('invalid_dpop_proof', error.description, 'DPoP');
  }
  if (proof.jkt !== token.boundKey) {
    throw new UnauthenticatedError('invalid_dpop_proof', 'The DPoP proof is signed by another key than the one the access token is bound to', 'DPoP');
  }
  return { keyHash: token.keyHash, federationPolicyId: token.federationPolicyId, proof };
}

/** One of our access tokens, verified; a refusal challenges with the scheme it came under. */
async function verifiedAccessToken(accessTokens: AccessTokenVerifier, credential: string, scheme: AuthenticationScheme): Promise<VerifiedAccessToken> {
  try {
    return await accessTokens.verify(credential);
  } catch {
    throw new UnauthenticatedError('invalid_token', 'Invalid or expired access token', scheme);
  }
}

/** Far more keys than one container serves; the oldest is forgotten first. */
export const KEY_PLACEMENT_CACHE_SIZE = 10_000;

/**
 * Where each key seen by this container lives: its organization and workspace, which never
 * change for a key. Knowing them, the key, its organization and its workspace are read in one
 * round trip; the key's own state (disabled, deleted, expired) is still read on every request.
 */
export class KeyPlacements {
  private readonly placed = new Map<string, { organizationId: string; workspaceId: string | null }>();

  /** Where the key was last seen to live. */
  get(keyHash: string): { organizationId: string; workspaceId: string | null } | undefined {
    return this.placed.get(keyHash);
  }

  /** Remembers where the key lives, forgetting the oldest past {@link KEY_PLACEMENT_CACHE_SIZE}. */
  set(keyHash: string, placement: { organizationId: string; workspaceId: string | null }): void {
    if (this.placed.size >= KEY_PLACEMENT_CACHE_SIZE) this.placed.delete(this.placed.keys().next().value!);
    this.placed.set(keyHash, placement);
  }
}

/** The key and, beside it when its placement is known, its organization and workspace. */
async function readRecords(accounts: AccountStore, keyHash: string, placements: KeyPlacements | undefined): Promise<AccountRecords> {
  const known = placements?.get(keyHash);
  const records = await accounts.getRecords({ keyHash, organizationId: known?.organizationId, workspaceId: known?.workspaceId ?? undefined });
  const { key } = records;
  if (!key) return records;
  if (known && known.organizationId === key.organizationId && known.workspaceId === key.workspaceId) return records;
  // First seen here (or placed elsewhere than remembered): one more round trip, remembered.
  placements?.set(keyHash, { organizationId: key.organizationId, workspaceId: key.workspaceId });
  const placed = await accounts.getRecords({ organizationId: key.organizationId, workspaceId: key.workspaceId ?? undefined });
  return { ...placed, key };
}

/** docs/reference.md#scopes-and-access: workspace and personal keys are for inference; management keys for management. */
export function scopeOf(key: ApiKeyRecord): Principal['scope'] {
  return key.kind === 'management' ? 'management' : 'inference';
}

/** docs/reference.md#scopes-and-access: management routes take management credentials; writes need read-write access. */
export function requireManagement(principal: Principal, access: 'read' | 'write'): void {
  if (principal.scope !== 'management') throw new ForbiddenError('Operation reserved for management keys');
  if (access === 'write' && principal.key.accessLevel !== 'read-write') {
    throw new ForbiddenError('This management key is read-only');
  }
}

/** docs/reference.md#scopes-and-access: a management credential is refused on inference routes. */
export function requireInference(principal: Principal): void {
  if (principal.scope !== 'inference') throw new ForbiddenError('Management keys cannot be used for inference');
}
