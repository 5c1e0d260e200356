import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  AlreadyExistsError,
  defaultWorkspaceOf,
  type AccountRecords,
  type AccountStore,
  type ApiKeyPatch,
  type GuardrailHolder,
  type OrganizationPatch,
  type RecordIds,
  type SetChange,
  type WorkspaceDeletion,
  type WorkspacePatch,
} from '../accounts/account-store';
import { WORKSPACE_SLUG, type ApiKeyRecord, type Guardrail, type Organization, type User, type Workspace } from '../accounts/types';
import { isUuid } from '../ids';
import { systemClock } from '../clock';
import { isConditionalCheckFailed } from './dynamo-client';
import { DynamoItems, itemId, strip } from './dynamo-items';
import { WorkspaceKeyHolds } from './dynamo-workspace-keys';
import { WorkspaceSlugs, claimKey } from './dynamo-workspace-slugs';

/**
 * Accounts in the keys table, one item per fact:
 *
 * | item         | pk                | sk                | gsi1pk                  | gsi1sk              |
 * |--------------|-------------------|-------------------|-------------------------|---------------------|
 * | organization | `ORG#<id>`        | `ORG`             | `ORGS`                  | `<id>`              |
 * | workspace    | `ORG#<org>`       | `WORKSPACE#<id>`  |                         |                     |
 * | slug claim   | `ORG#<org>`       | `SLUG#<slug>`     |                         |                     |
 * | user         | `ORG#<org>`       | `USER#<id>`       |                         |                     |
 * | guardrail    | `ORG#<org>`       | `GUARDRAIL#<id>`  |                         |                     |
 * | API key      | `APIKEY#<hash>`   | `APIKEY`          | `ORG#<org>#APIKEYS`     | `<createdAt>#<hash>`|
 *
 * A key is fetched by its hash alone, so authentication is one GetItem. A workspace item also
 * holds the places of its keys (`keyHolds`, {@link WorkspaceKeyHolds}).
 *
 * `guardrailIds` of keys and workspaces is a DynamoDB string set changed only with `ADD`
 * and `DELETE` of one element, never rewritten whole. DynamoDB has no empty sets, so an
 * item without guardrails has no such attribute. Items written before sets were used hold
 * a list; the first change converts it (see {@link convertLegacyList}). Each assignment also
 * records its time in an attribute of its own, `assignedAt:<guardrail id>`, set and removed
 * in the same write as the id (the record's `guardrailAssignedAt`).
 */
export class DynamoAccountStore implements AccountStore {
  private readonly items: DynamoItems;
  private readonly keyHolds: WorkspaceKeyHolds;
  private readonly slugs: WorkspaceSlugs;

  /**
   * @param writersSince before this instant no writer still runs: a claim or place taken
   *   earlier whose item does not exist is reclaimed at once (the local runtime's start).
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    writersSince?: Date,
  ) {
    this.items = new DynamoItems(client, tableName);
    this.keyHolds = new WorkspaceKeyHolds(client, tableName, (organizationId) => this.listApiKeys(organizationId), systemClock, writersSince);
    this.slugs = new WorkspaceSlugs(client, tableName, async (organizationId, id) => (await this.getWorkspace(organizationId, id)) !== undefined, writersSince);
  }

  async createOrganization(organization: Organization): Promise<void> {
    await this.items.create(
      { pk: orgPk(organization.id), sk: 'ORG', gsi1pk: 'ORGS', gsi1sk: organization.id, ...organization },
      `organization ${organization.id}`,
    );
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    return this.items.get<Organization>(orgPk(id), 'ORG');
  }

  async listOrganizations(): Promise<Organization[]> {
    return this.items.queryIndex<Organization>('ORGS');
  }

  async updateOrganization(id: string, patch: OrganizationPatch, updatedAt: string): Promise<Organization | undefined> {
    return this.items.update<Organization>(orgPk(id), 'ORG', { ...patch, updatedAt });
  }

  /** The slug is claimed first ({@link WorkspaceSlugs}), then the workspace written. */
  async createWorkspace(workspace: Workspace): Promise<void> {
    const pk = orgPk(workspace.organizationId);
    await this.slugs.claim(workspace.organizationId, workspace.slug, workspace.id, workspace.createdAt);
    try {
      // No key yet: its key places start empty.
      await this.items.create({ pk, sk: `WORKSPACE#${workspace.id}`, ...withGuardrailSet(workspace), keyHolds: {} }, `workspace ${workspace.id}`);
    } catch (error) {
      await this.slugs.release(workspace.organizationId, workspace.slug, workspace.id).catch(() => undefined);
      throw error;
    }
  }

