import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError, invalidParameter } from '../errors';
import type { Clock, IdGenerator } from '../clock';
import { inBatches } from '../batches';
import { AlreadyExistsError, assignmentsOf, type AccountStore, type GuardrailHolder, type GuardrailPatch } from './account-store';
import { defaultGuardrailId, keyAssignmentId } from './derived-ids';
import { guardrailBudgetAfter, type LimitRequest } from './spend-limits';
import { GUARDRAIL_LIMITS, type ApiKeyRecord, type Guardrail, type Workspace } from './types';

/** A new guardrail: its configuration, the budget as the request states it (spend-limits.ts). */
export type GuardrailInput = Omit<Guardrail, 'id' | 'organizationId' | 'budget' | 'version' | 'createdAt' | 'updatedAt'> & { budget?: LimitRequest };

/** What an update may change: each field given, and the budget as the request states it. */
export type GuardrailUpdate = GuardrailPatch & { budget?: LimitRequest };

/** Which of a list's items to show: `limit` of them after the first `offset`. */
export interface ListWindow {
  offset: number;
  limit: number;
}

/** One key's assignment to one guardrail (public `KeyAssignment`). */
export interface KeyAssignment {
  id: string;
  guardrailId: string;
  key: ApiKeyRecord;
  /** When it was assigned; for an assignment from before times were recorded, the key's last change. */
  assignedAt: string;
}

/**
 * How often a versioned update is tried: each round of conflicting writers has one winner,
 * so this many concurrent writers of one item all get an answer from their rules; past
 * that, the caller gets a 409 to retry (as for issuers and policies).
 */
const UPDATE_ATTEMPTS = 10;

/** The configuration of a default guardrail before its first write: one that restricts nothing. */
const UNRESTRICTED = Object.freeze({
  name: 'Default guardrail',
  description: null,
  allowedModels: null,
  ignoredModels: null,
  allowedProviders: null,
  ignoredProviders: null,
  enforceZdr: false,
});

/**
 * Guardrails (docs/reference.md#organizations-workspaces-and-guardrails), their assignment to keys and workspaces, and each workspace's
 * default guardrail.
 *
 * A workspace's default guardrail has an id derived from the workspace id (derived-ids.ts),
 * so it is known before it exists; it exists once its configuration is first written
 * (`PATCH /guardrails/{id}`), and from then on applies to every key of the workspace: its id
 * joins the workspace's guardrail set and stays there, so writing it again after a delete
 * applies it at once.
 */
export class GuardrailsService {
  constructor(
    private readonly store: AccountStore,
    private readonly clock: Clock,
    private readonly newId: IdGenerator,
  ) {}

  async create(organizationId: string, input: GuardrailInput): Promise<Guardrail> {
    if (!(await this.store.getOrganization(organizationId))) throw new NotFoundError(`Organization ${organizationId} not found`);
    if (input.workspaceId) await this.workspace(organizationId, input.workspaceId);
    checkGuardrailLists(input);
    const createdAt = this.timestamp();
    const { budget: request, ...configuration } = input;
    const guardrail: Guardrail = { ...configuration, ...budgetField(null, request, createdAt), id: this.newId(), organizationId, version: 1, createdAt, updatedAt: null };
    await conflictIfExists(() => this.store.createGuardrail(guardrail));
    await this.confirmWorkspaceExists(guardrail);
    return guardrail;
  }

  async get(organizationId: string, id: string): Promise<Guardrail> {
    const guardrail = await this.store.getGuardrail(organizationId, id);
    if (guardrail) return guardrail;
    const owner = await this.defaultOwner(organizationId, id);
    if (owner) throw new NotFoundError(`Guardrail ${id}, the default guardrail of workspace ${owner.id}, has no configuration yet: PATCH it to write one`);
    throw new NotFoundError(`Guardrail ${id} not found`);
  }

  list(organizationId: string): Promise<Guardrail[]> {
    return this.store.listGuardrails(organizationId);
  }

