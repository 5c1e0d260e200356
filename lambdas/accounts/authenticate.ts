import { ForbiddenError, UnauthenticatedError } from '../errors';
import type { Clock } from '../clock';
import type { AccountRecords, AccountStore } from './account-store';
import { hashApiKey, isApiKeyFormat } from './api-keys';
import type { ApiKeyRecord, Principal } from './types';

/**
 * Verifies an access token issued by the token exchange and names the API key it acts as.
 * Throws for anything that is not a valid, unexpired token of ours.
 */
export interface AccessTokenVerifier {
  verify(token: string): Promise<VerifiedAccessToken>;
}

export interface VerifiedAccessToken {
  /** The API key the token acts as. */
  keyHash: string;
  /** The policy that authorized it, for usage attribution only (SPEC 2.13: never for authorization). */
  federationPolicyId: string | null;
}

export interface AuthenticationDeps {
  accounts: AccountStore;
  clock: Clock;
  accessTokens?: AccessTokenVerifier;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/** What kind of credential a request presents, for logs: never the credential itself. */
export type CredentialKind = 'none' | 'api_key' | 'access_token' | 'unrecognized';

export function credentialKind(authorization: string | undefined): CredentialKind {
  if (authorization === undefined || authorization.trim() === '') return 'none';
  const credential = BEARER.exec(authorization)?.[1];
  if (credential === undefined) return 'unrecognized';
  if (isApiKeyFormat(credential)) return 'api_key';
  return JWT_SHAPE.test(credential) ? 'access_token' : 'unrecognized';
}

/**
 * SPEC 5: one bearer-authentication path for every protected route. The key record is
 * read on every request (strongly consistent), so disabling or deleting a key, or the key
 * an access token acts as, takes effect on the next request. With its organization and
 * workspace it takes one round trip once the container has seen the key.
 */
export async function authenticate(authorization: string | undefined, deps: AuthenticationDeps): Promise<Principal> {
  if (authorization === undefined || authorization.trim() === '') {
    throw new UnauthenticatedError('missing_credential', 'Missing Authentication header');
  }
  const match = BEARER.exec(authorization);
  if (!match) throw new UnauthenticatedError('malformed_header', 'Malformed Authorization header: expected "Bearer <API key>"');
  const credential = match[1]!;

  let keyHash: string;
  let kind: Principal['credential'];
  let federationPolicyId: string | null = null;
  if (isApiKeyFormat(credential)) {
    keyHash = hashApiKey(credential);
    kind = 'api_key';
  } else if (deps.accessTokens && JWT_SHAPE.test(credential)) {
    try {
      ({ keyHash, federationPolicyId } = await deps.accessTokens.verify(credential));
    } catch {
      throw new UnauthenticatedError('invalid_token', 'Invalid or expired access token');
    }
    kind = 'access_token';
  } else {
    throw new UnauthenticatedError('unknown_key', 'Invalid API key');
  }

  const { key, organization, workspace } = await readRecords(deps.accounts, keyHash);
  if (!key) throw new UnauthenticatedError('unknown_key', kind === 'api_key' ? 'Invalid API key' : 'The API key behind this access token no longer exists');
  if (key.disabled) throw new UnauthenticatedError('disabled_key', 'API key is disabled');
  if (key.expiresAt && Date.parse(key.expiresAt) <= deps.clock.now().getTime()) {
    throw new UnauthenticatedError('expired_key', 'API key has expired');
  }
  if (!organization) throw new UnauthenticatedError('unknown_key', 'Invalid API key');
  return { organization, key, workspace: workspace ?? null, scope: scopeOf(key), credential: kind, federationPolicyId };
}

/**
 * Where each key seen by this container lives: its organization and workspace, which never
 * change for a key. Knowing them, the key, its organization and its workspace are read in one
 * round trip; the key's own state (disabled, deleted, expired) is still read on every request.
 */
const placements = new Map<string, { organizationId: string; workspaceId: string | null }>();
/** Far more keys than one container serves; the oldest is forgotten first. */
export const KEY_PLACEMENT_CACHE_SIZE = 10_000;

/** The key and, beside it when its placement is known, its organization and workspace. */
async function readRecords(accounts: AccountStore, keyHash: string): Promise<AccountRecords> {
  const known = placements.get(keyHash);
  const records = await accounts.getRecords({ keyHash, organizationId: known?.organizationId, workspaceId: known?.workspaceId ?? undefined });
  const { key } = records;
  if (!key) return records;
  if (known && known.organizationId === key.organizationId && known.workspaceId === key.workspaceId) return records;
  // First seen here (or placed elsewhere than remembered): one more round trip, remembered.
  if (placements.size >= KEY_PLACEMENT_CACHE_SIZE) placements.delete(placements.keys().next().value!);
  placements.set(keyHash, { organizationId: key.organizationId, workspaceId: key.workspaceId });
  const placed = await accounts.getRecords({ organizationId: key.organizationId, workspaceId: key.workspaceId ?? undefined });
  return { ...placed, key };
}

/** SPEC 2.12: workspace and personal keys are for inference; management keys for management. */
export function scopeOf(key: ApiKeyRecord): Principal['scope'] {
  return key.kind === 'management' ? 'management' : 'inference';
}

/** SPEC 4.5: management routes take management credentials; writes need read-write access. */
export function requireManagement(principal: Principal, access: 'read' | 'write'): void {
  if (principal.scope !== 'management') throw new ForbiddenError('Operation reserved for management keys');
  if (access === 'write' && principal.key.accessLevel !== 'read-write') {
    throw new ForbiddenError('This management key is read-only');
  }
}

/** SPEC 4.5: a management credential is refused on inference routes. */
export function requireInference(principal: Principal): void {
  if (principal.scope !== 'inference') throw new ForbiddenError('Management keys cannot be used for inference');
}
