import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, invalidParameter } from '../errors';
import { randomId, systemClock, type Clock, type IdGenerator } from '../clock';
import { defaultWorkspaceOf, type AccountStore, type GuardrailIndexRepair, type KeyPage, type WorkspacePatch } from './account-store';
import { generateApiKey, type RandomBytes } from './api-keys';
import { GuardrailsService, conflictIfExists, type GuardrailInput, type GuardrailUpdate, type KeyAssignment, type ListWindow } from './guardrails-service';
import { checkExpiry } from './key-expiry';
import { keyLimitAfter } from './spend-limits';
import { WorkspaceBudgetsService, type WorkspaceBudgetOf } from './workspace-budgets-service';
import type { BudgetInterval, ResetInterval } from './stored-limits';
import {
  DEFAULT_PRIVACY,
  DEFAULT_PROVIDER_PREFERENCES,
  type AccessLevel,
  type ApiKeyRecord,
  type Guardrail,
  type KeyKind,
  type Organization,
  type Plan,
  type PrivacySettings,
  type ProviderPreferences,
  type User,
  type Workspace,
  WORKSPACE_LIMITS,
  WORKSPACE_SLUG,
} from './types';

/** The account store, and the clock, id and randomness sources tests replace. */
export interface AccountsDeps {
  store: AccountStore;
  clock?: Clock;
  newId?: IdGenerator;
  random?: RandomBytes;
}

/** What {@link AccountsService.createApiKey} takes: which fields apply depends on the key's kind. */
export interface NewApiKey {
  kind: KeyKind;
  name: string;
  /** Workspace keys; personal keys default to the organization's first workspace. */
  workspaceId?: string;
  /** Management keys. @default 'read-write' */
  accessLevel?: AccessLevel;
  /** Personal keys. */
  userId?: string;
  expiresAt?: string | null;
  /** USD, 0 or more; absent or null: no limit (docs/limits.md). */
  limit?: number | null;
  /** The limit's window; absent or null: all time. Only with a limit. */
  limitReset?: ResetInterval | null;
  /** Stored and shown as given. @default false */
  includeByokInLimit?: boolean;
}

/** What an update of a key may change: each field absent stays as it is; `limit: null` removes the limit. */
export interface ApiKeyChange {
  name?: string;
  disabled?: boolean;
  limit?: number | null;
  limitReset?: ResetInterval | null;
  includeByokInLimit?: boolean;
}

export type { GuardrailInput, GuardrailUpdate, KeyAssignment, ListWindow } from './guardrails-service';
export type { WorkspaceBudgetOf } from './workspace-budgets-service';

/**
 * Organization, workspace, user, key and guardrail operations shared by the management
 * API, the operator CLI and the local demo seed. Validation lives here, not in callers.
 */
export class AccountsService {
  private readonly store: AccountStore;
  private readonly clock: Clock;
  private readonly newId: IdGenerator;
  private readonly random?: RandomBytes;
  private readonly guardrails: GuardrailsService;
  private readonly budgets: WorkspaceBudgetsService;

  constructor(deps: AccountsDeps) {
    this.store = deps.store;
    this.clock = deps.clock ?? systemClock;
    this.newId = deps.newId ?? randomId;
    this.random = deps.random;
    this.guardrails = new GuardrailsService(this.store, this.clock, this.newId);
    this.budgets = new WorkspaceBudgetsService(this.store, this.clock, this.newId);
  }

