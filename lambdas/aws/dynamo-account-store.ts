import { DeleteCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  AlreadyExistsError,
  type AccountRecords,
  type AccountStore,
  type ApiKeyPatch,
  type GuardrailHolder,
  type OrganizationPatch,
  type RecordIds,
  type SetChange,
  type WorkspacePatch,
} from '../accounts/account-store';
import type { ApiKeyRecord, Guardrail, Organization, User, Workspace } from '../accounts/types';
import { isConditionalCheckFailed } from './dynamo-client';
import { DynamoItems, itemId, strip } from './dynamo-items';

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
 * A key is fetched by its hash alone, so authentication is one GetItem.
 *
 * `guardrailIds` of keys and workspaces is a DynamoDB string set changed only with `ADD`
 * and `DELETE` of one element, never rewritten whole. DynamoDB has no empty sets, so an
 * item without guardrails has no such attribute. Items written before sets were used hold
 * a list; the first change converts it (see {@link convertLegacyList}).
 */
export class DynamoAccountStore implements AccountStore {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.items = new DynamoItems(client, tableName);
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

  /**
   * The slug is claimed first with a conditional put of a claim item, so of two concurrent
   * creations with one slug exactly one wins. The claim names its workspace: a claim whose
   * workspace never appeared (the process died between the two writes) is taken over once
   * it is older than {@link ABANDONED_CLAIM_MS}, so a crash cannot lock a slug forever.
   */
  async createWorkspace(workspace: Workspace): Promise<void> {
    const pk = orgPk(workspace.organizationId);
    const claim = { pk, sk: slugSk(workspace.slug), workspaceId: workspace.id, claimedAt: workspace.createdAt };
    const taken = new AlreadyExistsError(`A workspace with slug "${workspace.slug}"`);
    try {
      await this.client.send(new PutCommand({ TableName: this.tableName, Item: claim, ConditionExpression: 'attribute_not_exists(pk)' }));
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      const current = await this.items.get<{ workspaceId: string; claimedAt: string }>(pk, slugSk(workspace.slug));
      const abandoned =
        current !== undefined &&
        Date.parse(workspace.createdAt) - Date.parse(current.claimedAt) > ABANDONED_CLAIM_MS &&
        (await this.getWorkspace(workspace.organizationId, current.workspaceId)) === undefined;
      if (!abandoned) throw taken;
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: claim,
            ConditionExpression: 'workspaceId = :previous',
            ExpressionAttributeValues: { ':previous': current.workspaceId },
          }),
        );
      } catch (takeoverError) {
        if (isConditionalCheckFailed(takeoverError)) throw taken;
        throw takeoverError;
      }
    }
    try {
      await this.items.create({ pk, sk: `WORKSPACE#${workspace.id}`, ...withGuardrailSet(workspace) }, `workspace ${workspace.id}`);
    } catch (error) {
      await this.client
        .send(
          new DeleteCommand({
            TableName: this.tableName,
            Key: { pk, sk: slugSk(workspace.slug) },
            ConditionExpression: 'workspaceId = :mine',
            ExpressionAttributeValues: { ':mine': workspace.id },
          }),
        )
        .catch(() => undefined);
      throw error;
    }
  }

  async getWorkspace(organizationId: string, id: string): Promise<Workspace | undefined> {
    return withGuardrailList(await this.items.get<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`));
  }

  async listWorkspaces(organizationId: string): Promise<Workspace[]> {
    return (await this.items.queryPrefix<Workspace>(orgPk(organizationId), 'WORKSPACE#')).map((w) => withGuardrailList(w)!);
  }

  async updateWorkspace(organizationId: string, id: string, patch: WorkspacePatch, updatedAt: string): Promise<Workspace | undefined> {
    return withGuardrailList(await this.items.update<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`, { ...patch, updatedAt }));
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
            UpdateExpression: `${change === 'add' ? 'ADD' : 'DELETE'} guardrailIds :ids SET updatedAt = :now`,
            ConditionExpression:
              change === 'add'
                ? 'attribute_exists(pk) AND (attribute_not_exists(guardrailIds) OR (attribute_type(guardrailIds, :set) AND NOT contains(guardrailIds, :id)))'
                : 'attribute_exists(pk) AND attribute_type(guardrailIds, :set) AND contains(guardrailIds, :id)',
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
      workspace: withGuardrailList(found<Workspace>(workspaceOf)),
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
const slugSk = (slug: string) => `SLUG#${slug}`;

/** How long a slug claim without its workspace is honoured before it counts as abandoned. */
const ABANDONED_CLAIM_MS = 60_000;

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

/** The record form: a sorted list, whichever form (set, legacy list, absent) the item has. */
function withGuardrailList<T extends { guardrailIds: string[] }>(record: T | undefined): T | undefined {
  if (!record) return undefined;
  const stored = (record as { guardrailIds?: Iterable<string> }).guardrailIds;
  return { ...record, guardrailIds: [...new Set(stored ?? [])].sort() };
}

