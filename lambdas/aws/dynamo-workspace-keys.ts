import { defaultWorkspaceOf, type KeyPage, type WorkspaceDeletion } from '../accounts/account-store';
import { WORKSPACE_LIMITS, type ApiKeyRecord, type Workspace } from '../accounts/types';
import { DynamoItems, strip, type TransactionAction } from './dynamo-items';
import { AlongRefused, type CopyKind, type ReadReplicas } from './dynamo-read-replicas';
import { apiKeyKey, type KeyPages } from './dynamo-key-pages';

/** The item of a workspace, and of an API key (dynamo-account-store.ts). */
const workspaceKey = (organizationId: string, id: string) => ({ pk: `ORG#${organizationId}`, sk: `WORKSPACE#${id}` });

/** The sort-key prefix of a workspace's member items, `WSKEY#<workspace>#`. */
const MEMBER_PREFIX = 'WSKEY#';
/** A key's member item: `ORG#<org>` / `WSKEY#<workspace>#<createdAt>#<hash>`, so a workspace's keys read oldest first, as the organization's listing orders them. */
const memberKey = (key: WorkspaceMember) => ({ pk: `ORG#${key.organizationId}`, sk: `${MEMBER_PREFIX}${key.workspaceId}#${key.createdAt}#${key.hash}` });

/** What names a key's place in its workspace. */
export type WorkspaceMember = Pick<ApiKeyRecord, 'organizationId' | 'createdAt' | 'hash'> & { workspaceId: string };

/** Tries of a key's write whose workspace was counted meanwhile, or found missing. */
const ATTEMPTS = 3;

/** Why a workspace refused a key's join or leave: it does not exist, it is full, or it was not counted yet (now it is: send the write again). */
export type MemberRefusal = 'missing' | 'full' | 'counted';

/**
 * Which keys a workspace holds, and how many (docs/architecture.md, "Data layout"): one member
 * item per key, and `keyCount` on the workspace item, both written in the transaction that
 * creates or deletes the key ({@link joining}, {@link leaving}). A workspace is deleted on
 * condition that `keyCount` is 0 and a key joins on condition that it is below
 * `WORKSPACE_LIMITS.keys`: one item both conditions read, so deleting a workspace and creating a
 * key in it cannot both succeed, and no crash leaves a count without its key or a key without
 * its count. The workspace item stays the same size however many keys it holds. A workspace
 * written by an earlier release (its key places in `keyHolds`, or none) is counted by the first
 * write that needs it.
 */
export class WorkspaceKeys {
  constructor(
    private readonly tableName: string,
    private readonly items: DynamoItems,
    private readonly copies: ReadReplicas,
    private readonly pages: KeyPages,
    private readonly listKeys: (organizationId: string) => Promise<ApiKeyRecord[]>,
  ) {}

  /** The writes that put `key` in its workspace, beside its create: the count up, below the most a workspace holds, and its member item. */
  joining(key: WorkspaceMember): TransactionAction[] {
    return [this.counting(key, 1), { Put: { TableName: this.tableName, Item: { ...memberKey(key), keyHash: key.hash } } }];
  }

  /** The writes that take `key` out of its workspace, beside its delete: the count down, and its member item gone. */
  leaving(key: WorkspaceMember): TransactionAction[] {
    return [this.counting(key, -1), { Delete: { TableName: this.tableName, Key: memberKey(key) } }];
  }

  /** `by` added to the count of `key`'s workspace, on condition that it is counted and, adding, below the most a workspace holds; the item as it was when refused. */
  private counting(key: WorkspaceMember, by: 1 | -1): TransactionAction {
    return {
      Update: {
        TableName: this.tableName,
        Key: workspaceKey(key.organizationId, key.workspaceId),
        UpdateExpression: 'ADD keyCount :by',
        ConditionExpression: by > 0 ? 'attribute_exists(keyCount) AND keyCount < :most' : 'attribute_exists(keyCount)',
        ExpressionAttributeValues: { ':by': by, ...(by > 0 ? { ':most': WORKSPACE_LIMITS.keys } : {}) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  /**
   * Runs `create`, a key's create given what counts it in its workspace ({@link joining}; none
   * for a key of no workspace), and again once a workspace from before counts is counted:
   * `missing` or `full` when the workspace refused it, nothing written.
   */
  async joined(key: ApiKeyRecord, create: (along: TransactionAction[]) => Promise<void>): Promise<'created' | 'missing' | 'full'> {
    const workspaceId = key.workspaceId ?? undefined;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await create(workspaceId ? this.joining({ ...key, workspaceId }) : []);
        return 'created';
      } catch (error) {
        if (!(error instanceof AlongRefused) || !workspaceId) throw error;
        const refusal = await this.refusal(key.organizationId, workspaceId, error.failed[0]?.item);
        if (refusal !== 'counted') return refusal;
      }
    }
    throw new Error(`the keys of workspace ${workspaceId} could not be counted`);
  }

  /**
   * Runs `remove`, a key's delete given what takes a key out of its workspace ({@link leaving}),
   * and again once a workspace from before counts is counted; a workspace found missing (no
   * key of its own outlives it) has nothing to leave. `key` reads the key when that is asked.
   */
  async left<T>(remove: (leaving: (key: WorkspaceMember) => TransactionAction[]) => Promise<T>, key: () => Promise<ApiKeyRecord | undefined>): Promise<T> {
    let leaving = (member: WorkspaceMember) => this.leaving(member);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        return await remove(leaving);
      } catch (error) {
        if (!(error instanceof AlongRefused)) throw error;
        const found = await key();
        if (!found?.workspaceId) continue;
        if ((await this.refusal(found.organizationId, found.workspaceId, error.failed[0]?.item)) === 'missing') leaving = () => [];
      }
    }
    throw new Error('the key could not leave its workspace');
  }

