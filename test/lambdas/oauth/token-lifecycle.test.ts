import { randomUUID } from 'node:crypto';
import type { ApiKeyRecord } from '../../../lambdas/accounts/types';
import type { FederationIssuer, FederationPolicy } from '../../../lambdas/federation/types';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { makeIssuer, makePolicy } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const MINUTE = 60_000;

/** One federation set-up per row: its own key, issuer and policy, so rows do not interact. */
interface Setup {
  key: ApiKeyRecord;
  issuer: FederationIssuer;
  policy: FederationPolicy;
}

/** What a row expects after its transition: for a new exchange, and for a token issued before it. */
interface Row {
  transition: string;
  /** The row deletes its issuer, so it gets one of its own. */
  ownIssuer?: boolean;
  /** Changes state through the admin HTTP API where one exists (the plan has none: the operator CLI's service). */
  apply(setup: Setup): Promise<void>;
  newExchange: 200 | 'invalid_grant';
  issuedToken: 200 | 401;
}

/**
 * docs/reference.md#lifecycle, docs/reference.md#scopes-and-access rules 6-7 through the real HTTP path: the token endpoint, the admin API,
 * the management API and a bearer call with the issued token, on the local runtime with an
 * injected clock and a real HTTPS identity provider.
 */
describe('docs/reference.md#lifecycle transitions: new exchanges and tokens issued before', () => {
  const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  /** A second tenant of the identity provider, for the row that deletes its issuer. */
  let deletedTenant: TestIdentityProvider;
  /** An organization has one issuer per issuer URL: the rows share it, but for one. */
  let sharedIssuer: FederationIssuer;
  let federation: DynamoFederationStore;
  let organizationId: string;
  const admin = () => service.runtime.demo.keys.managementReadWrite;

  beforeAll(async () => {
    service = await startTestService({ clock, exchangeRateLimit: 1000, exchangeRateWindowSeconds: 3600 });
    stores = connectToRuntime(service.runtime);
    organizationId = service.runtime.demo.organizationId;
    federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
    const ca = readDevCertificateAuthority(service.runtime.dataDir);
    idp = await startIdentityProvider({ ca });
    deletedTenant = await startIdentityProvider({ ca, issuerPath: '/tenant-deleted' });
    sharedIssuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl });
    await federation.createIssuer(sharedIssuer);
  });
  afterAll(async () => {
    await idp?.close();
    await deletedTenant?.close();
    stores?.destroy();
    await service?.stop();
  });

  async function setUp(ownIssuer = false): Promise<Setup> {
    const { key } = await stores.accounts.createApiKey(organizationId, { kind: 'workspace', name: `federated ${randomUUID()}` });
    let issuer = sharedIssuer;
    if (ownIssuer) {
      issuer = makeIssuer({ organizationId, issuerUrl: deletedTenant.issuerUrl });
      await federation.createIssuer(issuer);
    }
    const policy = makePolicy({ organizationId, issuerId: issuer.id, subject: SUBJECT, audience: AUDIENCE, apiKeyHash: key.hash });
    await federation.createPolicy(policy);
    return { key, issuer, policy };
  }

  /** The token endpoint with a fresh subject token signed at the injected clock's now. */
  const exchange = (policy: FederationPolicy, subjectLifetimeSeconds = 3600) => {
    const now = clock.now();
    const signer = policy.issuerId === sharedIssuer.id ? idp : deletedTenant;
    const subjectToken = signer.sign(
      { sub: SUBJECT, aud: AUDIENCE, jti: randomUUID(), exp: Math.floor(now.getTime() / 1000) + subjectLifetimeSeconds },
      { now },
    );
    const body = new URLSearchParams({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: subjectToken, federation_policy_id: policy.id });
    return service.call('/oauth/token', { method: 'POST', body: body.toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  };

  const outcome = (response: { status: number; body: any }) => (response.status === 200 ? 200 : response.body?.error);
  const useToken = async (token: string) => (await service.call('/models/user?limit=1', { key: token })).status;

  async function expectOk(response: { status: number; headers: Headers }, what: string) {
    expect([what, response.status]).toEqual([what, 200]);
  }

  const rows: Row[] = [
    {
      transition: 'policy paused',
      apply: async ({ policy }) => expectOk(await service.call(`/workload-identity/policies/${policy.id}`, { key: admin(), method: 'PATCH', body: { enabled: false } }), 'pause'),
      newExchange: 'invalid_grant',
      issuedToken: 200,
    },
    {
      transition: 'policy paused, then enabled again',
      apply: async ({ policy }) => {
        await expectOk(await service.call(`/workload-identity/policies/${policy.id}`, { key: admin(), method: 'PATCH', body: { enabled: false } }), 'pause');
        await expectOk(await service.call(`/workload-identity/policies/${policy.id}`, { key: admin(), method: 'PATCH', body: { enabled: true } }), 'enable');
      },
      newExchange: 200,
      issuedToken: 200,
    },
    {
      transition: 'policy deleted',
      apply: async ({ policy }) => expectOk(await service.call(`/workload-identity/policies/${policy.id}`, { key: admin(), method: 'DELETE' }), 'delete policy'),
      newExchange: 'invalid_grant',
      issuedToken: 200,
    },
    {
      transition: 'issuer deleted',
      ownIssuer: true,
      apply: async ({ issuer }) => expectOk(await service.call(`/workload-identity/issuers/${issuer.id}`, { key: admin(), method: 'DELETE' }), 'delete issuer'),
      newExchange: 'invalid_grant',
      issuedToken: 200,
    },
    {
      transition: 'entitlement lost (plan downgraded to pro)',
      apply: async () => void (await stores.accounts.setPlan(organizationId, 'pro')),
      newExchange: 'invalid_grant',
      issuedToken: 200,
    },
    {
      transition: 'acting key disabled',
      apply: async ({ key }) => expectOk(await service.call(`/keys/${key.hash}`, { key: admin(), method: 'PATCH', body: { disabled: true } }), 'disable'),
      newExchange: 'invalid_grant',
      issuedToken: 401,
    },
    {
      transition: 'acting key disabled, then enabled again',
      apply: async ({ key }) => {
        await expectOk(await service.call(`/keys/${key.hash}`, { key: admin(), method: 'PATCH', body: { disabled: true } }), 'disable');
        await expectOk(await service.call(`/keys/${key.hash}`, { key: admin(), method: 'PATCH', body: { disabled: false } }), 'enable');
      },
      newExchange: 200,
      issuedToken: 200,
    },
    {
      transition: 'acting key deleted',
      apply: async ({ key }) => expectOk(await service.call(`/keys/${key.hash}`, { key: admin(), method: 'DELETE' }), 'delete key'),
      newExchange: 'invalid_grant',
      issuedToken: 401,
    },
    {
      transition: '15 minutes pass (the access token lifetime)',
      apply: async () => clock.advance(15 * MINUTE),
      newExchange: 200,
      issuedToken: 401,
    },
  ];

  it.each(rows.map((row) => [row.transition, row] as const))('%s', async (_name, row) => {
    const setup = await setUp(row.ownIssuer);
    const before = await exchange(setup.policy);
    expect(before.status).toBe(200);
    const token = before.body.access_token as string;
    expect(await useToken(token)).toBe(200);
    try {
      await row.apply(setup);
      expect({ newExchange: outcome(await exchange(setup.policy)), issuedToken: await useToken(token) }).toEqual({
        newExchange: row.newExchange,
        issuedToken: row.issuedToken,
      });
    } finally {
      await stores.accounts.setPlan(organizationId, 'enterprise');
    }
  });

  it('ends an access token with the subject token it came from when that expires first, and refuses the expired subject token', async () => {
    const { policy } = await setUp();
    const now = clock.now();
    const subjectToken = idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID(), exp: Math.floor(now.getTime() / 1000) + 300 }, { now });
    const body = new URLSearchParams({ grant_type: GRANT, subject_token_type: JWT_TYPE, subject_token: subjectToken, federation_policy_id: policy.id }).toString();
    const call = () => service.call('/oauth/token', { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    const issued = await call();
    expect([issued.status, issued.body.expires_in]).toEqual([200, 300]);
    clock.advance(299_000);
    expect(await useToken(issued.body.access_token)).toBe(200);
    clock.advance(1_000);
    expect(await useToken(issued.body.access_token)).toBe(401);
    expect(outcome(await call())).toBe('invalid_grant');
  });
});
