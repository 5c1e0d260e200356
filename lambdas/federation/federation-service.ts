import type { AccountStore } from '../accounts/account-store';
import type { ApiKeyRecord, Organization } from '../accounts/types';
import { randomId, systemClock, type Clock, type IdGenerator } from '../clock';
import { ConflictError, ForbiddenError, NotFoundError, invalidParameter } from '../errors';
import { checkId, isUuid } from '../ids';
import { CountLimitReachedError, FEDERATION_LIMITS, IssuerUrlTakenError, type FederationStore } from './federation-store';
import {
  applyPolicyPatch,
  checkKeySource,
  checkPolicyRules,
  multiTenantProvider,
  parseIssuerCreate,
  parseIssuerPatch,
  parsePolicyCreate,
  parsePolicyPatch,
  type HostRules,
} from './federation-validation';
import { hasFederationEntitlement, type FederationIssuer, type FederationPolicy, type FederationScope } from './types';

/** The stores the service works on, the issuer host rules, and the limits per organization. */
export interface FederationServiceDeps {
  store: FederationStore;
  accounts: AccountStore;
  hosts: HostRules;
  clock?: Clock;
  newId?: IdGenerator;
  /**
   * How many issuers and policies one organization may have, enforced by the store
   * atomically with each create. @default {@link FEDERATION_LIMITS}
   */
  limits?: { issuers: number; policies: number };
}

/** The 403's message when an organization's plan lacks workload identity federation. */
export const ENTITLEMENT_MESSAGE = 'Workload identity federation requires the Business or Enterprise plan';

/**
 * How often an update is tried. Each round of conflicting writers has one winner, so this many
 * concurrent writers of one item all succeed; past that, the caller gets a 409 to retry.
 */
const UPDATE_ATTEMPTS = 10;

type Input = Record<string, unknown>;

/**
 * Issuers and policies of an organization (docs/reference.md#issuers, docs/reference.md#federation-policies), for the management API and the
 * operator CLI: both hand in input in the API's wire names and get the same validation
 * (federation-validation.ts) and the same errors.
 *
 * Deleting an issuer deletes its policies (docs/reference.md#lifecycle: new exchanges fail, issued tokens are
 * untouched). The issuer goes first, so from that moment every exchange naming one of its
 * policies fails (the exchange needs the issuer); a policy whose issuer is gone is treated as
 * deleted by every read here, even if removing it was interrupted.
 */
export class FederationService {
  private readonly store: FederationStore;
  private readonly accounts: AccountStore;
  private readonly hosts: HostRules;
  private readonly clock: Clock;
  private readonly newId: IdGenerator;
  private readonly limits: { issuers: number; policies: number };

  constructor(deps: FederationServiceDeps) {
    this.store = deps.store;
    this.accounts = deps.accounts;
    this.hosts = deps.hosts;
    this.clock = deps.clock ?? systemClock;
    this.newId = deps.newId ?? randomId;
    this.limits = deps.limits ?? FEDERATION_LIMITS;
  }

  async listIssuers(organizationId: string): Promise<FederationIssuer[]> {
    return this.store.listIssuers(organizationId);
  }

  async getIssuer(organizationId: string, issuerId: string): Promise<FederationIssuer> {
    // An id of the wrong shape cannot exist and is not echoed (as at the HTTP boundary).
    if (!isUuid(issuerId)) throw new NotFoundError('Issuer not found');
    const issuer = await this.store.getIssuer(organizationId, issuerId);
    if (!issuer) throw new NotFoundError(`Issuer ${issuerId} not found`);
    return issuer;
  }

  async createIssuer(organizationId: string, input: Input): Promise<FederationIssuer> {
    await this.requireEntitlement(organizationId);
    const fields = parseIssuerCreate(input, this.hosts);
    const issuer: FederationIssuer = {
      id: this.newId(),
      organizationId,
      ...fields,
      version: 1,
      createdAt: this.timestamp(),
      updatedAt: null,
    };
    await this.translate(() => this.store.createIssuer(issuer, this.limits.issuers));
    return issuer;
  }

