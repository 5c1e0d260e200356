import { ConflictError, InvalidInputError, NotFoundError, invalidParameter } from '../errors';
import { randomId, systemClock, type Clock, type IdGenerator } from '../clock';
import { AlreadyExistsError, type AccountStore, type GuardrailHolder, type GuardrailPatch } from './account-store';
import { generateApiKey, type RandomBytes } from './api-keys';
import { checkExpiry } from './key-expiry';
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
  WORKSPACE_SLUG,
} from './types';

export interface AccountsDeps {
  store: AccountStore;
  clock?: Clock;
  newId?: IdGenerator;
  random?: RandomBytes;
}

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
}

export type GuardrailInput = Omit<Guardrail, 'id' | 'organizationId' | 'version' | 'createdAt' | 'updatedAt'>;

/**
 * How often a versioned update is tried: each round of conflicting writers has one winner,
 * so this many concurrent writers of one item all get an answer from their rules; past
 * that, the caller gets a 409 to retry (as for issuers and policies).
 */
const UPDATE_ATTEMPTS = 10;

/**
 * Organization, workspace, user, key and guardrail operations shared by the management
 * API, the operator CLI and the local demo seed. Validation lives here, not in callers.
 */
export class AccountsService {
  private readonly store: AccountStore;
  private readonly clock: Clock;
  private readonly newId: IdGenerator;
  private readonly random?: RandomBytes;

  constructor(deps: AccountsDeps) {
    this.store = deps.store;
    this.clock = deps.clock ?? systemClock;
    this.newId = deps.newId ?? randomId;
    this.random = deps.random;
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
    await this.translate(() => this.store.createOrganization(organization));
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
    await this.translate(() => this.store.createWorkspace(workspace));
    return workspace;
  }

  async getWorkspace(organizationId: string, id: string): Promise<Workspace> {
    const workspace = await this.store.getWorkspace(organizationId, id);
    if (!workspace) throw new NotFoundError(`Workspace ${id} not found`);
    return workspace;
  }

  listWorkspaces(organizationId: string): Promise<Workspace[]> {
    return this.store.listWorkspaces(organizationId);
  }

