import { Environment } from '@marcbachmann/cel-js';
import type { ApiKeyRecord, Organization } from '../../lambdas/accounts/types';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../../lambdas/accounts/types';
import type { ConditionVariables, FederationIssuer, FederationPolicy, FederationReader } from '../../lambdas/federation/types';

/** Federation configuration and the accounts it points at, in memory, for domain tests. */

export const ORG_ID = '0b6f7c1e-8a3d-4c55-9a61-3f1d2e4b5a01';
export const ISSUER_ID = '5d2a9c0e-1b7f-4e3a-8c6d-2f4e6a8b0c12';
export const POLICY_ID = 'a3c5e7f9-2b4d-4f6a-8c0e-1d3f5a7b9c23';
export const WORKSPACE_KEY_HASH = 'f'.repeat(64);

export function organization(overrides: Partial<Organization> = {}): Organization {
  return {
    id: ORG_ID,
    name: 'Acme',
    plan: 'enterprise',
    providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES },
    privacy: { ...DEFAULT_PRIVACY },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}

export function workspaceKey(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    hash: WORKSPACE_KEY_HASH,
    organizationId: ORG_ID,
    kind: 'workspace',
    workspaceId: 'ws-1',
    accessLevel: null,
    userId: null,
    name: 'ci',
    label: 'sk-mg-v1-…a1b2',
    disabled: false,
    guardrailIds: [],
    expiresAt: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}

export function issuer(overrides: Partial<FederationIssuer> = {}): FederationIssuer {
  return {
    id: ISSUER_ID,
    organizationId: ORG_ID,
    name: 'CI provider',
    issuerUrl: 'https://idp.example.com',
    jwksUrl: null,
    jwks: null,
    checkJti: false,
    version: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}

export function policy(overrides: Partial<FederationPolicy> = {}): FederationPolicy {
  return {
    id: POLICY_ID,
    organizationId: ORG_ID,
    name: 'deploy from main',
    issuerId: ISSUER_ID,
    subject: 'repo:acme/app:ref:refs/heads/main',
    audience: 'https://modelgate.example.com',
    condition: null,
    apiKeyHash: WORKSPACE_KEY_HASH,
    scope: 'inference',
    enabled: true,
    claimChecks: { scopes: null, tokenType: null },
    version: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}

export class InMemoryFederation implements FederationReader {
  readonly policies = new Map<string, FederationPolicy>();
  readonly issuers = new Map<string, FederationIssuer>();
  readonly organizations = new Map<string, Organization>();
  readonly keys = new Map<string, ApiKeyRecord>();

  constructor(seed: { policy?: FederationPolicy; issuer?: FederationIssuer; organization?: Organization; key?: ApiKeyRecord } = {}) {
    const p = seed.policy ?? policy();
    const i = seed.issuer ?? issuer();
    const o = seed.organization ?? organization();
    const k = seed.key ?? workspaceKey();
    this.policies.set(p.id, p);
    this.issuers.set(`${i.organizationId}/${i.id}`, i);
    this.organizations.set(o.id, o);
    this.keys.set(k.hash, k);
  }

  async getPolicy(id: string) {
    return this.policies.get(id);
  }
  async getIssuer(organizationId: string, issuerId: string) {
    return this.issuers.get(`${organizationId}/${issuerId}`);
  }
  /** The account store's reads the exchange makes. */
  readonly accounts = {
    getOrganization: async (id: string) => this.organizations.get(id),
    getApiKey: async (hash: string) => this.keys.get(hash),
  };
}

/** SPEC 4.4 conditions evaluated with the CEL library, over exactly the four variables. */
export function celCondition(): (source: string, variables: ConditionVariables) => boolean {
  const environment = new Environment({ unlistedVariablesAreDyn: false })
    .registerVariable('subject', 'string')
    .registerVariable('audience', 'list<string>')
    .registerVariable('scopes', 'list<string>')
    .registerVariable('token_type', 'string');
  return (source, variables) => {
    const result = environment.evaluate(source, { ...variables });
    if (typeof result !== 'boolean') throw new Error(`condition yielded ${typeof result}`);
    return result;
  };
}
