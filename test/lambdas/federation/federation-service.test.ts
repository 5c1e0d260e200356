import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { FederationService } from '../../../lambdas/federation/federation-service';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { FixedClock } from '../../support/fixed-clock';

describe('FederationService on the embedded DynamoDB', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoFederationStore;
  let accountStore: DynamoAccountStore;
  let accounts: AccountsService;
  let service: FederationService;
  let organizationId: string;
  let keyHash: string;
  const clock = new FixedClock();
  let ids = 0;
  const newId = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`;

  beforeAll(async () => {
    tables = await startEmbeddedTables();
    accountStore = new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName);
    accounts = new AccountsService({ store: accountStore, clock });
    const { organization } = await accounts.createOrganization({ name: 'Acme', plan: 'business' });
    organizationId = organization.id;
    keyHash = (await accounts.createApiKey(organizationId, { kind: 'workspace', name: 'CI' })).key.hash;
    store = new DynamoFederationStore(tables.documentClient, TABLE_SCHEMAS.policies.localName, clock);
    service = new FederationService({ store, accounts: accountStore, hosts: { allowLoopback: false }, clock, newId });
  });
  afterAll(async () => {
    await tables.stop();
  });

  const policyInput = (issuerId: string) => ({
    name: 'Deploy',
    issuer_id: issuerId,
    subject: 'system:serviceaccount:ci:runner',
    audience: 'sts',
    api_key_hash: keyHash,
  });

  it('stores exactly what it returns, with pinned ids and times', async () => {
    const issuer = await service.createIssuer(organizationId, { name: 'Cluster', issuer_url: 'https://k8s.example' });
    const policy = await service.createPolicy(organizationId, policyInput(issuer.id));
    expect(issuer).toEqual({
      id: '00000000-0000-4000-8000-000000000001',
      organizationId,
      name: 'Cluster',
      issuerUrl: 'https://k8s.example',
      jwksUrl: null,
      jwks: null,
      checkJti: false,
      version: 1,
      createdAt: '2026-11-21T12:00:00.000Z',
      updatedAt: null,
    });
    expect(await store.getIssuer(organizationId, issuer.id)).toEqual(issuer);
    expect(await store.getPolicy(policy.id)).toEqual(policy);
  });

  it('bumps the version and updatedAt on every write', async () => {
    const issuer = await service.createIssuer(organizationId, { name: 'V', issuer_url: 'https://v.example' });
    const policy = await service.createPolicy(organizationId, policyInput(issuer.id));
    clock.advance(1000);
    const paused = await service.setPolicyEnabled(organizationId, policy.id, false);
    expect(paused).toEqual({ ...policy, enabled: false, version: 2, updatedAt: '2026-11-21T12:00:01.000Z' });
    const renamed = await service.updateIssuer(organizationId, issuer.id, { name: 'V2' });
    expect(renamed).toMatchObject({ name: 'V2', version: 2, updatedAt: '2026-11-21T12:00:01.000Z' });
  });

  it('treats the policies of an issuer whose deletion was interrupted as deleted, and removes them on the next listing', async () => {
    const issuer = await service.createIssuer(organizationId, { name: 'Gone', issuer_url: 'https://gone.example' });
    const policy = await service.createPolicy(organizationId, policyInput(issuer.id));
    // The issuer item is deleted, then the process stops before its policies are.
    await store.deleteIssuer(organizationId, issuer.id);

    // The exchange reads the policy, then fails to find its issuer: the policy is unusable.
    expect(await store.getPolicy(policy.id)).toBeDefined();
    expect(await store.getIssuer(organizationId, policy.issuerId)).toBeUndefined();

    await expect(service.getPolicy(organizationId, policy.id)).rejects.toMatchObject({ kind: 'not_found' });
    await expect(service.updatePolicy(organizationId, policy.id, { enabled: true })).rejects.toMatchObject({ kind: 'not_found' });
    expect((await service.listPolicies(organizationId)).map((p) => p.id)).not.toContain(policy.id);
    expect(await store.getPolicy(policy.id)).toBeUndefined();
  });

  it('refuses a policy for an issuer deleted a moment before', async () => {
    const issuer = await service.createIssuer(organizationId, { name: 'Brief', issuer_url: 'https://brief.example' });
    await service.deleteIssuer(organizationId, issuer.id);
    await expect(service.createPolicy(organizationId, policyInput(issuer.id))).rejects.toMatchObject({
      kind: 'invalid_input',
      metadata: { parameter: 'issuer_id' },
    });
  });

  it('caps the issuers and policies of one organization', async () => {
    const { organization } = await accounts.createOrganization({ name: 'Capped', plan: 'enterprise' });
    const limits = { issuers: 2, policies: 1 };
    const capped = new FederationService({ store, accounts: accountStore, hosts: { allowLoopback: false }, clock, newId, limits });
    await capped.createIssuer(organization.id, { name: 'A', issuer_url: 'https://a.example' });
    await capped.createIssuer(organization.id, { name: 'B', issuer_url: 'https://b.example' });
    await expect(capped.createIssuer(organization.id, { name: 'C', issuer_url: 'https://c.example' })).rejects.toMatchObject({
      kind: 'conflict',
      message: 'An organization has at most 2 issuers: delete one first',
    });
    const [first] = await capped.listIssuers(organization.id);
    const hash = (await accounts.createApiKey(organization.id, { kind: 'workspace', name: 'CI' })).key.hash;
    const input = { ...policyInput(first!.id), api_key_hash: hash };
    await capped.createPolicy(organization.id, input);
    await expect(capped.createPolicy(organization.id, input)).rejects.toMatchObject({
      kind: 'conflict',
      message: 'An organization has at most 1 policies: delete one first',
    });
  });
});
