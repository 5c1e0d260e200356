import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  AlreadyExistsError,
  type AccountRecords,
  type AccountStore,
  type ApiKeyPatch,
  type GuardrailHolder,
  type GuardrailIndexRepair,
  type GuardrailKeyEntry,
  type KeyPage,
  type OrganizationPatch,
  type RecordIds,
  type SetChange,
  type WorkspaceBudgetsPatch,
  type WorkspaceDeletion,
  type WorkspacePatch,
} from '../accounts/account-store';
import { WORKSPACE_SLUG, type ApiKeyRecord, type Guardrail, type Organization, type User, type Workspace } from '../accounts/types';
import { systemClock, systemRandom, type Clock, type Random } from '../clock';
import { isUuid } from '../ids';
import { DynamoItems, itemId, strip } from './dynamo-items';
import { assignedAtOf, withGuardrailChange, withGuardrailList, withGuardrailSet } from './dynamo-guardrail-sets';
import { GuardrailKeyIndex } from './dynamo-guardrail-keys';
import { GUARDRAIL_KIND, KEY_COPIES, KEY_KIND, ORGANIZATION_COPIES, ORGANIZATION_KIND, WORKSPACE_KIND } from './copy-kinds';
import { AlongRefused, ReadReplicas } from './dynamo-read-replicas';
import { WorkspaceKeys } from './dynamo-workspace-keys';
import { KeyPages, apiKeyKey } from './dynamo-key-pages';
import { budgetCaps, cappedChange, keyLimitCaps } from './dynamo-limit-caps';
import { WorkspaceSlugs, claimKey, type SlugClaim } from './dynamo-workspace-slugs';

/**
 * Accounts in the keys table, one item per fact (docs/architecture.md, "Data layout", lists the
 * items and their keys). A key is fetched by its hash alone. A workspace counts its keys, each
 * of which has a member item beside it, written with the key ({@link WorkspaceKeys}).
 *
 * What every request reads (a key, its organization and workspace, their guardrails) is read
 * from copies ({@link ReadReplicas}): {@link KEY_COPIES} of each key and
 * {@link ORGANIZATION_COPIES} of each organization, workspace (without its key count) and
 * guardrail. Every create, change and delete of such an item is one transaction with all of its
 * copies; management reads and writes the items themselves. `guardrailIds` of keys and
 * workspaces is a string set, each assignment's time beside it ({@link withGuardrailChange}).
 */
export class DynamoAccountStore implements AccountStore {
  private readonly items: DynamoItems;
  private readonly copies: ReadReplicas;
  private readonly workspaceKeys: WorkspaceKeys;
  private readonly keyPages: KeyPages;
  private readonly tableName: string;
  private readonly clock: Clock;
  private readonly slugs: WorkspaceSlugs;
  private readonly ledgersTable?: string;
  private readonly guardrailKeys: GuardrailKeyIndex;

  /**
   * @param options.random chooses the copy each request reads.
   * @param options.clock stamps a deleted key's mark in its workspace.
   * @param options.writersSince before this instant no writer still runs: a slug's claim taken
   *   earlier whose workspace does not exist is reclaimed at once (the local runtime's start).
   * @param options.ledgersTable where spending limits' ledgers are: a change of a limit's amount
   *   caps them in its transaction (dynamo-limit-caps.ts). Management's store has it.
   */
  constructor(
    client: DynamoDBDocumentClient,
    tableName: string,
    { random = systemRandom, clock = systemClock, writersSince, ledgersTable }: { random?: Random; clock?: Clock; writersSince?: Date; ledgersTable?: string } = {},
  ) {
    this.tableName = tableName;
    this.ledgersTable = ledgersTable;
    this.clock = clock;
    this.items = new DynamoItems(client, tableName);
    this.copies = new ReadReplicas(client, tableName, random);
    this.keyPages = new KeyPages(client, tableName);
    this.guardrailKeys = new GuardrailKeyIndex(client, tableName);
    this.workspaceKeys = new WorkspaceKeys(tableName, this.items, this.copies, this.keyPages, (organizationId) => this.listApiKeys(organizationId));
    this.slugs = new WorkspaceSlugs(client, tableName, async (organizationId, id, slug) => (await this.getWorkspace(organizationId, id))?.slug === slug, writersSince);
  }

  async createOrganization(organization: Organization): Promise<void> {
    const item = { pk: orgPk(organization.id), sk: 'ORG', gsi1pk: 'ORGS', gsi1sk: organization.id, ...organization };
    if (!(await this.copies.create(item, ORGANIZATION_KIND, [this.guardrailKeys.marked(organization.id, organization.createdAt)]))) throw new AlreadyExistsError(`organization ${organization.id}`);
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    return this.items.get<Organization>(orgPk(id), 'ORG');
  }

