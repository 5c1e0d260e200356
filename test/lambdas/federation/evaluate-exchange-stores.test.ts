import { randomUUID } from 'node:crypto';
import { systemClock } from '../../../lambdas/clock';
import { evaluateCondition } from '../../../lambdas/federation/condition';
import { evaluateExchange, type ExchangeDependencies } from '../../../lambdas/federation/evaluate-exchange';
import { createIssuerKeySource } from '../../../lambdas/federation/issuer-keys';
import type { FederationPolicy } from '../../../lambdas/federation/types';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { makeIssuer, makeOrganization, makePolicy, makeWorkspaceKey } from '../../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';

/**
 * The exchange decision over the stores it runs on in AWS (DynamoDB, here the embedded one)
 * and a real HTTPS identity provider: configuration changes refuse the very next exchange.
 */

const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const AUDIENCE = 'https://modelgate.example.com';

let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
let idp: TestIdentityProvider;
let federation: DynamoFederationStore;
let accounts: DynamoAccountStore;
let deps: ExchangeDependencies;

beforeAll(async () => {
  [tables, idp] = await Promise.all([startEmbeddedTables(), startIdentityProvider({ hostname: 'localhost' })]);
  federation = new DynamoFederationStore(tables.documentClient, TABLE_SCHEMAS.policies.localName);
  accounts = new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName);
  deps = {
    federation,
    accounts,
    issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: true, extraCaPems: [idp.caPem] }),
    clock: systemClock,
    evaluateCondition,
  };
});
afterAll(async () => {
  await Promise.all([tables.stop(), idp.close()]);
});

/** A fresh organization with an issuer, a policy and its acting key. */
async function configure(policyOverrides: Partial<FederationPolicy> = {}) {
  const organization = makeOrganization({ id: randomUUID(), plan: 'business' });
  const key = makeWorkspaceKey({ hash: randomUUID().replace(/-/g, '').padEnd(64, '0'), organizationId: organization.id });
  const issuer = makeIssuer({ organizationId: organization.id, issuerUrl: idp.issuerUrl });
  const policy = makePolicy({
    organizationId: organization.id,
    issuerId: issuer.id,
    apiKeyHash: key.hash,
    subject: SUBJECT,
    audience: AUDIENCE,
    ...policyOverrides,
  });
  await accounts.createOrganization(organization);
  await accounts.createWorkspace({ id: key.workspaceId!, organizationId: organization.id, name: 'CI', slug: 'ci', description: null, guardrailIds: [], createdAt: key.createdAt, updatedAt: null });
  expect(await accounts.createApiKey(key)).toBe('created');
  await federation.createIssuer(issuer);
  await federation.createPolicy(policy);
  return { organization, key, issuer, policy };
}

const workloadToken = (overrides: Record<string, unknown> = {}) => idp.sign({ sub: SUBJECT, aud: AUDIENCE, scopes: ['deploy'], ...overrides });
const evaluate = (policyId: string, subjectToken = workloadToken()) => evaluateExchange(deps, { subjectToken, policyId });

describe('evaluateExchange on DynamoDB stores', () => {
  it('passes a token that satisfies a stored policy with a condition and a claim check', async () => {
    const { policy, key, organization } = await configure({
      condition: '"deploy" in scopes && subject.startsWith("repo:acme/")',
      claimChecks: { scopes: 'deploy', tokenType: null },
    });
    const evaluation = await evaluate(policy.id);
    expect(evaluation.result).toBe('pass');
    expect(evaluation.key).toEqual(key);
    expect(evaluation.organization?.id).toBe(organization.id);
    expect(evaluation.claims?.sub).toBe(SUBJECT);
  });

  it('refuses the very next exchange after the policy is paused, the key disabled, the plan lowered or the issuer deleted', async () => {
    const { policy, key, organization, issuer } = await configure();
    expect((await evaluate(policy.id)).result).toBe('pass');

    await federation.updatePolicy({ ...policy, enabled: false, version: policy.version + 1 }, policy.version);
    expect((await evaluate(policy.id)).reason).toBe('policy_paused');
    await federation.updatePolicy({ ...policy, enabled: true, version: policy.version + 2 }, policy.version + 1);
    expect((await evaluate(policy.id)).result).toBe('pass');

    await accounts.updateApiKey(key.hash, { disabled: true }, new Date().toISOString());
    expect((await evaluate(policy.id)).reason).toBe('key_disabled');
    await accounts.updateApiKey(key.hash, { disabled: false }, new Date().toISOString());

    await accounts.updateOrganization(organization.id, { plan: 'pro' }, new Date().toISOString());
    expect((await evaluate(policy.id)).reason).toBe('no_entitlement');
    await accounts.updateOrganization(organization.id, { plan: 'enterprise' }, new Date().toISOString());
    expect((await evaluate(policy.id)).result).toBe('pass');

    await federation.deleteIssuer(organization.id, issuer.id);
    expect((await evaluate(policy.id)).reason).toBe('issuer_deleted');
    await federation.deletePolicy(organization.id, policy.id);
    expect((await evaluate(policy.id)).reason).toBe('policy_not_found');
  });

  it("never lets one organization's policy use another organization's issuer or key", async () => {
    const victim = await configure();
    const attacker = await configure();
    // A policy of the attacker's organization that names the victim's issuer and key.
    const crossing = makePolicy({ organizationId: attacker.organization.id, issuerId: victim.issuer.id, apiKeyHash: attacker.key.hash, subject: SUBJECT, audience: AUDIENCE });
    await federation.createPolicy(crossing);
    expect((await evaluate(crossing.id)).reason).toBe('issuer_deleted');
    const keyCrossing = makePolicy({ organizationId: attacker.organization.id, issuerId: attacker.issuer.id, apiKeyHash: victim.key.hash, subject: SUBJECT, audience: AUDIENCE });
    await federation.createPolicy(keyCrossing);
    expect((await evaluate(keyCrossing.id)).reason).toBe('key_deleted');
  });
});
