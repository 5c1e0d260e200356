import { randomUUID } from 'node:crypto';
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
    version: 1,
    createdAt: '2026-11-21T12:00:00.000Z',
    updatedAt: null,
    ...overrides,
  };
}
