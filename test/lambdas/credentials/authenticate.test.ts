import type { AccountStore } from '../../../lambdas/accounts/account-store';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { authenticate, requireInference, requireManagement } from '../../../lambdas/credentials/authenticate';
import type { ApiKeyRecord, Organization } from '../../../lambdas/accounts/types';
import { DomainError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { authenticationRecords } from '../../support/accounts';
import { makeOrganization, makeWorkspaceKey, ORG_ID } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';
import { DpopChecker } from '../../../lambdas/credentials/dpop-binding';
import { proofKey, signProof } from '../../support/dpop';
import { MemoryProofReplayStore } from '../../support/memory-proof-replay-store';

const SECRET = `sk-mg-v1-${'1'.repeat(64)}`;
/** A request with this Authorization value and no DPoP proof. */
const presented = (authorization: string | undefined) => ({ authorization, proofs: [], method: 'GET', path: '/api/v1/models/user', stageUrl: undefined, host: undefined });
const organization: Organization = makeOrganization();

/** The workspace key SECRET names, in `organization`. */
function keyRecord(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return makeWorkspaceKey({ hash: hashApiKey(SECRET), ...overrides });
}

/** Only the read authentication makes. */
function storeWith(key: ApiKeyRecord | undefined): AccountStore {
  return authenticationRecords(organization, ...(key ? [key] : []));
}

async function failure(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    // Domain errors, as the HTTP boundary answers them.
    expect(error).toBeInstanceOf(DomainError);
    const { status, body } = toErrorBody(error);
    return { status, message: body.error.message };
  }
  throw new Error('expected a failure');
}