  async getWorkspace(organizationId: string, id: string): Promise<Workspace | undefined> {
    return workspaceRecord(await this.items.get<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`));
  }

  /**
   * An id-shaped value is read as an id and, in the same BatchGetItem, as a slug's claim (a
   * lowercase UUID is also a valid slug); the claim names the workspace, read next, which must
   * still hold that slug (a rename claims the new slug first and gives the old one back after).
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

  /**
   * The workspace item's key places ({@link WorkspaceKeyHolds}) say which keys to read; the keys
   * themselves say whether they exist and are still the workspace's (a place can outlive its key
   * for a moment, or belong to a key that never came). A workspace from before places existed
   * has its keys from the organization's listing.
   */
  async listWorkspaceApiKeys(organizationId: string, id?: string): Promise<{ workspace: Workspace; keys: ApiKeyRecord[] } | undefined> {
    type Held = Workspace & { keyHolds?: Record<string, string> };
    const item =
      id === undefined
        ? defaultWorkspaceOf(await this.items.queryPrefix<Held>(orgPk(organizationId), 'WORKSPACE#'))
        : await this.items.get<Held>(orgPk(organizationId), `WORKSPACE#${id}`);
    if (!item) return undefined;
    const workspace = workspaceRecord(item)!;
    const inWorkspace = (key: ApiKeyRecord) => key.organizationId === organizationId && key.workspaceId === workspace.id;
    if (!item.keyHolds) return { workspace, keys: (await this.listApiKeys(organizationId)).filter(inWorkspace) };
    const found = await this.items.batchGet(Object.keys(item.keyHolds).map((hash) => ({ pk: keyPk(hash), sk: 'APIKEY' })));
    const keys = [...found.values()].map((key) => withGuardrailList(strip<ApiKeyRecord>(key))!).filter(inWorkspace);
    // The organization's listing order (its index sorts by `<createdAt>#<hash>`).
    return { workspace, keys: keys.sort((a, b) => `${a.createdAt}#${a.hash}`.localeCompare(`${b.createdAt}#${b.hash}`)) };
  }

  /**
   * A new slug is claimed first; the workspace takes it only while it still has the slug it
   * was read with (a concurrent rename makes this one fail, and it gives its claim back), and
   * the old claim is given back after.
   */
  async updateWorkspace(organizationId: string, id: string, patch: WorkspacePatch, updatedAt: string): Promise<Workspace | undefined> {
    const current = await this.getWorkspace(organizationId, id);
    if (!current) return undefined;
    const renamed = patch.slug !== undefined && patch.slug !== current.slug;
    if (!renamed) return workspaceRecord(await this.items.update<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`, { ...patch, slug: undefined, updatedAt }));
    await this.slugs.claim(organizationId, patch.slug!, id, updatedAt);
    const fields = Object.entries({ ...patch, updatedAt }).filter(([, value]) => value !== undefined);
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: orgPk(organizationId), sk: `WORKSPACE#${id}` },
          UpdateExpression: `SET ${fields.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(pk) AND slug = :read',
          ExpressionAttributeNames: Object.fromEntries(fields.map(([name], i) => [`#f${i}`, name])),
          ExpressionAttributeValues: { ...Object.fromEntries(fields.map(([, value], i) => [`:v${i}`, value])), ':read': current.slug },
          ReturnValues: 'ALL_NEW',
        }),
      );
      await this.slugs.release(organizationId, current.slug, id);
      return workspaceRecord(strip<Workspace>(result.Attributes!));
    } catch (error) {
      await this.slugs.release(organizationId, patch.slug!, id);
      if (!isConditionalCheckFailed(error)) throw error;
      // Deleted, or renamed by another request meanwhile.
      if (await this.getWorkspace(organizationId, id)) throw new AlreadyExistsError('A concurrent rename of the workspace');
      return undefined;
    }
  }

  async deleteWorkspace(organizationId: string, id: string): Promise<WorkspaceDeletion> {
    const deletion = await this.keyHolds.deleteWorkspace(organizationId, id);
    if (deletion.outcome === 'deleted') await this.slugs.release(organizationId, deletion.workspace.slug, id);
    return deletion.outcome === 'deleted' ? { outcome: 'deleted', workspace: workspaceRecord(deletion.workspace)! } : deletion;
  }

  holdWorkspaceKey(organizationId: string, workspaceId: string, keyHash: string, at: string): Promise<boolean> {
    return this.keyHolds.hold(organizationId, workspaceId, keyHash, at);
  }

  releaseWorkspaceKey(organizationId: string, workspaceId: string, keyHash: string): Promise<void> {
    return this.keyHolds.release(organizationId, workspaceId, keyHash);
  }

  async addGuardrail(holder: GuardrailHolder, guardrailId: string, updatedAt: string): Promise<SetChange> {
    return this.changeGuardrailSet(holder, guardrailId, updatedAt, 'add');
  }

  async removeGuardrail(holder: GuardrailHolder, guardrailId: string, updatedAt: string): Promise<SetChange> {
    return this.changeGuardrailSet(holder, guardrailId, updatedAt, 'remove');
  }

  /**
   * One conditional `ADD` or `DELETE` of a single element. The condition makes the write
   * happen only when it changes the set, so `changed` is exact under concurrency; when it
   * fails, one consistent read says why (item gone, no change needed, or a legacy list).
   */
  private async changeGuardrailSet(holder: GuardrailHolder, guardrailId: string, updatedAt: string, change: 'add' | 'remove'): Promise<SetChange> {
    const key = holderKey(holder);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression:
              change === 'add' ? 'ADD guardrailIds :ids SET updatedAt = :now, #assignedAt = :now' : 'DELETE guardrailIds :ids SET updatedAt = :now REMOVE #assignedAt',
            ConditionExpression:
              change === 'add'
                ? 'attribute_exists(pk) AND (attribute_not_exists(guardrailIds) OR (attribute_type(guardrailIds, :set) AND NOT contains(guardrailIds, :id)))'
                : 'attribute_exists(pk) AND attribute_type(guardrailIds, :set) AND contains(guardrailIds, :id)',
            ExpressionAttributeNames: { '#assignedAt': `${ASSIGNED_AT}${guardrailId}` },
            ExpressionAttributeValues: { ':ids': new Set([guardrailId]), ':id': guardrailId, ':set': 'SS', ':now': updatedAt },
          }),
        );
        return 'changed';
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
      const item = await this.items.get<{ guardrailIds?: unknown }>(key.pk, key.sk);
      if (!item) return 'missing';
      if (Array.isArray(item.guardrailIds)) {
        await this.convertLegacyList(key, item.guardrailIds as string[]);
        continue;
      }
      const present = item.guardrailIds instanceof Set && item.guardrailIds.has(guardrailId);
      if (present === (change === 'add')) return 'unchanged';
      // Changed by someone else between the write and the read: try again.
    }
    throw new Error(`guardrail set of ${key.pk} ${key.sk} kept changing under ${change}`);
  }

  /**
   * Items written before guardrail ids were a set hold a list. Converted once, on the
   * first change; the condition on the type makes exactly one converter win.
   */
  private async convertLegacyList(key: { pk: string; sk: string }, list: readonly string[]): Promise<void> {
    const unique = [...new Set(list)];
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: unique.length > 0 ? 'SET guardrailIds = :ids' : 'REMOVE guardrailIds',
          ConditionExpression: 'attribute_type(guardrailIds, :list)',
          ExpressionAttributeValues: { ':list': 'L', ...(unique.length > 0 ? { ':ids': new Set(unique) } : {}) },
        }),
      );
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
    }
  }

  async createUser(user: User): Promise<void> {
    await this.items.create({ pk: orgPk(user.organizationId), sk: `USER#${user.id}`, ...user }, `user ${user.id}`);
  }

  async getUser(organizationId: string, id: string): Promise<User | undefined> {
    return this.items.get<User>(orgPk(organizationId), `USER#${id}`);
  }

  async createApiKey(key: ApiKeyRecord): Promise<void> {
    await this.items.create(
      {
        pk: keyPk(key.hash),
        sk: 'APIKEY',
        gsi1pk: `${orgPk(key.organizationId)}#APIKEYS`,
        gsi1sk: `${key.createdAt}#${key.hash}`,
        ...withGuardrailSet(key),
      },
      'API key',
    );
  }

  async getApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return withGuardrailList(await this.items.get<ApiKeyRecord>(keyPk(hash), 'APIKEY'));
  }

  async getRecords({ keyHash, organizationId, workspaceId }: RecordIds): Promise<AccountRecords> {
    const keyOf = keyHash === undefined ? undefined : { pk: keyPk(keyHash), sk: 'APIKEY' };
    const orgOf = organizationId === undefined ? undefined : { pk: orgPk(organizationId), sk: 'ORG' };
    const workspaceOf = organizationId === undefined || workspaceId === undefined ? undefined : { pk: orgPk(organizationId), sk: `WORKSPACE#${workspaceId}` };
    const wanted = [keyOf, orgOf, workspaceOf].filter((key): key is { pk: string; sk: string } => key !== undefined);
    if (wanted.length === 0) return {};
    const items = await this.items.batchGet(wanted);
    const found = <T>(key: { pk: string; sk: string } | undefined): T | undefined => {
      const item = key && items.get(itemId(key.pk, key.sk));
      return item ? strip<T>(item) : undefined;
    };
    return {
      key: withGuardrailList(found<ApiKeyRecord>(keyOf)),
      organization: found<Organization>(orgOf),
      workspace: workspaceRecord(found<Workspace>(workspaceOf)),
    };
  }

  async listApiKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    return (await this.items.queryIndex<ApiKeyRecord>(`${orgPk(organizationId)}#APIKEYS`)).map((k) => withGuardrailList(k)!);
  }

  async updateApiKey(hash: string, patch: ApiKeyPatch, updatedAt: string): Promise<ApiKeyRecord | undefined> {
    return withGuardrailList(await this.items.update<ApiKeyRecord>(keyPk(hash), 'APIKEY', { ...patch, updatedAt }));
  }

  async deleteApiKey(hash: string): Promise<boolean> {
    return this.items.delete(keyPk(hash), 'APIKEY');
  }

  async createGuardrail(guardrail: Guardrail): Promise<void> {
    await this.items.create(
      { pk: orgPk(guardrail.organizationId), sk: `GUARDRAIL#${guardrail.id}`, ...guardrail },
      `guardrail ${guardrail.id}`,
    );
  }

  async getGuardrail(organizationId: string, id: string): Promise<Guardrail | undefined> {
    return this.items.get<Guardrail>(orgPk(organizationId), `GUARDRAIL#${id}`);
  }

  async getGuardrails(organizationId: string, ids: readonly string[]): Promise<Guardrail[]> {
    const unique = [...new Set(ids)];
    const items = await this.items.batchGet(unique.map((id) => ({ pk: orgPk(organizationId), sk: `GUARDRAIL#${id}` })));
    // In the order asked, skipping ids whose guardrail is gone.
    return unique.flatMap((id) => {
      const item = items.get(itemId(orgPk(organizationId), `GUARDRAIL#${id}`));
      return item ? [strip<Guardrail>(item)] : [];
    });
  }

  async listGuardrails(organizationId: string): Promise<Guardrail[]> {
    return this.items.queryPrefix<Guardrail>(orgPk(organizationId), 'GUARDRAIL#');
  }

  async updateGuardrail(next: Guardrail, expectedVersion: number | undefined): Promise<boolean> {
    return this.items.replaceAtVersion({ pk: orgPk(next.organizationId), sk: `GUARDRAIL#${next.id}`, ...next }, expectedVersion);
  }

  async deleteGuardrail(organizationId: string, id: string): Promise<boolean> {
    return this.items.delete(orgPk(organizationId), `GUARDRAIL#${id}`);
  }
}