  async listOrganizations(): Promise<Organization[]> {
    return this.items.queryIndex<Organization>('ORGS');
  }

  async updateOrganization(id: string, patch: OrganizationPatch, updatedAt: string): Promise<Organization | undefined> {
    const changed = await this.copies.change({ pk: orgPk(id), sk: 'ORG' }, ORGANIZATION_KIND, (current) => ({ ...current, ...defined(patch), updatedAt }));
    return changed && strip<Organization>(changed.after);
  }

  /** The workspace, its copies and its slug's claim ({@link WorkspaceSlugs}) in one transaction. */
  async createWorkspace(workspace: Workspace): Promise<void> {
    const { organizationId, slug, id, createdAt } = workspace;
    // No key yet: its count starts at 0.
    const item = { pk: orgPk(organizationId), sk: `WORKSPACE#${id}`, ...withGuardrailSet(workspace), keyCount: 0 };
    const created = await this.withSlugClaim(organizationId, slug, createdAt, (abandoned) =>
      this.copies.create(item, WORKSPACE_KIND, [this.slugs.claimAction(organizationId, slug, id, createdAt, abandoned)]),
    );
    if (!created) throw new AlreadyExistsError(`workspace ${id}`);
  }

  /**
   * Runs `write`, a transaction at `at` that claims `slug` (its first action beside the item's),
   * and again over a claim it met that turns out abandoned ({@link WorkspaceSlugs.takeOver}).
   */
  private async withSlugClaim<T>(organizationId: string, slug: string, at: string, write: (abandoned?: SlugClaim) => Promise<T>): Promise<T> {
    let abandoned: SlugClaim | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        return await write(abandoned);
      } catch (error) {
        if (!(error instanceof AlongRefused)) throw error;
        const held = error.failed.find(({ index }) => index === 0)?.item as SlugClaim | undefined;
        abandoned = await this.slugs.takeOver(organizationId, slug, held, Date.parse(at));
      }
    }
    throw new AlreadyExistsError(`A workspace with slug "${slug}"`);
  }

  async getWorkspace(organizationId: string, id: string): Promise<Workspace | undefined> {
    return workspaceRecord(await this.items.get<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`));
  }

  /**
   * An id-shaped value is read as an id and, in the same BatchGetItem, as a slug's claim (a
   * lowercase UUID is also a valid slug); the claim names the workspace, read next, which must
   * still hold that slug.
   */
  async findWorkspace(organizationId: string, idOrSlug: string): Promise<Workspace | undefined> {
    const pk = orgPk(organizationId);
    const byId = isUuid(idOrSlug) ? { pk, sk: `WORKSPACE#${idOrSlug}` } : undefined;
    const claim = WORKSPACE_SLUG.test(idOrSlug) ? claimKey(organizationId, idOrSlug) : undefined;
    const wanted = [byId, claim].filter((key): key is { pk: string; sk: string } => key !== undefined);
    if (wanted.length === 0) return undefined;
    const found = await this.items.batchGet(wanted);
    const workspace = byId && found.get(itemId(byId.pk, byId.sk));
    if (workspace) return workspaceRecord(strip<Workspace>(workspace));
    if (!claim) return undefined;
    const claimed = found.get(itemId(claim.pk, claim.sk))?.workspaceId;
    const held = typeof claimed === 'string' ? await this.getWorkspace(organizationId, claimed) : undefined;
    if (held?.slug === idOrSlug) return held;
    // Workspaces written before slugs were claimed hold theirs without a claim.
    return (await this.listWorkspaces(organizationId)).find((candidate) => candidate.slug === idOrSlug);
  }

  async listWorkspaces(organizationId: string): Promise<Workspace[]> {
    return (await this.items.queryPrefix<Workspace>(orgPk(organizationId), 'WORKSPACE#')).map((w) => workspaceRecord(w)!);
  }

  /** From the workspace's member items ({@link WorkspaceKeys.list}). */
  async listWorkspaceApiKeys(organizationId: string, id?: string, page?: KeyPage): Promise<{ workspace: Workspace; keys: ApiKeyRecord[] } | undefined> {
    const listed = await this.workspaceKeys.list(organizationId, id, page);
    return listed && { workspace: workspaceRecord(listed.workspace)!, keys: listed.keys.map((key) => withGuardrailList(key)!) };
  }

  /**
   * A rename claims the new slug and gives the old one back in the transaction that changes the
   * workspace, which lands only while the workspace still has the slug it was read with.
   */
  async updateWorkspace(organizationId: string, id: string, patch: WorkspacePatch, updatedAt: string): Promise<Workspace | undefined> {
    const current = await this.getWorkspace(organizationId, id);
    if (!current) return undefined;
    const key = { pk: orgPk(organizationId), sk: `WORKSPACE#${id}` };
    const slug = patch.slug;
    if (slug === undefined || slug === current.slug) {
      const changed = await this.copies.change(key, WORKSPACE_KIND, (item) => ({ ...item, ...defined({ ...patch, slug: undefined }), updatedAt }));
      return changed && workspaceRecord(strip<Workspace>(changed.after));
    }
    const changed = await this.withSlugClaim(organizationId, slug, updatedAt, (abandoned) =>
      this.copies.change(
        key,
        WORKSPACE_KIND,
        (item) => {
          if (item.slug !== current.slug) throw new AlreadyExistsError('A concurrent rename of the workspace');
          return { ...item, ...defined(patch), updatedAt };
        },
        () => [this.slugs.claimAction(organizationId, slug, id, updatedAt, abandoned), this.slugs.releaseAction(organizationId, current.slug, id)],
      ),
    );
    return changed && workspaceRecord(strip<Workspace>(changed.after));
  }

  /** One change of the workspace item with its copies; the key count stays as it is (withheld from copies, untouched here). */
  async changeWorkspaceBudgets(
    organizationId: string,
    id: string,
    change: (current: Workspace) => WorkspaceBudgetsPatch | undefined,
    updatedAt: string,
  ): Promise<Workspace | undefined> {
    const next = (item: Record<string, unknown>) => {
      const patch = change(workspaceRecord(strip<Workspace>(item))!);
      return patch && { ...item, ...defined(patch), updatedAt };
    };
    const key = { pk: orgPk(organizationId), sk: `WORKSPACE#${id}` };
    const changed = await cappedChange(this.copies, this.ledgersTable, { key, kind: WORKSPACE_KIND, next, caps: budgetCaps, at: new Date(updatedAt) });
    return changed && workspaceRecord(strip<Workspace>(changed.after));
  }

  async deleteWorkspace(organizationId: string, id: string): Promise<WorkspaceDeletion> {
    const deletion = await this.workspaceKeys.deleteWorkspace(organizationId, id, WORKSPACE_KIND);
    if (deletion.outcome === 'deleted') await this.slugs.release(organizationId, deletion.workspace.slug, id);
    return deletion.outcome === 'deleted' ? { outcome: 'deleted', workspace: workspaceRecord(deletion.workspace)! } : deletion;
  }

  async addGuardrail(holder: GuardrailHolder, guardrailId: string, updatedAt: string): Promise<SetChange> {
    return this.changeGuardrailSet(holder, guardrailId, updatedAt, 'add');
  }

  async removeGuardrail(holder: GuardrailHolder, guardrailId: string, updatedAt: string): Promise<SetChange> {
    return this.changeGuardrailSet(holder, guardrailId, updatedAt, 'remove');
  }

  /**
   * The holder's set changed by one element ({@link withGuardrailChange}) with its copies, in one
   * transaction; a set that has it already still has its copies brought to it.
   */
  private async changeGuardrailSet(holder: GuardrailHolder, guardrailId: string, updatedAt: string, change: 'add' | 'remove'): Promise<SetChange> {
    let outcome: SetChange = 'missing';
    let next: Record<string, unknown> | undefined;
    // A key's entry in the guardrail index changes in the same transaction (dynamo-guardrail-keys.ts).
    const entry = ({ organizationId }: Record<string, unknown>) => {
      if (!next || holder.kind !== 'key') return [];
      const org = String(organizationId);
      return [change === 'add' ? this.guardrailKeys.entered(org, guardrailId, holder.hash, assignedAtOf(next, guardrailId)!) : this.guardrailKeys.removed(org, guardrailId, holder.hash)];
    };
    await this.copies.change(holderKey(holder), holder.kind === 'key' ? KEY_KIND : WORKSPACE_KIND, (item) => {
      ({ outcome, next } = withGuardrailChange(item, guardrailId, updatedAt, change));
      return next;
    }, entry);
    return outcome;
  }

  /** The organization's key assignments in the guardrail index (dynamo-guardrail-keys.ts); undefined until it is whole. */
  guardrailKeyEntries(organizationId: string, guardrailId?: string): Promise<GuardrailKeyEntry[] | undefined> {
    return this.guardrailKeys.list(organizationId, guardrailId);
  }

  /** Brings the guardrail index to the organization's keys, then marks it whole. */
  async indexGuardrailKeys(organizationId: string, at: string): Promise<GuardrailIndexRepair> {
    return this.guardrailKeys.index(organizationId, await this.listApiKeys(organizationId), at);
  }

  async createUser(user: User): Promise<void> {
    await this.items.create({ pk: orgPk(user.organizationId), sk: `USER#${user.id}`, ...user }, `user ${user.id}`);
  }

  async getUser(organizationId: string, id: string): Promise<User | undefined> {
    return this.items.get<User>(orgPk(organizationId), `USER#${id}`);
  }

  /** The key, its copies and, for a key of a workspace, its place there ({@link WorkspaceKeys.joining}), in one transaction. */
  async createApiKey(key: ApiKeyRecord): Promise<'created' | 'missing' | 'full'> {
    const item = {
      pk: keyPk(key.hash),
      sk: 'APIKEY',
      gsi1pk: `${orgPk(key.organizationId)}#APIKEYS`,
      gsi1sk: `${key.createdAt}#${key.hash}`,
      ...withGuardrailSet(key),
    };
    return this.workspaceKeys.joined(key, async (along) => {
      if (!(await this.copies.create(item, KEY_KIND, along))) throw new AlreadyExistsError('API key');
    });
  }

  async getApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return withGuardrailList(await this.items.get<ApiKeyRecord>(keyPk(hash), 'APIKEY'));
  }

  async getApiKeys(hashes: readonly string[]): Promise<ApiKeyRecord[]> {
    const found = await this.items.batchGet(hashes.map(apiKeyKey));
    return hashes.flatMap((hash) => {
      const item = found.get(itemId(keyPk(hash), 'APIKEY'));
      return item ? [withGuardrailList(strip<ApiKeyRecord>(item))!] : [];
    });
  }

  /** From the items' copies: one round trip, and one more only for an item that has none. */
  async getRecords({ keyHash, organizationId, workspaceId }: RecordIds): Promise<AccountRecords> {
    const wanted = {
      key: keyHash === undefined ? undefined : { item: { pk: keyPk(keyHash), sk: 'APIKEY' }, count: KEY_COPIES },
      organization: organizationId === undefined ? undefined : { item: { pk: orgPk(organizationId), sk: 'ORG' }, count: ORGANIZATION_COPIES },
      workspace:
        organizationId === undefined || workspaceId === undefined ? undefined : { item: { pk: orgPk(organizationId), sk: `WORKSPACE#${workspaceId}` }, count: ORGANIZATION_COPIES },
    };
    const asked = (['key', 'organization', 'workspace'] as const).filter((name) => wanted[name] !== undefined);
    if (asked.length === 0) return {};
    const records = await this.copies.read(asked.map((name) => wanted[name]!));
    const found = <T>(name: (typeof asked)[number]): T | undefined => records[asked.indexOf(name)] as T | undefined;
    return {
      key: withGuardrailList(found<ApiKeyRecord>('key')),
      organization: found<Organization>('organization'),
      workspace: workspaceRecord(found<Workspace>('workspace')),
    };
  }

  async listApiKeys(organizationId: string, page?: KeyPage): Promise<ApiKeyRecord[]> {
    const keys = page ? await this.keyPages.ofOrganization(organizationId, page) : await this.items.queryIndex<ApiKeyRecord>(`${orgPk(organizationId)}#APIKEYS`);
    return keys.map((k) => withGuardrailList(k)!);
  }

  async updateApiKey(hash: string, patch: ApiKeyPatch | ((current: ApiKeyRecord) => ApiKeyPatch), updatedAt: string): Promise<ApiKeyRecord | undefined> {
    const next = (current: Record<string, unknown>) => {
      const given = typeof patch === 'function' ? patch(withGuardrailList(strip<ApiKeyRecord>(current))!) : patch;
      return { ...current, ...defined(given), updatedAt };
    };
    const changed = await cappedChange(this.copies, this.ledgersTable, { key: { pk: keyPk(hash), sk: 'APIKEY' }, kind: KEY_KIND, next, caps: keyLimitCaps, at: new Date(updatedAt) });
    return changed && withGuardrailList(strip<ApiKeyRecord>(changed.after));
  }

  /**
   * The key and its copies' deletion marks in one transaction, from then on no request is let in
   * with it; a key of a workspace leaves its place there ({@link WorkspaceKeys.leaving}) and its
   * mark (formerWorkspaceKeys) in the same transaction.
   */
  async deleteApiKey(hash: string): Promise<boolean> {
    const deletion = await this.workspaceKeys.left(
      (leaving) =>
        this.copies.delete({ pk: keyPk(hash), sk: 'APIKEY' }, KEY_KIND, undefined, ({ organizationId: org, workspaceId: ws, createdAt, guardrailIds }: Partial<ApiKeyRecord>) => {
          if (!org) return [];
          const entries = [...new Set(guardrailIds ?? [])].map((id) => this.guardrailKeys.removed(org, id, hash));
          if (!ws) return entries;
          const mark = { Put: { TableName: this.tableName, Item: { pk: orgPk(org), sk: `${FORMER_KEY_PREFIX}${ws}#${hash}`, keyHash: hash, workspaceId: ws, deletedAt: this.clock.now().toISOString() } } };
          return [...leaving({ organizationId: org, workspaceId: ws, createdAt: createdAt!, hash }), mark, ...entries];
        }),
      () => this.getApiKey(hash),
    );
    return deletion.outcome === 'deleted';
  }

  async formerWorkspaceKeys(organizationId: string, workspaceId: string): Promise<string[]> {
    const marks = await this.items.queryPrefix<{ keyHash: string }>(orgPk(organizationId), `${FORMER_KEY_PREFIX}${workspaceId}#`);
    return marks.map((mark) => mark.keyHash);
  }

  async createGuardrail(guardrail: Guardrail): Promise<void> {
    const item = { pk: orgPk(guardrail.organizationId), sk: `GUARDRAIL#${guardrail.id}`, ...guardrail };
    if (!(await this.copies.create(item, GUARDRAIL_KIND))) throw new AlreadyExistsError(`guardrail ${guardrail.id}`);
  }

  async getGuardrail(organizationId: string, id: string): Promise<Guardrail | undefined> {
    return this.items.get<Guardrail>(orgPk(organizationId), `GUARDRAIL#${id}`);
  }

  /** From the guardrails' copies, as every request that has guardrails reads them. */
  async getGuardrails(organizationId: string, ids: readonly string[]): Promise<Guardrail[]> {
    const unique = [...new Set(ids)];
    const records = await this.copies.read<Guardrail>(unique.map((id) => ({ item: { pk: orgPk(organizationId), sk: `GUARDRAIL#${id}` }, count: ORGANIZATION_COPIES })));
    // In the order asked, skipping ids whose guardrail is gone.
    return records.filter((record): record is Guardrail => record !== undefined);
  }

  async listGuardrails(organizationId: string): Promise<Guardrail[]> {
    return this.items.queryPrefix<Guardrail>(orgPk(organizationId), 'GUARDRAIL#');
  }

  /** Written only while the stored guardrail is at `expectedVersion`; a guardrail read at another gets its copies brought to it. */
  async updateGuardrail(next: Guardrail, expectedVersion: number | undefined): Promise<boolean> {
    let current = false;
    const changed = await this.copies.change({ pk: orgPk(next.organizationId), sk: `GUARDRAIL#${next.id}` }, GUARDRAIL_KIND, (item) => {
      current = item.version === expectedVersion;
      return current ? { ...next } : undefined;
    });
    return changed !== undefined && current;
  }

  async deleteGuardrail(organizationId: string, id: string): Promise<boolean> {
    return (await this.copies.delete({ pk: orgPk(organizationId), sk: `GUARDRAIL#${id}` }, GUARDRAIL_KIND)).outcome === 'deleted';
  }
}

/** The fields a patch sets: an undefined field leaves the item's as it is. */
function defined<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as Partial<T>;
}

const orgPk = (id: string) => `ORG#${id}`;
/** The mark a deleted key leaves beside its workspace, `FORMERKEY#<workspace>#<hash>`: its spend still counts in the workspace's budgets. */
const FORMER_KEY_PREFIX = 'FORMERKEY#';
const keyPk = (hash: string) => `APIKEY#${hash}`;

function holderKey(holder: GuardrailHolder): { pk: string; sk: string } {
  return holder.kind === 'key'
    ? { pk: keyPk(holder.hash), sk: 'APIKEY' }
    : { pk: orgPk(holder.organizationId), sk: `WORKSPACE#${holder.id}` };
}

/** A workspace record: its key count stays in the store; its guardrails' assignment times come along (budget layers count from them). */
function workspaceRecord(item: Workspace | undefined): Workspace | undefined {
  if (!item) return undefined;
  const { keyHolds: _holds, keyCount: _count, ...workspace } = withGuardrailList(item) as Workspace & { keyHolds?: unknown; keyCount?: unknown };
  return workspace;
}