  /** Creates an organization with a default workspace, as every organization has one. */
  async createOrganization(input: { name: string; plan: Plan; id?: string }): Promise<{ organization: Organization; workspace: Workspace }> {
    const now = this.timestamp();
    const organization: Organization = {
      id: input.id ?? this.newId(),
      name: input.name,
      plan: input.plan,
      providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES },
      privacy: { ...DEFAULT_PRIVACY },
      createdAt: now,
      updatedAt: null,
    };
    await conflictIfExists(() => this.store.createOrganization(organization));
    const workspace = await this.createWorkspace(organization.id, { name: 'Default' });
    return { organization, workspace };
  }

  async getOrganization(id: string): Promise<Organization> {
    const organization = await this.store.getOrganization(id);
    if (!organization) throw new NotFoundError(`Organization ${id} not found`);
    return organization;
  }

  listOrganizations(): Promise<Organization[]> {
    return this.store.listOrganizations();
  }

  /**
   * Brings an organization's guardrail index to its keys' assignments (an organization an earlier
   * release created has none) and marks it whole: what it entered and removed.
   */
  async indexGuardrailKeys(organizationId: string): Promise<GuardrailIndexRepair> {
    await this.getOrganization(organizationId);
    return this.store.indexGuardrailKeys(organizationId, this.timestamp());
  }

  async setPlan(organizationId: string, plan: Plan): Promise<Organization> {
    return this.updateOrganization(organizationId, { plan });
  }

  async setProviderPreferences(organizationId: string, preferences: ProviderPreferences): Promise<Organization> {
    const overlap = (preferences.allowedProviders ?? []).filter((p) => preferences.ignoredProviders.includes(p));
    if (overlap.length > 0) {
      throw new InvalidInputError(`Providers cannot be both allowed and ignored: ${overlap.join(', ')}`);
    }
    return this.updateOrganization(organizationId, { providerPreferences: preferences });
  }

  async setPrivacy(organizationId: string, privacy: PrivacySettings): Promise<Organization> {
    return this.updateOrganization(organizationId, { privacy });
  }

  async createWorkspace(organizationId: string, input: { name: string; description?: string | null; slug?: string }): Promise<Workspace> {
    const workspace: Workspace = {
      id: this.newId(),
      organizationId,
      name: input.name,
      slug: input.slug ?? slugify(input.name),
      description: input.description ?? null,
      guardrailIds: [],
      createdAt: this.timestamp(),
      updatedAt: null,
    };
    if (input.slug !== undefined && !WORKSPACE_SLUG.test(input.slug)) {
      throw invalidParameter('slug', 'must be 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit');
    }
    if (workspace.slug === '') throw invalidParameter('name', 'must contain a letter or digit');
    await this.getOrganization(organizationId);
    // The store claims the slug atomically; this check also covers workspaces created
    // before slugs were claimed.
    const existing = await this.store.listWorkspaces(organizationId);
    if (existing.some((w) => w.slug === workspace.slug)) {
      throw new ConflictError(`A workspace with slug "${workspace.slug}" already exists`);
    }
    await conflictIfExists(() => this.store.createWorkspace(workspace));
    return workspace;
  }

  async getWorkspace(organizationId: string, id: string): Promise<Workspace> {
    const workspace = await this.store.getWorkspace(organizationId, id);
    if (!workspace) throw new NotFoundError(`Workspace ${id} not found`);
    return workspace;
  }

  /** A workspace named by its id or its slug, as the public `/workspaces/{id}` names it. */
  async findWorkspace(organizationId: string, idOrSlug: string): Promise<Workspace> {
    const workspace = await this.store.findWorkspace(organizationId, idOrSlug);
    if (!workspace) throw new NotFoundError(`Workspace ${idOrSlug} not found`);
    return workspace;
  }

  listWorkspaces(organizationId: string): Promise<Workspace[]> {
    return this.store.listWorkspaces(organizationId);
  }

  /** Renames a workspace (named by its id or its slug), changes its slug (unique, as on create) or its description. */
  async updateWorkspace(organizationId: string, idOrSlug: string, patch: WorkspacePatch): Promise<Workspace> {
    const current = await this.findWorkspace(organizationId, idOrSlug);
    const id = current.id;
    if (patch.slug !== undefined && patch.slug !== current.slug) {
      if (!WORKSPACE_SLUG.test(patch.slug)) throw invalidParameter('slug', 'must be 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit');
      // As on create: workspaces from before slugs were claimed hold theirs without a claim.
      if ((await this.store.listWorkspaces(organizationId)).some((w) => w.slug === patch.slug && w.id !== id)) {
        throw new ConflictError(`A workspace with slug "${patch.slug}" already exists`);
      }
    }
    const updated = await conflictIfExists(() => this.store.updateWorkspace(organizationId, id, patch, this.timestamp()));
    if (!updated) throw new NotFoundError(`Workspace ${id} not found`);
    return updated;
  }

  /**
   * Deletes a workspace that holds no key (any key: a disabled one could be enabled again),
   * then its guardrails; the organization's first workspace, where keys go by default, stays.
   * A key created at the same time either is refused (the workspace is gone) or makes this
   * delete refuse: both write the workspace item, under conditions (AccountStore.deleteWorkspace).
   * The workspace is named by its id or its slug.
   */
  async deleteWorkspace(organizationId: string, idOrSlug: string): Promise<void> {
    const { id } = await this.findWorkspace(organizationId, idOrSlug);
    if ((await this.defaultWorkspace(organizationId)).id === id) {
      throw new ForbiddenError("The organization's default workspace cannot be deleted");
    }
    const deletion = await this.store.deleteWorkspace(organizationId, id);
    if (deletion.outcome === 'missing') throw new NotFoundError(`Workspace ${id} not found`);
    if (deletion.outcome === 'has-keys') {
      const count = deletion.keys;
      throw new InvalidInputError(`Workspace ${id} has ${count} API key${count === 1 ? '' : 's'}; delete ${count === 1 ? 'it' : 'them'} first`);
    }
    await this.guardrails.deleteWorkspaceGuardrails(organizationId, id);
  }

  /** A workspace's budgets, narrowest interval first (workspace-budgets-service.ts, as each of the three below). */
  listWorkspaceBudgets(organizationId: string, idOrSlug: string): Promise<{ workspace: Workspace; budgets: WorkspaceBudgetOf[] }> {
    return this.budgets.list(organizationId, idOrSlug);
  }

  getWorkspaceBudget(organizationId: string, idOrSlug: string, interval: BudgetInterval): Promise<WorkspaceBudgetOf> {
    return this.budgets.get(organizationId, idOrSlug, interval);
  }

  putWorkspaceBudget(organizationId: string, idOrSlug: string, interval: BudgetInterval, input: { limitUsd: number; includeByokInBudgets?: boolean }): Promise<WorkspaceBudgetOf> {
    return this.budgets.put(organizationId, idOrSlug, interval, input);
  }

  deleteWorkspaceBudget(organizationId: string, idOrSlug: string, interval: BudgetInterval): Promise<void> {
    return this.budgets.delete(organizationId, idOrSlug, interval);
  }

  async createUser(organizationId: string, input: { email: string; name: string }): Promise<User> {
    await this.getOrganization(organizationId);
    const user: User = { id: this.newId(), organizationId, email: input.email, name: input.name, createdAt: this.timestamp() };
    await conflictIfExists(() => this.store.createUser(user));
    return user;
  }

  /** Creates a key and returns its secret, the only time the secret exists outside the caller. */
  async createApiKey(organizationId: string, input: NewApiKey): Promise<{ key: ApiKeyRecord; secret: string }> {
    await this.getOrganization(organizationId);
    let workspaceId: string | null = null;
    let userId: string | null = null;
    let accessLevel: AccessLevel | null = null;
    if (input.kind === 'management') {
      if (input.workspaceId) throw invalidParameter('workspace_id', 'management keys belong to the organization, not a workspace');
      accessLevel = input.accessLevel ?? 'read-write';
    } else {
      if (input.accessLevel) throw invalidParameter('access_level', 'applies to management keys only');
      workspaceId = input.workspaceId ?? (await this.defaultWorkspace(organizationId)).id;
      await this.getWorkspace(organizationId, workspaceId);
    }
    if (input.kind === 'personal') {
      if (!input.userId) throw invalidParameter('user_id', 'is required for a personal key');
      if (!(await this.store.getUser(organizationId, input.userId))) throw new NotFoundError(`User ${input.userId} not found`);
      userId = input.userId;
    } else if (input.userId) {
      throw invalidParameter('user_id', 'applies to personal keys only');
    }
    if (input.expiresAt != null) checkExpiry(input.expiresAt, this.clock.now());
    const createdAt = this.timestamp();
    const limit = keyLimitAfter(undefined, { amount: input.limit, reset: input.limitReset }, createdAt);
    const generated = generateApiKey(this.random);
    const key: ApiKeyRecord = {
      hash: generated.hash,
      organizationId,
      kind: input.kind,
      workspaceId,
      accessLevel,
      userId,
      name: input.name,
      label: generated.label,
      disabled: false,
      guardrailIds: [],
      // Absent means none: only a key given a limit or the flag stores them.
      ...(limit ? { limit } : {}),
      ...(input.includeByokInLimit !== undefined ? { includeByokInLimit: input.includeByokInLimit } : {}),
      expiresAt: input.expiresAt ?? null,
      createdAt,
      updatedAt: null,
    };
    // Counted in its workspace in the same write, so the workspace cannot be deleted under it.
    const created = await conflictIfExists(() => this.store.createApiKey(key));
    if (created === 'missing') throw new NotFoundError(`Workspace ${workspaceId} not found`);
    if (created === 'full') throw invalidParameter('workspace_id', `workspace ${workspaceId} holds ${WORKSPACE_LIMITS.keys.toLocaleString('en-US')} keys already, the most one may hold`);
    return { key, secret: generated.secret };
  }

  /** A key of this organization; another organization's key is reported as absent. */
  async getApiKey(organizationId: string, hash: string): Promise<ApiKeyRecord> {
    const key = await this.store.getApiKey(hash);
    if (!key || key.organizationId !== organizationId) throw new NotFoundError(`API key ${hash} not found`);
    return key;
  }

  /** The organization's keys, oldest first: all of them, or only those of `page`. */
  listApiKeys(organizationId: string, page?: KeyPage): Promise<ApiKeyRecord[]> {
    return this.store.listApiKeys(organizationId, page);
  }

  /**
   * The keys of one workspace, oldest first: of the organization's default workspace when none
   * is named (the public key list's default). A workspace that does not exist holds none.
   */
  async listWorkspaceApiKeys(organizationId: string, workspaceId?: string, page?: KeyPage): Promise<ApiKeyRecord[]> {
    return (await this.store.listWorkspaceApiKeys(organizationId, workspaceId, page))?.keys ?? [];
  }

  /** The id of the organization's default workspace, where keys go when no workspace is named. */
  async defaultWorkspaceId(organizationId: string): Promise<string> {
    return (await this.defaultWorkspace(organizationId)).id;
  }

  /** The limit is computed from the key as the write reads it (spend-limits.ts), so `since` follows the stored limit. */
  async updateApiKey(organizationId: string, hash: string, change: ApiKeyChange): Promise<ApiKeyRecord> {
    await this.getApiKey(organizationId, hash);
    const { limit: amount, limitReset: reset, ...fields } = change;
    const now = this.timestamp();
    const updated = await this.store.updateApiKey(hash, (current) => ({ ...fields, limit: keyLimitAfter(current.limit, { amount, reset }, now) }), now);
    if (!updated) throw new NotFoundError(`API key ${hash} not found`);
    return updated;
  }

  async deleteApiKey(organizationId: string, hash: string): Promise<void> {
    // Another organization's key is reported as absent.
    await this.getApiKey(organizationId, hash);
    if (!(await this.store.deleteApiKey(hash))) throw new NotFoundError(`API key ${hash} not found`);
  }

  createGuardrail(organizationId: string, input: GuardrailInput): Promise<Guardrail> {
    return this.guardrails.create(organizationId, input);
  }

  getGuardrail(organizationId: string, id: string): Promise<Guardrail> {
    return this.guardrails.get(organizationId, id);
  }

  listGuardrails(organizationId: string): Promise<Guardrail[]> {
    return this.guardrails.list(organizationId);
  }

  /** Writes a workspace's default guardrail the first time it is updated (guardrails-service.ts). */
  updateGuardrail(organizationId: string, id: string, patch: GuardrailUpdate): Promise<Guardrail> {
    return this.guardrails.update(organizationId, id, patch);
  }

  deleteGuardrail(organizationId: string, id: string): Promise<void> {
    return this.guardrails.delete(organizationId, id);
  }

  /** Returns how many keys gained the guardrail (not those that had it). */
  assignGuardrailToKeys(organizationId: string, guardrailId: string, hashes: readonly string[]): Promise<number> {
    return this.guardrails.assignToKeys(organizationId, guardrailId, hashes);
  }

  /** Returns how many keys lost the guardrail. */
  unassignGuardrailFromKeys(organizationId: string, guardrailId: string, hashes: readonly string[]): Promise<number> {
    return this.guardrails.unassignFromKeys(organizationId, guardrailId, hashes);
  }

  /** A window of the keys' guardrail assignments (of one guardrail, or of all; every one without a window), and their count. */
  listKeyAssignments(organizationId: string, guardrailId?: string, window?: ListWindow): Promise<{ items: KeyAssignment[]; total: number }> {
    return this.guardrails.keyAssignments(organizationId, guardrailId, window);
  }

  /** Attaches (or detaches) a guardrail to every request made with the workspace's keys. */
  setWorkspaceGuardrail(organizationId: string, guardrailId: string, workspaceId: string, attached: boolean): Promise<Workspace> {
    return this.guardrails.setWorkspaceGuardrail(organizationId, guardrailId, workspaceId, attached);
  }

  private async defaultWorkspace(organizationId: string): Promise<Workspace> {
    const first = defaultWorkspaceOf(await this.store.listWorkspaces(organizationId));
    if (!first) throw new NotFoundError(`Organization ${organizationId} has no workspace`);
    return first;
  }

  private async updateOrganization(id: string, patch: Parameters<AccountStore['updateOrganization']>[1]): Promise<Organization> {
    const updated = await this.store.updateOrganization(id, patch, this.timestamp());
    if (!updated) throw new NotFoundError(`Organization ${id} not found`);
    return updated;
  }

  private timestamp(): string {
    return this.clock.now().toISOString();
  }
}

function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
}
