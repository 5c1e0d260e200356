import type { ApiKeyRecord, Guardrail, Organization, User, Workspace } from './types';

/** The organization fields a management change may set. */
export type OrganizationPatch = Partial<Pick<Organization, 'name' | 'plan' | 'providerPreferences' | 'privacy'>>;
/** The key fields a management change may set: name, disabled, expiry and its spending limit. */
export type ApiKeyPatch = Partial<Pick<ApiKeyRecord, 'name' | 'disabled' | 'expiresAt' | 'limit' | 'includeByokInLimit'>>;
/** The workspace fields a management change may set; a new slug is claimed as on create. */
export type WorkspacePatch = Partial<Pick<Workspace, 'name' | 'slug' | 'description'>>;
/** A change of a workspace's budgets and its bring-your-own-key flag (docs/limits.md). */
export type WorkspaceBudgetsPatch = Partial<Pick<Workspace, 'budgets' | 'includeByokInBudgets'>>;

/** What deleting a workspace found: gone now, gone before, or still holding `keys` keys. */
export type WorkspaceDeletion = { outcome: 'deleted'; workspace: Workspace } | { outcome: 'missing' } | { outcome: 'has-keys'; keys: number };

/** A page of a key list: `limit` keys after the first `offset`, disabled keys counted only when included. */
export interface KeyPage {
  offset: number;
  limit: number;
  includeDisabled: boolean;
}

/** What a guardrail can be attached to: a key, or a workspace (and so every key in it). */
export type GuardrailHolder =
  | { readonly kind: 'key'; readonly hash: string }
  | { readonly kind: 'workspace'; readonly organizationId: string; readonly id: string };

/**
 * The outcome of adding an id to, or removing it from, a holder's guardrail set:
 * `changed` only when this call changed the set, so counts reported to callers are real;
 * `full` when the set holds `GUARDRAIL_LIMITS.perHolder` ids (types.ts) already and nothing was written.
 */
export type SetChange = 'changed' | 'unchanged' | 'missing' | 'full';
/** The guardrail fields a management change may set. */
export type GuardrailPatch = Partial<
  Pick<Guardrail, 'name' | 'description' | 'allowedModels' | 'ignoredModels' | 'allowedProviders' | 'ignoredProviders' | 'enforceZdr' | 'includeByokInBudgets'>
>;

/**
 * Persistence of accounts. Creates fail with {@link AlreadyExistsError} when the item
 * exists; updates and deletes of a missing item return `undefined` / `false`.
 *
 * Guardrail ids on keys and workspaces are never written as a whole list: each
 * assignment adds or removes one id atomically, so concurrent assignments cannot undo
 * each other (a read-modify-write of the list loses updates).
 */
export interface AccountStore {
  createOrganization(organization: Organization): Promise<void>;
  getOrganization(id: string): Promise<Organization | undefined>;
  listOrganizations(): Promise<Organization[]>;
  updateOrganization(id: string, patch: OrganizationPatch, updatedAt: string): Promise<Organization | undefined>;

  /**
   * Creates the workspace and claims its slug within the organization, both or neither:
   * a slug already claimed fails with {@link AlreadyExistsError}.
   */
  createWorkspace(workspace: Workspace): Promise<void>;
  getWorkspace(organizationId: string, id: string): Promise<Workspace | undefined>;
  /**
   * The workspace named by its id or by its slug (the public `/workspaces/{id}`): the id wins
   * when a value is both. One round trip for an id, two for a slug; a third only for a name
   * that matches nothing (workspaces written before slugs were claimed are found by listing).
   */
  findWorkspace(organizationId: string, idOrSlug: string): Promise<Workspace | undefined>;
  listWorkspaces(organizationId: string): Promise<Workspace[]>;
  /**
   * A new slug is claimed as on create (a claimed one fails with {@link AlreadyExistsError})
   * and the old one given back once the workspace has the new one.
   */
  updateWorkspace(organizationId: string, id: string, patch: WorkspacePatch, updatedAt: string): Promise<Workspace | undefined>;
  /**
   * Deletes the workspace only while it holds no key, exactly under concurrent key creation:
   * a key is counted in its workspace in the transaction that writes it ({@link createApiKey}),
   * and the delete is conditional on a count of none. Gives the slug back.
   */
  deleteWorkspace(organizationId: string, id: string): Promise<WorkspaceDeletion>;
  /**
   * Changes the workspace's budgets with `change`, computed from a fresh read and written under its
   * revision, so changes of different intervals at once all land; `change` answers undefined when
   * there is nothing to write. Undefined when the workspace does not exist.
   */
  changeWorkspaceBudgets(
    organizationId: string,
    id: string,
    change: (current: Workspace) => WorkspaceBudgetsPatch | undefined,
    updatedAt: string,
  ): Promise<Workspace | undefined>;

  createUser(user: User): Promise<void>;
  getUser(organizationId: string, id: string): Promise<User | undefined>;

  /** Atomically adds one guardrail id to the holder's set, recording when (a key's `guardrailAssignedAt`). */
  addGuardrail(holder: GuardrailHolder, guardrailId: string, updatedAt: string): Promise<SetChange>;
  /** Atomically removes one guardrail id from the holder's set. */
  removeGuardrail(holder: GuardrailHolder, guardrailId: string, updatedAt: string): Promise<SetChange>;

