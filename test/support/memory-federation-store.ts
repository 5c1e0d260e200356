import { CountLimitReachedError, FEDERATION_LIMITS, IssuerUrlTakenError, byCreation, type FederationStore } from '../../lambdas/federation/federation-store';
import type { FederationIssuer, FederationPolicy } from '../../lambdas/federation/types';

/**
 * The federation store in memory, with the same contract as the DynamoDB one (URL
 * uniqueness per organization, per-organization count limits, version-conditional
 * writes). For unit tests of domain code that reads or writes federation configuration.
 * Values are copied in and out, so a caller mutating what it got cannot change what is
 * stored.
 */
export class MemoryFederationStore implements FederationStore {
  private readonly issuers = new Map<string, FederationIssuer>();
  private readonly policies = new Map<string, FederationPolicy>();

  async getPolicy(policyId: string): Promise<FederationPolicy | undefined> {
    return copy(this.policies.get(policyId));
  }

  async getIssuer(organizationId: string, issuerId: string): Promise<FederationIssuer | undefined> {
    const issuer = this.issuers.get(issuerId);
    return issuer?.organizationId === organizationId ? copy(issuer) : undefined;
  }

  async createIssuer(issuer: FederationIssuer, limit: number = FEDERATION_LIMITS.issuers): Promise<void> {
    if (this.issuers.has(issuer.id)) throw new Error(`issuer ${issuer.id} already exists`);
    if (countOf(this.issuers, issuer.organizationId) >= limit) throw new CountLimitReachedError('issuers', limit);
    this.assertUrlFree(issuer);
    this.issuers.set(issuer.id, copy(issuer));
  }

  async listIssuers(organizationId: string): Promise<FederationIssuer[]> {
    return [...this.issuers.values()].filter((i) => i.organizationId === organizationId).sort(byCreation).map(copy);
  }

  async updateIssuer(next: FederationIssuer, expectedVersion: number): Promise<boolean> {
    const current = this.issuers.get(next.id);
    if (!current || current.organizationId !== next.organizationId || current.version !== expectedVersion) return false;
    this.assertUrlFree(next);
    this.issuers.set(next.id, copy(next));
    return true;
  }

  async deleteIssuer(organizationId: string, issuerId: string): Promise<boolean> {
    if (this.issuers.get(issuerId)?.organizationId !== organizationId) return false;
    return this.issuers.delete(issuerId);
  }

  async createPolicy(policy: FederationPolicy, limit: number = FEDERATION_LIMITS.policies): Promise<void> {
    if (this.policies.has(policy.id)) throw new Error(`policy ${policy.id} already exists`);
    if (countOf(this.policies, policy.organizationId) >= limit) throw new CountLimitReachedError('policies', limit);
    this.policies.set(policy.id, copy(policy));
  }

  async listPolicies(organizationId: string, issuerId?: string): Promise<FederationPolicy[]> {
    return [...this.policies.values()]
      .filter((p) => p.organizationId === organizationId && (issuerId === undefined || p.issuerId === issuerId))
      .sort(byCreation)
      .map(copy);
  }

  async updatePolicy(next: FederationPolicy, expectedVersion: number): Promise<boolean> {
    const current = this.policies.get(next.id);
    if (!current || current.organizationId !== next.organizationId || current.version !== expectedVersion) return false;
    this.policies.set(next.id, copy(next));
    return true;
  }

  async deletePolicy(organizationId: string, policyId: string): Promise<boolean> {
    if (this.policies.get(policyId)?.organizationId !== organizationId) return false;
    return this.policies.delete(policyId);
  }

  private assertUrlFree(issuer: FederationIssuer): void {
    for (const other of this.issuers.values()) {
      if (other.id !== issuer.id && other.organizationId === issuer.organizationId && other.issuerUrl === issuer.issuerUrl) {
        throw new IssuerUrlTakenError(issuer.issuerUrl);
      }
    }
  }
}

function countOf(items: Map<string, { organizationId: string }>, organizationId: string): number {
  return [...items.values()].filter((item) => item.organizationId === organizationId).length;
}

function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}
