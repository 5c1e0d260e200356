import { randomUUID } from 'node:crypto';
import type { ApiKeyRecord, Organization } from '../../lambdas/accounts/types';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../../lambdas/accounts/types';
import { MemoryFederationStore } from './memory-federation-store';
import type { FederationIssuer, FederationPolicy } from '../../lambdas/federation/types';

/** Builders of stored federation configuration, for tests of code that reads it. */

export function makeIssuer(overrides: Partial<FederationIssuer> = {}): FederationIssuer {
  return {
    id: randomUUID(),
    organizationId: 'org-1',
    name: 'GitHub Actions',
    issuerUrl: 'https://token.actions.githubusercontent.com',
    jwksUrl: null,
    jwks: null,
    checkJti: false,
    version: 1,
    createdAt: '2026-11-21T12:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}

export function makePolicy(overrides: Partial<FederationPolicy> = {}): FederationPolicy {
  return {
    id: randomUUID(),
    organizationId: 'org-1',
    name: 'Deploy from main',
    issuerId: randomUUID(),
    subject: 'repo:acme/api:ref:refs/heads/main',
    audience: 'https://modelgate.example',
    condition: null,
    apiKeyHash: 'a'.repeat(64),
    scope: 'inference',
    enabled: true,
    claimChecks: { scopes: null, tokenType: null },
    requireDpop: false,
    version: 1,
    createdAt: '2026-11-21T12:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}

/** The configuration one exchange reads, and the accounts it points at: for exchange tests. */

export const ORG_ID = '0b6f7c1e-8a3d-4c55-9a61-3f1d2e4b5a01';
export const ISSUER_ID = '5d2a9c0e-1b7f-4e3a-8c6d-2f4e6a8b0c12';
export const POLICY_ID = 'a3c5e7f9-2b4d-4f6a-8c0e-1d3f5a7b9c23';
export const WORKSPACE_KEY_HASH = 'f'.repeat(64);

export function makeOrganization(overrides: Partial<Organization> = {}): Organization {
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

export function makeWorkspaceKey(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
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

/**
 * One organization with one issuer, one policy and its acting key: the federation
 * configuration in the in-memory store, the organization and key in maps the exchange reads
 * through {@link ExchangeWorld.accounts}.
 */
export class ExchangeWorld {
  readonly federation = new MemoryFederationStore();
  readonly organizations = new Map<string, Organization>();
  readonly keys = new Map<string, ApiKeyRecord>();
  readonly accounts = {
    getOrganization: async (id: string) => this.organizations.get(id),
    getApiKey: async (hash: string) => this.keys.get(hash),
  };

  static async create(seed: { issuer?: Partial<FederationIssuer>; policy?: Partial<FederationPolicy> } = {}): Promise<ExchangeWorld> {
    const world = new ExchangeWorld();
    await world.federation.createIssuer(makeIssuer({ id: ISSUER_ID, organizationId: ORG_ID, issuerUrl: 'https://idp.example.com', ...seed.issuer }));
    await world.federation.createPolicy(
      makePolicy({ id: POLICY_ID, organizationId: ORG_ID, issuerId: ISSUER_ID, apiKeyHash: WORKSPACE_KEY_HASH, audience: 'https://modelgate.example.com', ...seed.policy }),
    );
    world.organizations.set(ORG_ID, makeOrganization());
    world.keys.set(WORKSPACE_KEY_HASH, makeWorkspaceKey());
    return world;
  }

  async updatePolicy(overrides: Partial<FederationPolicy>): Promise<void> {
    const current = (await this.federation.getPolicy(POLICY_ID))!;
    await this.federation.updatePolicy({ ...current, ...overrides, version: current.version + 1 }, current.version);
  }

  async updateIssuer(overrides: Partial<FederationIssuer>): Promise<void> {
    const current = (await this.federation.getIssuer(ORG_ID, ISSUER_ID))!;
    await this.federation.updateIssuer({ ...current, ...overrides, version: current.version + 1 }, current.version);
  }
}