  async updateIssuer(organizationId: string, issuerId: string, input: Input): Promise<FederationIssuer> {
    await this.requireEntitlement(organizationId);
    await this.getIssuer(organizationId, issuerId);
    const patch = parseIssuerPatch(input, this.hosts);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const current = await this.getIssuer(organizationId, issuerId);
      const next: FederationIssuer = {
        ...current,
        name: patch.name ?? current.name,
        issuerUrl: patch.issuerUrl ?? current.issuerUrl,
        jwksUrl: patch.jwksUrl === undefined ? current.jwksUrl : patch.jwksUrl,
        jwks: patch.jwks === undefined ? current.jwks : patch.jwks,
        checkJti: patch.checkJti ?? current.checkJti,
        version: current.version + 1,
        updatedAt: this.timestamp(),
      };
      checkKeySource(next);
      if (next.issuerUrl !== current.issuerUrl) await this.checkPoliciesAllowUrl(next);
      if (await this.translate(() => this.store.updateIssuer(next, current.version))) return next;
    }
    throw concurrentChange('issuer');
  }

  /** Deletes the issuer, then its policies (see the class comment for why in this order). */
  async deleteIssuer(organizationId: string, issuerId: string): Promise<void> {
    await this.getIssuer(organizationId, issuerId);
    if (!(await this.store.deleteIssuer(organizationId, issuerId))) throw new NotFoundError(`Issuer ${issuerId} not found`);
    for (const policy of await this.store.listPolicies(organizationId, issuerId)) {
      await this.store.deletePolicy(organizationId, policy.id);
    }
  }

  async listPolicies(organizationId: string, issuerId?: string): Promise<FederationPolicy[]> {
    if (issuerId !== undefined) checkId(issuerId, 'issuer_id', 'uuid');
    const [policies, issuers] = await Promise.all([this.store.listPolicies(organizationId, issuerId), this.store.listIssuers(organizationId)]);
    const live = new Set(issuers.map((issuer) => issuer.id));
    const usable: FederationPolicy[] = [];
    for (const policy of policies) {
      // Left behind by an interrupted issuer deletion: finish the job instead of showing it.
      if (live.has(policy.issuerId)) usable.push(policy);
      else await this.store.deletePolicy(organizationId, policy.id);
    }
    return usable;
  }

  async getPolicy(organizationId: string, policyId: string): Promise<FederationPolicy> {
    return (await this.loadPolicy(organizationId, policyId)).policy;
  }

  async createPolicy(organizationId: string, input: Input): Promise<FederationPolicy> {
    await this.requireEntitlement(organizationId);
    const fields = parsePolicyCreate(input);
    const issuer = await this.issuerFor(organizationId, fields.issuerId);
    const scope = await this.scopeOfKey(organizationId, fields.apiKeyHash);
    checkPolicyRules(fields, issuer);
    const policy: FederationPolicy = {
      id: this.newId(),
      organizationId,
      ...fields,
      scope,
      version: 1,
      createdAt: this.timestamp(),
      updatedAt: null,
    };
    await this.translate(() => this.store.createPolicy(policy, this.limits.policies));
    return policy;
  }

  /**
   * Applies the patch to a fresh read and writes it conditional on that read's version; when
   * another writer got in between, the patch is applied again to what that writer left, so
   * concurrent updates of different fields both survive.
   */
  async updatePolicy(organizationId: string, policyId: string, input: Input): Promise<FederationPolicy> {
    await this.requireEntitlement(organizationId);
    await this.loadPolicy(organizationId, policyId);
    const patch = parsePolicyPatch(input);
    const scope = patch.apiKeyHash === undefined ? undefined : await this.scopeOfKey(organizationId, patch.apiKeyHash);
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const { policy: current, issuer: currentIssuer } = await this.loadPolicy(organizationId, policyId);
      const next: FederationPolicy = {
        ...applyPolicyPatch(current, patch),
        scope: scope ?? current.scope,
        version: current.version + 1,
        updatedAt: this.timestamp(),
      };
      const issuer = next.issuerId === current.issuerId ? currentIssuer : await this.issuerFor(organizationId, next.issuerId);
      checkPolicyRules(next, issuer);
      if (await this.store.updatePolicy(next, current.version)) return next;
    }
    throw concurrentChange('policy');
  }

  async setPolicyEnabled(organizationId: string, policyId: string, enabled: boolean): Promise<FederationPolicy> {
    return this.updatePolicy(organizationId, policyId, { enabled });
  }

  async deletePolicy(organizationId: string, policyId: string): Promise<void> {
    await this.loadPolicy(organizationId, policyId);
    if (!(await this.store.deletePolicy(organizationId, policyId))) throw new NotFoundError(`Policy ${policyId} not found`);
  }

  /** docs/reference.md#organizations-workspaces-and-guardrails: configuring federation needs the entitlement; reading and deleting do not. */
  private async requireEntitlement(organizationId: string): Promise<Organization> {
    const organization = await this.accounts.getOrganization(organizationId);
    if (!organization) throw new NotFoundError(`Organization ${organizationId} not found`);
    if (!hasFederationEntitlement(organization.plan)) throw new ForbiddenError(ENTITLEMENT_MESSAGE);
    return organization;
  }

  /** The policy and its issuer; a policy of another organization, or whose issuer is gone, does not exist. */
  private async loadPolicy(organizationId: string, policyId: string): Promise<{ policy: FederationPolicy; issuer: FederationIssuer }> {
    if (!isUuid(policyId)) throw new NotFoundError('Policy not found');
    const policy = await this.store.getPolicy(policyId);
    const issuer = policy?.organizationId === organizationId ? await this.store.getIssuer(organizationId, policy.issuerId) : undefined;
    if (!policy || !issuer) throw new NotFoundError(`Policy ${policyId} not found`);
    return { policy, issuer };
  }

  private async issuerFor(organizationId: string, issuerId: string): Promise<FederationIssuer> {
    const issuer = await this.store.getIssuer(organizationId, issuerId);
    if (!issuer) throw invalidParameter('issuer_id', 'no issuer with this id in the organization');
    return issuer;
  }

  /** docs/reference.md#federation-policies: a policy acts as a live workspace or management key of the organization; the key's kind fixes the scope. */
  private async scopeOfKey(organizationId: string, hash: string): Promise<FederationScope> {
    const key: ApiKeyRecord | undefined = await this.accounts.getApiKey(hash);
    if (!key || key.organizationId !== organizationId) throw invalidParameter('api_key_hash', 'no key with this hash in the organization');
    if (key.kind === 'personal') throw invalidParameter('api_key_hash', 'is a personal key: a policy acts as a workspace or management key');
    if (key.disabled) throw invalidParameter('api_key_hash', 'the key is disabled');
    if (key.expiresAt && Date.parse(key.expiresAt) <= this.clock.now().getTime()) throw invalidParameter('api_key_hash', 'the key has expired');
    return key.kind === 'management' ? 'management' : 'inference';
  }

  /** A move onto a multi-tenant issuer URL must not open the issuer's existing policies to every tenant. */
  private async checkPoliciesAllowUrl(issuer: FederationIssuer): Promise<void> {
    if (!multiTenantProvider(issuer.issuerUrl)) return;
    for (const policy of await this.store.listPolicies(issuer.organizationId, issuer.id)) {
      try {
        checkPolicyRules(policy, issuer);
      } catch {
        throw invalidParameter(
          'issuer_url',
          `policy ${policy.id} has no subject and its condition does not pin subject, which ${issuer.issuerUrl} requires: change the policy first`,
        );
      }
    }
  }

  private async translate<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof IssuerUrlTakenError || error instanceof CountLimitReachedError) throw new ConflictError(error.message);
      throw error;
    }
  }

  private timestamp(): string {
    return this.clock.now().toISOString();
  }
}

function concurrentChange(what: string): ConflictError {
  return new ConflictError(`The ${what} was changed by another request at the same time; retry`);
}