describe('authenticate', () => {
  const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));

  it('accepts a valid key and derives its scope from its kind', async () => {
    const principal = await authenticate(presented(`Bearer ${SECRET}`), { accounts: storeWith(keyRecord()), clock });
    expect(principal.organization.id).toBe(ORG_ID);
    expect(principal.scope).toBe('inference');
    expect(principal.credential).toBe('api_key');
    const management = await authenticate(presented(`bearer ${SECRET}`), {
      accounts: storeWith(keyRecord({ kind: 'management', workspaceId: null, accessLevel: 'read-only' })),
      clock,
    });
    expect(management.scope).toBe('management');
  });

  it.each([
    [undefined, 'Missing Authentication header'],
    ['', 'Missing Authentication header'],
    ['Basic abc', 'Malformed Authorization header: expected "Bearer <API key>"'],
    ['Bearer', 'Malformed Authorization header: expected "Bearer <API key>"'],
    ['Bearer not-a-key', 'Invalid API key'],
    [`Bearer sk-mg-v1-${'2'.repeat(64)}`, 'Invalid API key'],
  ])('refuses %p with 401 %p', async (header, message) => {
    expect(await failure(authenticate(presented(header), { accounts: storeWith(keyRecord()), clock }))).toEqual({ status: 401, message });
  });

  it('refuses a disabled key and an expired key with 401', async () => {
    expect(await failure(authenticate(presented(`Bearer ${SECRET}`), { accounts: storeWith(keyRecord({ disabled: true })), clock }))).toEqual({
      status: 401,
      message: 'API key is disabled',
    });
    const expired = keyRecord({ expiresAt: '2026-11-21T12:00:00.000Z' });
    expect(await failure(authenticate(presented(`Bearer ${SECRET}`), { accounts: storeWith(expired), clock }))).toEqual({
      status: 401,
      message: 'API key has expired',
    });
    const live = keyRecord({ expiresAt: '2026-11-21T12:00:01.000Z' });
    await expect(authenticate(presented(`Bearer ${SECRET}`), { accounts: storeWith(live), clock })).resolves.toBeDefined();
  });

  it('refuses an access token that fails verification, and resolves a valid one to its key', async () => {
    const accounts = storeWith(keyRecord());
    const accessTokens = {
      verify: async (token: string) => {
        if (token !== 'aaa.bbb.ccc') throw new Error('bad signature');
        return { keyHash: hashApiKey(SECRET), federationPolicyId: 'policy-1', boundKey: null };
      },
    };
    const principal = await authenticate(presented('Bearer aaa.bbb.ccc'), { accounts, clock, accessTokens });
    expect(principal).toMatchObject({ credential: 'access_token', federationPolicyId: 'policy-1', key: { hash: hashApiKey(SECRET) } });
    expect(await failure(authenticate(presented('Bearer aaa.bbb.ddd'), { accounts, clock, accessTokens }))).toEqual({
      status: 401,
      message: 'Invalid or expired access token',
    });
  });

  it('takes a DPoP proof once: the same proof sent again is a 401, a new one passes', async () => {
    const key = await proofKey();
    const token = 'aaa.bbb.bound';
    const accessTokens = { verify: async () => ({ keyHash: hashApiKey(SECRET), federationPolicyId: 'policy-1', boundKey: key.jkt }) };
    const deps = {
      accounts: storeWith(keyRecord()),
      clock: { now: () => new Date() },
      accessTokens,
      proofs: new DpopChecker({ apiBaseUrl: 'https://api.modelgate.example/api/v1', servedHostnames: [], replays: new MemoryProofReplayStore(), clock: { now: () => new Date() } }),
    };
    const request = async (proof: string) =>
      authenticate({ authorization: `DPoP ${token}`, proofs: [proof], method: 'GET', path: '/api/v1/models/user', stageUrl: undefined, host: undefined }, deps);
    const proof = await signProof(key, { htm: 'GET', htu: 'https://api.modelgate.example/api/v1/models/user', accessToken: token });
    expect((await request(proof)).credential).toBe('access_token');
    expect(await failure(request(proof))).toEqual({ status: 401, message: 'The DPoP proof was used before: sign a new proof for every request' });
    const next = await signProof(key, { htm: 'GET', htu: 'https://api.modelgate.example/api/v1/models/user', accessToken: token });
    expect((await request(next)).credential).toBe('access_token');
  });

  it('refuses an access token whose key is disabled, expired or deleted (docs/reference.md#scopes-and-access rule 6: key state on every request)', async () => {
    const accessTokens = { verify: async () => ({ keyHash: hashApiKey(SECRET), federationPolicyId: 'policy-1', boundKey: null }) };
    const asToken = (key: ApiKeyRecord | undefined) => failure(authenticate(presented('Bearer aaa.bbb.ccc'), { accounts: storeWith(key), clock, accessTokens }));
    expect(await asToken(keyRecord({ disabled: true }))).toEqual({ status: 401, message: 'API key is disabled' });
    expect(await asToken(keyRecord({ expiresAt: '2026-11-21T12:00:00.000Z' }))).toEqual({ status: 401, message: 'API key has expired' });
    expect(await asToken(undefined)).toEqual({ status: 401, message: 'The API key behind this access token no longer exists' });
    // A management key behind a token, disabled: refused the same way.
    expect(await asToken(keyRecord({ kind: 'management', workspaceId: null, accessLevel: 'read-write', disabled: true }))).toEqual({ status: 401, message: 'API key is disabled' });
  });

  it('reserves management operations for management keys and writes for read-write ones', async () => {
    const workspace = await authenticate(presented(`Bearer ${SECRET}`), { accounts: storeWith(keyRecord()), clock });
    expect(() => requireManagement(workspace, 'read')).toThrow('Operation reserved for management keys');
    expect(() => requireInference(workspace)).not.toThrow();
    const readOnly = await authenticate(presented(`Bearer ${SECRET}`), {
      accounts: storeWith(keyRecord({ kind: 'management', workspaceId: null, accessLevel: 'read-only' })),
      clock,
    });
    expect(() => requireManagement(readOnly, 'read')).not.toThrow();
    expect(() => requireManagement(readOnly, 'write')).toThrow('This management key is read-only');
    expect(() => requireInference(readOnly)).toThrow('Management keys cannot be used for inference');
  });
});
