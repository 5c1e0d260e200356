import { ForbiddenError, UnauthorizedError } from '../http/api-errors';
import type { Clock } from '../clock';
import type { AccountStore } from './account-store';
import { hashApiKey, isApiKeyFormat } from './api-keys';
import type { ApiKeyRecord, Principal } from './types';

/**
 * Verifies an access token issued by the token exchange and names the API key it acts as.
 * Throws for anything that is not a valid, unexpired token of ours.
 */
export interface AccessTokenVerifier {
  verify(token: string): Promise<{ keyHash: string }>;
}

export interface AuthenticationDeps {
  accounts: AccountStore;
  clock: Clock;
  accessTokens?: AccessTokenVerifier;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * SPEC 5: one bearer-authentication path for every protected route. The key record is
 * read on every request (strongly consistent), so disabling or deleting a key, or the key
 * an access token acts as, takes effect on the next request.
 */
export async function authenticate(authorization: string | undefined, deps: AuthenticationDeps): Promise<Principal> {
  if (authorization === undefined || authorization.trim() === '') {
    throw new UnauthorizedError('Missing Authentication header');
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new UnauthorizedError('Malformed Authorization header: expected "Bearer <API key>"');
  const credential = match[1]!;

  let keyHash: string;
  let kind: Principal['credential'];
  if (isApiKeyFormat(credential)) {
    keyHash = hashApiKey(credential);
    kind = 'api_key';
  } else if (deps.accessTokens && JWT_SHAPE.test(credential)) {
    try {
      keyHash = (await deps.accessTokens.verify(credential)).keyHash;
    } catch {
      throw new UnauthorizedError('Invalid or expired access token');
    }
    kind = 'access_token';
  } else {
    throw new UnauthorizedError('Invalid API key');
  }

  const key = await deps.accounts.getApiKey(keyHash);
  if (!key) throw new UnauthorizedError(kind === 'api_key' ? 'Invalid API key' : 'The API key behind this access token no longer exists');
  if (key.disabled) throw new UnauthorizedError('API key is disabled');
  if (key.expiresAt && Date.parse(key.expiresAt) <= deps.clock.now().getTime()) {
    throw new UnauthorizedError('API key has expired');
  }
  const organization = await deps.accounts.getOrganization(key.organizationId);
  if (!organization) throw new UnauthorizedError('Invalid API key');
  return { organization, key, scope: scopeOf(key), credential: kind };
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