  /** Why the workspace refused a join or leave, from the workspace item as the failed condition found it (none: it does not exist). */
  async refusal(organizationId: string, workspaceId: string, found: Record<string, unknown> | undefined): Promise<MemberRefusal> {
    if (!found) return 'missing';
    if (typeof found.keyCount === 'number') return 'full';
    return (await this.count(organizationId, workspaceId)) ? 'counted' : 'missing';
  }

  /**
   * The workspace `id` (none: the organization's default, {@link defaultWorkspaceOf}) as stored,
   * and its keys, oldest first, as its member items name them: a named workspace's item and its
   * member items side by side (the default one is found first), then the keys themselves,
   * strongly consistently: all of them, or those of `page`, a hundred at a time until it is
   * full. Undefined when the workspace does not exist.
   */
  async list(organizationId: string, id: string | undefined, page?: KeyPage): Promise<{ workspace: Workspace; keys: ApiKeyRecord[] } | undefined> {
    const named = id === undefined ? undefined : this.hashes(organizationId, id);
    // Settled here, so a missing workspace's query never goes unhandled.
    void named?.catch(() => undefined);
    const item =
      id === undefined
        ? defaultWorkspaceOf(await this.items.queryPrefix<Workspace>(`ORG#${organizationId}`, 'WORKSPACE#'))
        : await this.items.get<Workspace>(`ORG#${organizationId}`, `WORKSPACE#${id}`);
    if (!item) return undefined;
    const hashes = await this.counted(organizationId, item, (await named) ?? (await this.hashes(organizationId, item.id)));
    const asked = page ?? { offset: 0, limit: hashes.length, includeDisabled: true };
    // Disabled keys included, the member items alone say which keys the offset skips (each names a key that exists: both are written in one transaction).
    const skipped = asked.includeDisabled ? asked.offset : 0;
    const keys = await this.pages.read(listed(hashes.slice(skipped)), asked, () => true, skipped);
    return { workspace: item, keys };
  }

  /** The hashes of the workspace's keys, oldest first, from its member items, read strongly consistently. */
  private async hashes(organizationId: string, workspaceId: string): Promise<string[]> {
    const members = await this.items.queryPrefix<{ keyHash: string }>(`ORG#${organizationId}`, `${MEMBER_PREFIX}${workspaceId}#`);
    return members.map((member) => member.keyHash);
  }

  /** `hashes` as read beside the workspace `item`; read again once a workspace from before counts is counted (its member items written). */
  private async counted(organizationId: string, item: Workspace & { keyCount?: unknown }, hashes: string[]): Promise<string[]> {
    if (typeof item.keyCount === 'number') return hashes;
    await this.count(organizationId, item.id);
    return this.hashes(organizationId, item.id);
  }

  /** Deletes the workspace with its copies (`kind`), in one transaction, while it holds no key. */
  async deleteWorkspace(organizationId: string, workspaceId: string, kind: CopyKind): Promise<WorkspaceDeletion> {
    const key = workspaceKey(organizationId, workspaceId);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const deletion = await this.copies.delete(key, kind, { expression: 'keyCount = :none', values: { ':none': 0 } });
      if (deletion.outcome === 'deleted') return { outcome: 'deleted', workspace: strip<Workspace>(deletion.item) };
      if (deletion.outcome === 'missing') return { outcome: 'missing' };
      const count = deletion.item.keyCount;
      if (typeof count === 'number') return { outcome: 'has-keys', keys: count };
      if (!(await this.count(organizationId, workspaceId))) return { outcome: 'missing' };
    }
    throw new Error(`the keys of workspace ${workspaceId} could not be counted`);
  }

  /**
   * Counts a workspace written before counts: its keys (those its places name that exist and are
   * its own; without places, those the organization's listing shows in it) get member items, then
   * `keyCount` is set and the places removed, unless another writer counted it meanwhile. False
   * when the workspace does not exist.
   */
  private async count(organizationId: string, workspaceId: string): Promise<boolean> {
    const item = await this.items.getItem(workspaceKey(organizationId, workspaceId));
    if (!item) return false;
    if (typeof item.keyCount === 'number') return true;
    const places = item.keyHolds as Record<string, string> | undefined;
    const candidates = places
      ? [...(await this.items.batchGet(Object.keys(places).map(apiKeyKey))).values()].map((found) => strip<ApiKeyRecord>(found))
      : await this.listKeys(organizationId);
    const keys = candidates.filter((key) => key.organizationId === organizationId && key.workspaceId === workspaceId);
    await this.items.batchWrite(keys.map((key) => ({ PutRequest: { Item: { ...memberKey({ ...key, workspaceId }), keyHash: key.hash } } })));
    const counted = await this.items.write({
      Update: {
        Key: workspaceKey(organizationId, workspaceId),
        UpdateExpression: 'SET keyCount = :count REMOVE keyHolds',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(keyCount)',
        ExpressionAttributeValues: { ':count': keys.length },
      },
    });
    // Not written: counted by another writer meanwhile (the item is there), or the workspace is gone.
    return counted.written || counted.item !== undefined;
  }
}

/** A list already read, as the one chunk {@link KeyPages.read} takes. */
async function* listed(hashes: readonly string[]): AsyncGenerator<readonly string[]> {
  yield hashes;
}