  /**
   * Applies the patch to a fresh read and writes it only while the guardrail is at that
   * read's version, as issuers and policies are written: a concurrent update makes the write
   * fail, and the patch is checked again against what that update left, so two PATCHes can
   * never together put a model in both lists, and a budget's window starts from the budget that
   * update left. A workspace's default guardrail that does not exist yet is written from
   * {@link UNRESTRICTED} with the patch applied.
   */
  async update(organizationId: string, id: string, patch: GuardrailUpdate): Promise<Guardrail> {
    const { budget: request, ...fields } = patch;
    const given = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as GuardrailPatch;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const current = await this.store.getGuardrail(organizationId, id);
      const now = this.timestamp();
      if (!current) {
        const owner = await this.defaultOwner(organizationId, id);
        if (!owner) throw new NotFoundError(`Guardrail ${id} not found`);
        const created = await this.materialize(owner, { ...given, ...budgetField(null, request, now) });
        if (created) return created;
        continue;
      }
      const next: Guardrail = { ...current, ...given, ...budgetField(current.budget, request, now), version: (current.version ?? 0) + 1, updatedAt: now };
      checkGuardrailLists(next);
      if (await this.store.updateGuardrail(next, current.version)) return next;
    }
    throw new ConflictError('The guardrail was changed by another request at the same time; retry');
  }

  /**
   * Writes a workspace's default guardrail for the first time; undefined when a concurrent
   * write created it first (the caller updates that one). Its id joins the workspace's set
   * first, so a crash between the writes leaves an id that names nothing (restricting
   * nothing) rather than a guardrail that does not apply; a workspace deleted meanwhile takes
   * the new guardrail with it ({@link confirmWorkspaceExists}).
   */
  private async materialize(workspace: Workspace, given: GuardrailPatch & Pick<Guardrail, 'budget'>): Promise<Guardrail | undefined> {
    const now = this.timestamp();
    const guardrail: Guardrail = {
      ...UNRESTRICTED,
      ...given,
      id: defaultGuardrailId(workspace.id),
      organizationId: workspace.organizationId,
      workspaceId: workspace.id,
      version: 1,
      createdAt: now,
      updatedAt: null,
    };
    checkGuardrailLists(guardrail);
    const holder = { kind: 'workspace', organizationId: workspace.organizationId, id: workspace.id } as const;
    const outcome = await this.store.addGuardrail(holder, guardrail.id, now);
    if (outcome === 'missing') throw new NotFoundError(`Workspace ${workspace.id} not found`);
    if (outcome === 'full') throw holderFull('workspace', `workspace ${workspace.id}`);
    try {
      await this.store.createGuardrail(guardrail);
    } catch (error) {
      if (error instanceof AlreadyExistsError) return undefined;
      throw error;
    }
    await this.confirmWorkspaceExists(guardrail);
    return guardrail;
  }

  /**
   * Deletes a guardrail and detaches it from the keys and workspaces it was on.
   *
   * No dangling ids, in either order of a concurrent assignment (separate writes, so by order):
   * the guardrail item goes first; then every key and workspace of the organization that holds
   * the id, as read after that, loses it by a conditional `DELETE`. An assignment re-reads the
   * guardrail after its write ({@link confirmGuardrailExists}): if it still saw the guardrail,
   * its write came before the delete and so before the sweep's reads, which remove it; if not,
   * it removes its own write. Readers ignore ids whose guardrail is gone (`getGuardrails`
   * returns existing ones only), so an id left by a crash mid-sweep restricts nothing. A
   * workspace keeps the id of its own default guardrail (see the class).
   */
  async delete(organizationId: string, id: string): Promise<void> {
    await this.get(organizationId, id);
    if (!(await this.store.deleteGuardrail(organizationId, id))) throw new NotFoundError(`Guardrail ${id} not found`);
    const now = this.timestamp();
    // Both listings are read strongly consistently after the delete: the guardrail index (or, until it is whole, the keys) and the workspaces.
    const assigned = (await this.store.guardrailKeyEntries(organizationId, id)) ?? assignmentsOf(await this.store.listApiKeys(organizationId));
    const holders: GuardrailHolder[] = [
      ...assigned.filter((entry) => entry.guardrailId === id).map((entry) => ({ kind: 'key' as const, hash: entry.keyHash })),
      ...(await this.store.listWorkspaces(organizationId))
        .filter((workspace) => workspace.guardrailIds.includes(id) && defaultGuardrailId(workspace.id) !== id)
        .map((workspace) => ({ kind: 'workspace' as const, organizationId, id: workspace.id })),
    ];
    await inBatches(holders, (holder) => this.store.removeGuardrail(holder, id, now));
  }

  /** Attaches a guardrail to keys; returns how many keys gained it (not those that had it). */
  async assignToKeys(organizationId: string, guardrailId: string, hashes: readonly string[]): Promise<number> {
    await this.get(organizationId, guardrailId);
    const keys = await Promise.all([...new Set(hashes)].map((hash) => this.key(organizationId, hash)));
    // A key with no room is refused before anything is written; one filled meanwhile, by its own write's condition.
    const full = keys.find((key) => !key.guardrailIds.includes(guardrailId) && key.guardrailIds.length >= GUARDRAIL_LIMITS.perHolder);
    if (full) throw holderFull('key_hashes', `key ${full.hash}`);
    const now = this.timestamp();
    const added: GuardrailHolder[] = [];
    const refused: string[] = [];
    // One transaction per key, a few at a time. A key deleted meanwhile no longer needs the guardrail: it is simply not counted.
    await inBatches(keys, async (key) => {
      const holder = { kind: 'key', hash: key.hash } as const;
      const outcome = await this.store.addGuardrail(holder, guardrailId, now);
      if (outcome === 'changed') added.push(holder);
      if (outcome === 'full') refused.push(key.hash);
    });
    await this.confirmGuardrailExists(organizationId, guardrailId, added);
    if (refused.length > 0) throw holderFull('key_hashes', `key ${refused[0]}`);
    return added.length;
  }

  /** Detaches a guardrail from keys; returns how many keys lost it. */
  async unassignFromKeys(organizationId: string, guardrailId: string, hashes: readonly string[]): Promise<number> {
    // An unknown guardrail is reported, not silently accepted as "nothing to remove".
    await this.get(organizationId, guardrailId);
    const keys = await Promise.all([...new Set(hashes)].map((hash) => this.key(organizationId, hash)));
    const now = this.timestamp();
    let changed = 0;
    await inBatches(keys, async (key) => {
      if ((await this.store.removeGuardrail({ kind: 'key', hash: key.hash }, guardrailId, now)) === 'changed') changed++;
    });
    return changed;
  }

  /**
   * A window of the keys' assignments of one guardrail, or of every guardrail of the
   * organization, oldest first, and how many there are. Read from the guardrail index (written
   * with each assignment, strongly consistent) and the guardrails that exist, so an id a crash
   * left after its guardrail's delete is not listed; then only the window's keys are read. An
   * organization whose index is not whole yet is read from all of its keys.
   */
  async keyAssignments(organizationId: string, guardrailId?: string, window?: ListWindow): Promise<{ items: KeyAssignment[]; total: number }> {
    const [guardrails, indexed] = await Promise.all([
      guardrailId ? this.get(organizationId, guardrailId).then((guardrail) => [guardrail]) : this.store.listGuardrails(organizationId),
      this.store.guardrailKeyEntries(organizationId, guardrailId),
    ]);
    const existing = new Set(guardrails.map((guardrail) => guardrail.id));
    const entries = (indexed ?? assignmentsOf(await this.store.listApiKeys(organizationId)))
      .filter((entry) => existing.has(entry.guardrailId))
      .map((entry) => ({ ...entry, id: keyAssignmentId(entry.guardrailId, entry.keyHash) }))
      .sort((a, b) => a.assignedAt.localeCompare(b.assignedAt) || a.id.localeCompare(b.id));
    const shown = window ? entries.slice(window.offset, window.offset + window.limit) : entries;
    const keys = new Map((await this.store.getApiKeys([...new Set(shown.map((entry) => entry.keyHash))])).map((key) => [key.hash, key]));
    const items = shown.flatMap(({ id, guardrailId: assigned, keyHash, assignedAt }) => {
      const key = keys.get(keyHash);
      return key?.guardrailIds.includes(assigned) ? [{ id, guardrailId: assigned, key, assignedAt }] : [];
    });
    return { items, total: entries.length };
  }

  /** Attaches (or detaches) a guardrail to every request made with the workspace's keys. */
  async setWorkspaceGuardrail(organizationId: string, guardrailId: string, workspaceId: string, attached: boolean): Promise<Workspace> {
    await this.workspace(organizationId, workspaceId);
    await this.get(organizationId, guardrailId);
    if (!attached && defaultGuardrailId(workspaceId) === guardrailId) {
      throw new ForbiddenError("A workspace's default guardrail always applies to its keys; delete the guardrail, or write it to restrict nothing");
    }
    const holder = { kind: 'workspace', organizationId, id: workspaceId } as const;
    const now = this.timestamp();
    const result = attached ? await this.store.addGuardrail(holder, guardrailId, now) : await this.store.removeGuardrail(holder, guardrailId, now);
    if (result === 'missing') throw new NotFoundError(`Workspace ${workspaceId} not found`);
    if (result === 'full') throw holderFull('workspace', `workspace ${workspaceId}`);
    if (attached && result === 'changed') await this.confirmGuardrailExists(organizationId, guardrailId, [holder]);
    return this.workspace(organizationId, workspaceId);
  }

  /** Deletes the guardrails of a deleted workspace: read after its delete, so none created before it is missed. */
  async deleteWorkspaceGuardrails(organizationId: string, workspaceId: string): Promise<void> {
    const owned = (await this.store.listGuardrails(organizationId)).filter((guardrail) => guardrail.workspaceId === workspaceId);
    for (const guardrail of owned) await this.delete(organizationId, guardrail.id).catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
    });
  }

  /**
   * The second half of the no-dangling-ids protocol (see {@link delete}): after adding the
   * id, make sure the guardrail still exists; if it was deleted meanwhile, take the id back
   * off and report the guardrail as missing.
   */
  private async confirmGuardrailExists(organizationId: string, guardrailId: string, added: readonly GuardrailHolder[]): Promise<void> {
    if (added.length === 0 || (await this.store.getGuardrail(organizationId, guardrailId))) return;
    const now = this.timestamp();
    await inBatches(added, (holder) => this.store.removeGuardrail(holder, guardrailId, now));
    throw new NotFoundError(`Guardrail ${guardrailId} not found`);
  }

  /**
   * A guardrail written for a workspace, read again after the write: a workspace deleted
   * meanwhile either came after the write, and its delete removes the guardrail
   * ({@link deleteWorkspaceGuardrails}), or before, and the guardrail goes here.
   */
  private async confirmWorkspaceExists(guardrail: Guardrail): Promise<void> {
    if (!guardrail.workspaceId || (await this.store.getWorkspace(guardrail.organizationId, guardrail.workspaceId))) return;
    await this.store.deleteGuardrail(guardrail.organizationId, guardrail.id);
    throw new NotFoundError(`Workspace ${guardrail.workspaceId} not found`);
  }

  /** The workspace whose default guardrail `id` is, if any. */
  private async defaultOwner(organizationId: string, id: string): Promise<Workspace | undefined> {
    return (await this.store.listWorkspaces(organizationId)).find((workspace) => defaultGuardrailId(workspace.id) === id);
  }

  private async workspace(organizationId: string, id: string): Promise<Workspace> {
    const workspace = await this.store.getWorkspace(organizationId, id);
    if (!workspace) throw new NotFoundError(`Workspace ${id} not found`);
    return workspace;
  }

  private async key(organizationId: string, hash: string): Promise<ApiKeyRecord> {
    const key = await this.store.getApiKey(hash);
    if (!key || key.organizationId !== organizationId) throw new NotFoundError(`API key ${hash} not found`);
    return key;
  }

  private timestamp(): string {
    return this.clock.now().toISOString();
  }
}