const orgPk = (id: string) => `ORG#${id}`;
const keyPk = (hash: string) => `APIKEY#${hash}`;

function holderKey(holder: GuardrailHolder): { pk: string; sk: string } {
  return holder.kind === 'key'
    ? { pk: keyPk(holder.hash), sk: 'APIKEY' }
    : { pk: orgPk(holder.organizationId), sk: `WORKSPACE#${holder.id}` };
}

/** The item form: a string set, or no attribute at all (DynamoDB has no empty sets). */
function withGuardrailSet<T extends { guardrailIds: string[] }>(record: T): Omit<T, 'guardrailIds'> & { guardrailIds?: Set<string> } {
  const { guardrailIds, ...rest } = record;
  return guardrailIds.length > 0 ? { ...rest, guardrailIds: new Set(guardrailIds) } : rest;
}

/** The attribute prefix of an assignment's time on a key or workspace item. */
const ASSIGNED_AT = 'assignedAt:';

/**
 * The record form: a sorted list, whichever form (set, legacy list, absent) the item has, and
 * the assignment times gathered into `guardrailAssignedAt`.
 */
function withGuardrailList<T extends { guardrailIds: string[] }>(record: T | undefined): T | undefined {
  if (!record) return undefined;
  const assignedAt: Record<string, string> = {};
  const rest: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    if (name.startsWith(ASSIGNED_AT)) assignedAt[name.slice(ASSIGNED_AT.length)] = String(value);
    else rest[name] = value;
  }
  const stored = (record as { guardrailIds?: Iterable<string> }).guardrailIds;
  return { ...(rest as T), guardrailIds: [...new Set(stored ?? [])].sort(), ...(Object.keys(assignedAt).length > 0 ? { guardrailAssignedAt: assignedAt } : {}) };
}

/** A workspace record: its key places stay in the store. */
function workspaceRecord(item: Workspace | undefined): Workspace | undefined {
  if (!item) return undefined;
  const { keyHolds: _holds, guardrailAssignedAt: _assignedAt, ...workspace } = withGuardrailList(item) as Workspace & { keyHolds?: unknown; guardrailAssignedAt?: unknown };
  return workspace;
}