  async createUser(organizationId: string, input: { email: string; name: string }): Promise<User> {
    await this.getOrganization(organizationId);
    const user: User = { id: this.newId(), organizationId, email: input.email, name: input.name, createdAt: this.timestamp() };
    await this.translate(() => this.store.createUser(user));
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
      expiresAt: input.expiresAt ?? null,
      createdAt: this.timestamp(),
      updatedAt: null,
    };
    await this.translate(() => this.store.createApiKey(key));
    return { key, secret: generated.secret };
  }

  /** A key of this organization; another organization's key is reported as absent. */
  async getApiKey(organizationId: string, hash: string): Promise<ApiKeyRecord> {
    const key = await this.store.getApiKey(hash);
    if (!key || key.organizationId !== organizationId) throw new NotFoundError(`API key ${hash} not found`);
    return key;
  }

  listApiKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    return this.store.listApiKeys(organizationId);
  }

  async updateApiKey(organizationId: string, hash: string, patch: { name?: string; disabled?: boolean }): Promise<ApiKeyRecord> {
    await this.getApiKey(organizationId, hash);
    const updated = await this.store.updateApiKey(hash, patch, this.timestamp());
    if (!updated) throw new NotFoundError(`API key ${hash} not found`);
    return updated;
  }

  async deleteApiKey(organizationId: string, hash: string): Promise<void> {
    await this.getApiKey(organizationId, hash);
    if (!(await this.store.deleteApiKey(hash))) throw new NotFoundError(`API key ${hash} not found`);
  }

  async createGuardrail(organizationId: string, input: GuardrailInput): Promise<Guardrail> {
    await this.getOrganization(organizationId);
    if (input.workspaceId) await this.getWorkspace(organizationId, input.workspaceId);
    checkGuardrailLists(input);
    const guardrail: Guardrail = {
      ...input,
      id: this.newId(),
      organizationId,
      version: 1,
      createdAt: this.timestamp(),
      updatedAt: null,
    };
    await this.translate(() => this.store.createGuardrail(guardrail));
    return guardrail;
  }

  async getGuardrail(organizationId: string, id: string): Promise<Guardrail> {
    const guardrail = await this.store.getGuardrail(organizationId, id);
    if (!guardrail) throw new NotFoundError(`Guardrail ${id} not found`);
    return guardrail;
  }

  listGuardrails(organizationId: string): Promise<Guardrail[]> {
    return this.store.listGuardrails(organizationId);
  }

  /**
   * Applies the patch to a fresh read and writes it only while the guardrail is at that
   * read's version, as issuers and policies are written: a concurrent update makes the write
   * fail, and the patch is checked again against what that update left, so two PATCHes can
   * never together put a model in both lists.
   */
  async updateGuardrail(organizationId: string, id: string, patch: GuardrailPatch): Promise<Guardrail> {
    const given = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const current = await this.getGuardrail(organizationId, id);
      const next: Guardrail = { ...current, ...given, version: (current.version ?? 0) + 1, updatedAt: this.timestamp() };
      checkGuardrailLists(next);
      if (await this.store.updateGuardrail(next, current.version)) return next;
    }
    throw new ConflictError('The guardrail was changed by another request at the same time; retry');
  }

  /**
   * Deletes a guardrail and detaches it from the keys and workspaces it was on.
   *
   * No dangling ids, in either order of a concurrent assignment (no transactions, so by
   * ordering): the guardrail item goes first; then every key and workspace of the
   * organization that holds the id, as read after that, loses it by a conditional
   * `DELETE`. An assignment re-reads the guardrail after its write
   * ({@link confirmGuardrailExists}): if it still saw the guardrail, its write came before
   * the delete and so before the sweep's reads, which find and remove it; if not, it
   * removes its own write. Readers also ignore ids whose guardrail is gone
   * (`getGuardrails` returns existing ones only), and ids are never reused, so an id left
   * by a crash mid-sweep restricts nothing.
   */
  async deleteGuardrail(organizationId: string, id: string): Promise<void> {
    await this.getGuardrail(organizationId, id);
    if (!(await this.store.deleteGuardrail(organizationId, id))) throw new NotFoundError(`Guardrail ${id} not found`);
    const now = this.timestamp();
    // Both listings read the items themselves, strongly consistent, after the delete.
    const holders: GuardrailHolder[] = [
      ...(await this.store.listApiKeys(organizationId))
        .filter((key) => key.guardrailIds.includes(id))
        .map((key) => ({ kind: 'key' as const, hash: key.hash })),
      ...(await this.store.listWorkspaces(organizationId))
        .filter((workspace) => workspace.guardrailIds.includes(id))
        .map((workspace) => ({ kind: 'workspace' as const, organizationId, id: workspace.id })),
    ];
    await inBatches(holders, (holder) => this.store.removeGuardrail(holder, id, now));
  }

  /** Attaches a guardrail to keys; returns how many keys gained it (not those that had it). */
  async assignGuardrailToKeys(organizationId: string, guardrailId: string, hashes: readonly string[]): Promise<number> {
    await this.getGuardrail(organizationId, guardrailId);
    const keys = await Promise.all([...new Set(hashes)].map((hash) => this.getApiKey(organizationId, hash)));
    const now = this.timestamp();
    const added: GuardrailHolder[] = [];
    for (const key of keys) {
      const holder = { kind: 'key', hash: key.hash } as const;
      // A key deleted meanwhile no longer needs the guardrail: it is simply not counted.
      if ((await this.store.addGuardrail(holder, guardrailId, now)) === 'changed') added.push(holder);
    }
    await this.confirmGuardrailExists(organizationId, guardrailId, added);
    return added.length;
  }

  /** Detaches a guardrail from keys; returns how many keys lost it. */
  async unassignGuardrailFromKeys(organizationId: string, guardrailId: string, hashes: readonly string[]): Promise<number> {
    // An unknown guardrail is reported, not silently accepted as "nothing to remove".
    await this.getGuardrail(organizationId, guardrailId);
    const keys = await Promise.all([...new Set(hashes)].map((hash) => this.getApiKey(organizationId, hash)));
    const now = this.timestamp();
    let changed = 0;
    for (const key of keys) {
      if ((await this.store.removeGuardrail({ kind: 'key', hash: key.hash }, guardrailId, now)) === 'changed') changed++;
    }
    return changed;
  }

  /** Attaches (or detaches) a guardrail to every request made with the workspace's keys. */
  async setWorkspaceGuardrail(organizationId: string, guardrailId: string, workspaceId: string, attached: boolean): Promise<Workspace> {
    await this.getWorkspace(organizationId, workspaceId);
    await this.getGuardrail(organizationId, guardrailId);
    const holder = { kind: 'workspace', organizationId, id: workspaceId } as const;
    const now = this.timestamp();
    const result = attached
      ? await this.store.addGuardrail(holder, guardrailId, now)
      : await this.store.removeGuardrail(holder, guardrailId, now);
    if (result === 'missing') throw new NotFoundError(`Workspace ${workspaceId} not found`);
    if (attached && result === 'changed') await this.confirmGuardrailExists(organizationId, guardrailId, [holder]);
    return this.getWorkspace(organizationId, workspaceId);
  }

  /**
   * The second half of the no-dangling-ids protocol (see {@link deleteGuardrail}): after
   * adding the id, make sure the guardrail still exists; if it was deleted meanwhile, take
   * the id back off and report the guardrail as missing.
   */
  private async confirmGuardrailExists(organizationId: string, guardrailId: string, added: readonly GuardrailHolder[]): Promise<void> {
    if (added.length === 0 || (await this.store.getGuardrail(organizationId, guardrailId))) return;
    const now = this.timestamp();
    await inBatches(added, (holder) => this.store.removeGuardrail(holder, guardrailId, now));
    throw new NotFoundError(`Guardrail ${guardrailId} not found`);
  }

  private async defaultWorkspace(organizationId: string): Promise<Workspace> {
    const workspaces = await this.store.listWorkspaces(organizationId);
    const first = [...workspaces].sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
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

  private async translate<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof AlreadyExistsError) throw new ConflictError(error.message);
      throw error;
    }
  }
}

function checkGuardrailLists(g: Pick<Guardrail, 'allowedModels' | 'ignoredModels' | 'allowedProviders' | 'ignoredProviders'>): void {
  const both = (a: string[] | null, b: string[] | null) => (a ?? []).filter((x) => (b ?? []).includes(x));
  const models = both(g.allowedModels, g.ignoredModels);
  if (models.length > 0) throw new InvalidInputError(`Models cannot be both allowed and ignored: ${models.join(', ')}`);
  const providers = both(g.allowedProviders, g.ignoredProviders);
  if (providers.length > 0) throw new InvalidInputError(`Providers cannot be both allowed and ignored: ${providers.join(', ')}`);
}


/** Runs one store call per item, a few at a time: many in flight, none unbounded. */
async function inBatches<T>(items: readonly T[], run: (item: T) => Promise<unknown>, size = 16): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map(run));
  }
}

function slugify(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
}