/** The guardrail's `budget` after the request: nothing when it says nothing of the budget. */
function budgetField(current: Guardrail['budget'], request: LimitRequest | undefined, now: string): Pick<Guardrail, 'budget'> {
  const budget = guardrailBudgetAfter(current, request ?? {}, now);
  return budget === undefined ? {} : { budget };
}

/** The four lists by their names on the wire. */
const GUARDRAIL_LISTS = [
  ['allowed_models', 'allowedModels'],
  ['ignored_models', 'ignoredModels'],
  ['allowed_providers', 'allowedProviders'],
  ['ignored_providers', 'ignoredProviders'],
] as const;

/**
 * The lists within {@link GUARDRAIL_LIMITS} (entries, characters per entry, bytes of the four
 * together; a 400 naming the list), whichever way they came, and no model or provider both
 * allowed and ignored.
 */
function checkGuardrailLists(g: Pick<Guardrail, 'allowedModels' | 'ignoredModels' | 'allowedProviders' | 'ignoredProviders'>): void {
  let bytes = 0;
  for (const [parameter, field] of GUARDRAIL_LISTS) {
    const list = g[field] ?? [];
    if (list.length > GUARDRAIL_LIMITS.listEntries) throw invalidParameter(parameter, `must have at most ${GUARDRAIL_LIMITS.listEntries} items`);
    if (list.some((entry) => [...entry].length > GUARDRAIL_LIMITS.entry)) throw invalidParameter(parameter, `each item must be at most ${GUARDRAIL_LIMITS.entry} characters`);
    bytes += list.reduce((sum, entry) => sum + Buffer.byteLength(entry), 0);
    if (bytes > GUARDRAIL_LIMITS.listBytes) {
      throw invalidParameter(parameter, `the four model and provider lists may hold at most ${GUARDRAIL_LIMITS.listBytes} bytes together (UTF-8)`);
    }
  }
  const both = (a: string[] | null, b: string[] | null) => (a ?? []).filter((x) => (b ?? []).includes(x));
  const models = both(g.allowedModels, g.ignoredModels);
  if (models.length > 0) throw new InvalidInputError(`Models cannot be both allowed and ignored: ${models.join(', ')}`);
  const providers = both(g.allowedProviders, g.ignoredProviders);
  if (providers.length > 0) throw new InvalidInputError(`Providers cannot be both allowed and ignored: ${providers.join(', ')}`);
}

/** A key or workspace that holds as many guardrails as one may (`holder`: which), as a 400 naming `parameter`. */
function holderFull(parameter: string, holder: string): InvalidInputError {
  return invalidParameter(parameter, `${holder} holds ${GUARDRAIL_LIMITS.perHolder} guardrails already, the most one may hold`);
}

/** A write whose item exists already (a taken slug, a second create) is a 409. */
export async function conflictIfExists<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof AlreadyExistsError) throw new ConflictError(error.message);
    throw error;
  }
}
