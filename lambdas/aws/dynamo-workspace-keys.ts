import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { WorkspaceDeletion } from '../accounts/account-store';
import { WORKSPACE_LIMITS, type ApiKeyRecord, type Workspace } from '../accounts/types';
import { systemClock, type Clock } from '../clock';
import { DynamoItems, strip } from './dynamo-items';
import { ABANDONED_PLACE_MS, reclaimAbandonedPlaces, unfinishedPlaces } from './dynamo-places';
import type { CopyKind, ReadReplicas } from './dynamo-read-replicas';

/** The item of a workspace, and of an API key (dynamo-account-store.ts). */
const workspaceKey = (organizationId: string, id: string) => ({ pk: `ORG#${organizationId}`, sk: `WORKSPACE#${id}` });
const apiKeyKey = (hash: string) => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' });

/**
 * Which keys a workspace holds, on the workspace item itself, so that deleting a workspace and
 * creating a key in it cannot both succeed: one item both conditions read. `keyHolds` maps each
 * key's hash to when its place was taken. A key takes its place (`SET keyHolds.<hash>` on
 * condition that the workspace exists) before it is written and gives it back once deleted; the
 * workspace is deleted on condition that `keyHolds` is empty, so of a concurrent create and
 * delete, whichever writes the workspace item first wins. A workspace written before places
 * existed has none: the first write that needs them starts them from the keys the organization's
 * listing shows in it. A place whose key a crash never wrote is reclaimed by a delete once older
 * than {@link ABANDONED_PLACE_MS}, as organization limits do; a younger one makes the delete say
 * when it lapses (`keys-unfinished`).
 */
export class WorkspaceKeyHolds {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly copies: ReadReplicas,
    private readonly listKeys: (organizationId: string) => Promise<ApiKeyRecord[]>,
    private readonly clock: Clock = systemClock,
    /** Before this instant no writer still runs (see isAbandoned). */
    private readonly writersSince?: Date,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /** Takes the key's place, while the workspace exists and holds fewer than `WORKSPACE_LIMITS.keys` (one condition). */
  async hold(organizationId: string, workspaceId: string, keyHash: string, at: string): Promise<'held' | 'missing' | 'full'> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const held = await this.items.write({
        Update: {
          Key: workspaceKey(organizationId, workspaceId),
          UpdateExpression: 'SET keyHolds.#hash = :at',
          ConditionExpression: 'attribute_exists(pk) AND attribute_exists(keyHolds) AND size(keyHolds) < :most',
          ExpressionAttributeNames: { '#hash': keyHash },
          ExpressionAttributeValues: { ':at': at, ':most': WORKSPACE_LIMITS.keys },
        },
      });
      if (held.written) return 'held';
      if (!held.item) return 'missing';
      const holds = held.item.keyHolds as Record<string, string> | undefined;
      if (holds && Object.keys(holds).length >= WORKSPACE_LIMITS.keys) return 'full';
      // Written before places existed.
      if (!(await this.start(organizationId, workspaceId))) return 'missing';
    }
    throw new Error(`the key places of workspace ${workspaceId} could not be started`);
  }

  async release(organizationId: string, workspaceId: string, keyHash: string): Promise<void> {
    await this.items.write({
      Update: {
        Key: workspaceKey(organizationId, workspaceId),
        UpdateExpression: 'REMOVE keyHolds.#hash',
        // Never write a workspace that is gone back into existence.
        ConditionExpression: 'attribute_exists(pk) AND attribute_exists(keyHolds)',
        ExpressionAttributeNames: { '#hash': keyHash },
      },
    });
  }

  /** Deletes the workspace with its copies (`kind`), in one transaction, while it holds no key place. */
  async deleteWorkspace(organizationId: string, workspaceId: string, kind: CopyKind): Promise<WorkspaceDeletion> {
    const key = workspaceKey(organizationId, workspaceId);
    for (let attempt = 0; attempt < 3; attempt++) {
      const deletion = await this.copies.delete(key, kind, { expression: 'attribute_exists(keyHolds) AND size(keyHolds) = :none', values: { ':none': 0 } });
      if (deletion.outcome === 'deleted') return { outcome: 'deleted', workspace: strip<Workspace>(deletion.item) };
      if (deletion.outcome === 'missing') return { outcome: 'missing' };
      const item = deletion.item as { keyHolds?: Record<string, string> };
      if (!item.keyHolds) {
        if (!(await this.start(organizationId, workspaceId))) return { outcome: 'missing' };
        continue;
      }
      if ((await this.reclaim(organizationId, workspaceId, item.keyHolds)) === 0) return this.refusal(item.keyHolds);
    }
    return this.refusal((await this.items.get<{ keyHolds?: Record<string, string> }>(key.pk, key.sk))?.keyHolds ?? {});
  }

  /**
   * Why a workspace holding places cannot be deleted: its keys, or, when no key of it exists,
   * the places of keys whose writes have not finished and when the last is abandoned.
   */
  private async refusal(holds: Readonly<Record<string, string>>): Promise<WorkspaceDeletion> {
    const now = this.clock.now().getTime();
    const unfinished = await unfinishedPlaces(this.items, { holders: holds, now, writersSince: this.writersSince }, { keyOf: apiKeyKey, isPlaced: () => true });
    const keyHashes = Object.keys(holds).filter((hash) => !unfinished.some((place) => place.id === hash)).sort();
    if (keyHashes.length > 0 || unfinished.length === 0) return { outcome: 'has-keys', keyHashes };
    const freeAt = Math.max(...unfinished.map((place) => place.abandonedAt.getTime()));
    return { outcome: 'keys-unfinished', places: unfinished.length, freeAt: new Date(freeAt) };
  }

  /** Starts the places of a workspace written before they existed; false when it does not exist. */
  private async start(organizationId: string, workspaceId: string): Promise<boolean> {
    const keys = (await this.listKeys(organizationId)).filter((k) => k.workspaceId === workspaceId);
    const started = await this.items.write({
      Update: {
        Key: workspaceKey(organizationId, workspaceId),
        UpdateExpression: 'SET keyHolds = :holds',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(keyHolds)',
        ExpressionAttributeValues: { ':holds': Object.fromEntries(keys.map((k) => [k.hash, k.createdAt])) },
      },
    });
    // Not written: started by another writer meanwhile (the item is there), or the workspace is gone.
    return started.written || started.item !== undefined;
  }

  /** Removes the places older than {@link ABANDONED_PLACE_MS} whose keys do not exist; how many. */
  private reclaim(organizationId: string, workspaceId: string, holds: Readonly<Record<string, string>>): Promise<number> {
    return reclaimAbandonedPlaces(
      this.client,
      this.items,
      this.tableName,
      { key: workspaceKey(organizationId, workspaceId), attribute: 'keyHolds', holders: holds, now: this.clock.now().getTime(), writersSince: this.writersSince },
      { keyOf: apiKeyKey, isPlaced: () => true },
    );
  }
}