  /**
   * Writes the key, counted in its workspace in the same transaction: `missing` when the
   * workspace does not exist, `full` when it holds `WORKSPACE_LIMITS.keys` keys already (types.ts),
   * nothing written either way; an existing hash is an {@link AlreadyExistsError}.
   */
  createApiKey(key: ApiKeyRecord): Promise<'created' | 'missing' | 'full'>;
  getApiKey(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Keys by hash, read strongly consistently, in the order asked; a hash with no key is left out. */
  getApiKeys(hashes: readonly string[]): Promise<ApiKeyRecord[]>;
  /**
   * A request's records in one round trip, read consistently: any of the key by its hash, the
   * organization and the workspace. What is not asked for or does not exist is absent.
   */
  getRecords(ids: RecordIds): Promise<AccountRecords>;
  /**
   * The organization's keys, oldest first, read from the keys themselves: all of them, or with
   * `page` only its keys, and only those read (its index names them in order).
   */
  listApiKeys(organizationId: string, page?: KeyPage): Promise<ApiKeyRecord[]>;
  /**
   * The keys of one workspace, oldest first, read from the keys themselves: of the workspace
   * `id`, or of the organization's default workspace ({@link defaultWorkspaceOf}) when `id` is
   * undefined; undefined when that workspace does not exist. With `page`, only its keys, and only
   * those read (the workspace's member items name them in order).
   */
  listWorkspaceApiKeys(organizationId: string, id?: string, page?: KeyPage): Promise<{ workspace: Workspace; keys: ApiKeyRecord[] } | undefined>;
  /**
   * A patch, or a function computing one from the key as read for the write (its limit from the
   * stored one, docs/limits.md): applied to a fresh read, written under that read's revision.
   */
  updateApiKey(hash: string, patch: ApiKeyPatch | ((current: ApiKeyRecord) => ApiKeyPatch), updatedAt: string): Promise<ApiKeyRecord | undefined>;
  /** Deletes the key; a key of a workspace leaves its count and its hash among the workspace's former keys, in the same write. */
  deleteApiKey(hash: string): Promise<boolean>;
  /** The hashes of the keys a workspace held and that were deleted: their spend still counts in its budgets. */
  formerWorkspaceKeys(organizationId: string, workspaceId: string): Promise<string[]>;

  createGuardrail(guardrail: Guardrail): Promise<void>;
  getGuardrail(organizationId: string, id: string): Promise<Guardrail | undefined>;
  getGuardrails(organizationId: string, ids: readonly string[]): Promise<Guardrail[]>;
  listGuardrails(organizationId: string): Promise<Guardrail[]>;
  /**
   * Replaces the guardrail when its stored version is `expectedVersion` (undefined: one
   * written before guardrails had versions); false when it is gone or was changed meanwhile.
   */
  updateGuardrail(next: Guardrail, expectedVersion: number | undefined): Promise<boolean>;
  deleteGuardrail(organizationId: string, id: string): Promise<boolean>;
  /**
   * The organization's key assignments, of one guardrail or of all, as its index holds them
   * (written with each assignment); undefined while the index is not whole (an organization an
   * earlier release created, until {@link indexGuardrailKeys}).
   */
  guardrailKeyEntries(organizationId: string, guardrailId?: string): Promise<GuardrailKeyEntry[] | undefined>;
  /** Brings the organization's guardrail index to its keys' assignments and marks it whole. */
  indexGuardrailKeys(organizationId: string, at: string): Promise<GuardrailIndexRepair>;
}

/** What bringing a guardrail index to the keys changed: the assignments entered, the entries no key held removed. */
export interface GuardrailIndexRepair {
  entered: number;
  removed: number;
}

/** One key's assignment to one guardrail, as the guardrail index holds it. */
export interface GuardrailKeyEntry {
  guardrailId: string;
  keyHash: string;
  assignedAt: string;
}

/** The assignments keys hold, read from the keys themselves; for one from before times were recorded, the key's last change. */
export function assignmentsOf(keys: readonly ApiKeyRecord[]): GuardrailKeyEntry[] {
  return keys.flatMap((key) =>
    key.guardrailIds.map((guardrailId) => ({ guardrailId, keyHash: key.hash, assignedAt: key.guardrailAssignedAt?.[guardrailId] ?? key.updatedAt ?? key.createdAt })),
  );
}

/**
 * The organization's default workspace: its oldest, created with the organization. Keys go there
 * when no workspace is named, and the public key list shows its keys when none is asked for.
 */
export function defaultWorkspaceOf<T extends Pick<Workspace, 'createdAt'>>(workspaces: readonly T[]): T | undefined {
  return [...workspaces].sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0];
}

/** A create found its item (or a workspace's slug) already there. */
export class AlreadyExistsError extends Error {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'AlreadyExistsError';
  }
}

/** What {@link AccountStore.getRecords} reads. */
export interface RecordIds {
  keyHash?: string;
  organizationId?: string;
  /** A workspace of the organization named above. */
  workspaceId?: string;
}

/** What {@link AccountStore.getRecords} found: what was not asked for or does not exist is absent. */
export interface AccountRecords {
  key?: ApiKeyRecord;
  organization?: Organization;
  workspace?: Workspace;
}
