import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import {
  AlreadyExistsError,
  type AccountStore,
  type ApiKeyPatch,
  type GuardrailPatch,
  type OrganizationPatch,
  type WorkspacePatch,
} from '../accounts/account-store';
import type { ApiKeyRecord, Guardrail, Organization, User, Workspace } from '../accounts/types';
import { isConditionalCheckFailed } from './dynamo-client';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/**
 * Accounts in the keys table, one item per fact:
 *
 * | item         | pk                | sk                | gsi1pk                  | gsi1sk              |
 * |--------------|-------------------|-------------------|-------------------------|---------------------|
 * | organization | `ORG#<id>`        | `ORG`             | `ORGS`                  | `<id>`              |
 * | workspace    | `ORG#<org>`       | `WORKSPACE#<id>`  |                         |                     |
 * | user         | `ORG#<org>`       | `USER#<id>`       |                         |                     |
 * | guardrail    | `ORG#<org>`       | `GUARDRAIL#<id>`  |                         |                     |
 * | API key      | `APIKEY#<hash>`   | `APIKEY`          | `ORG#<org>#APIKEYS`     | `<createdAt>#<hash>`|
 *
 * A key is fetched by its hash alone, so authentication is one GetItem.
 */
export class DynamoAccountStore implements AccountStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async createOrganization(organization: Organization): Promise<void> {
    await this.create(
      { pk: orgPk(organization.id), sk: 'ORG', gsi1pk: 'ORGS', gsi1sk: organization.id, ...organization },
      `organization ${organization.id}`,
    );
  }

  async getOrganization(id: string): Promise<Organization | undefined> {
    return this.get<Organization>(orgPk(id), 'ORG');
  }

  async listOrganizations(): Promise<Organization[]> {
    return this.queryIndex<Organization>('ORGS');
  }

  async updateOrganization(id: string, patch: OrganizationPatch, updatedAt: string): Promise<Organization | undefined> {
    return this.update<Organization>(orgPk(id), 'ORG', { ...patch, updatedAt });
  }

  async createWorkspace(workspace: Workspace): Promise<void> {
    await this.create(
      { pk: orgPk(workspace.organizationId), sk: `WORKSPACE#${workspace.id}`, ...workspace },
      `workspace ${workspace.id}`,
    );
  }

  async getWorkspace(organizationId: string, id: string): Promise<Workspace | undefined> {
    return this.get<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`);
  }

  async listWorkspaces(organizationId: string): Promise<Workspace[]> {
    return this.queryPrefix<Workspace>(orgPk(organizationId), 'WORKSPACE#');
  }

  async updateWorkspace(organizationId: string, id: string, patch: WorkspacePatch, updatedAt: string): Promise<Workspace | undefined> {
    return this.update<Workspace>(orgPk(organizationId), `WORKSPACE#${id}`, { ...patch, updatedAt });
  }

  async createUser(user: User): Promise<void> {
    await this.create({ pk: orgPk(user.organizationId), sk: `USER#${user.id}`, ...user }, `user ${user.id}`);
  }

  async getUser(organizationId: string, id: string): Promise<User | undefined> {
    return this.get<User>(orgPk(organizationId), `USER#${id}`);
  }

  async createApiKey(key: ApiKeyRecord): Promise<void> {
    await this.create(
      {
        pk: keyPk(key.hash),
        sk: 'APIKEY',
        gsi1pk: `${orgPk(key.organizationId)}#APIKEYS`,
        gsi1sk: `${key.createdAt}#${key.hash}`,
        ...key,
      },
      'API key',
    );
  }

  async getApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.get<ApiKeyRecord>(keyPk(hash), 'APIKEY');
  }

  async listApiKeys(organizationId: string): Promise<ApiKeyRecord[]> {
    return this.queryIndex<ApiKeyRecord>(`${orgPk(organizationId)}#APIKEYS`);
  }

  async updateApiKey(hash: string, patch: ApiKeyPatch, updatedAt: string): Promise<ApiKeyRecord | undefined> {
    return this.update<ApiKeyRecord>(keyPk(hash), 'APIKEY', { ...patch, updatedAt });
  }

  async deleteApiKey(hash: string): Promise<boolean> {
    return this.delete(keyPk(hash), 'APIKEY');
  }

  async createGuardrail(guardrail: Guardrail): Promise<void> {
    await this.create(
      { pk: orgPk(guardrail.organizationId), sk: `GUARDRAIL#${guardrail.id}`, ...guardrail },
      `guardrail ${guardrail.id}`,
    );
  }

  async getGuardrail(organizationId: string, id: string): Promise<Guardrail | undefined> {
    return this.get<Guardrail>(orgPk(organizationId), `GUARDRAIL#${id}`);
  }

  async getGuardrails(organizationId: string, ids: readonly string[]): Promise<Guardrail[]> {
    const unique = [...new Set(ids)];
    const found: Guardrail[] = [];
    // BatchGetItem takes at most 100 keys per call.
    for (let start = 0; start < unique.length; start += 100) {
      let keys: Record<string, string>[] = unique
        .slice(start, start + 100)
        .map((id) => ({ pk: orgPk(organizationId), sk: `GUARDRAIL#${id}` }));
      while (keys.length > 0) {
        const result = await this.client.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) found.push(strip<Guardrail>(item));
        keys = (result.UnprocessedKeys?.[this.tableName]?.Keys as Record<string, string>[] | undefined) ?? [];
      }
    }
    const order = new Map(unique.map((id, i) => [id, i]));
    return found.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  }

  async listGuardrails(organizationId: string): Promise<Guardrail[]> {
    return this.queryPrefix<Guardrail>(orgPk(organizationId), 'GUARDRAIL#');
  }

  async updateGuardrail(organizationId: string, id: string, patch: GuardrailPatch, updatedAt: string): Promise<Guardrail | undefined> {
    return this.update<Guardrail>(orgPk(organizationId), `GUARDRAIL#${id}`, { ...patch, updatedAt });
  }

  async deleteGuardrail(organizationId: string, id: string): Promise<boolean> {
    return this.delete(orgPk(organizationId), `GUARDRAIL#${id}`);
  }

  private async create(item: Record<string, unknown>, what: string): Promise<void> {
    try {
      await this.client.send(
        new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
    } catch (error) {
      if (isConditionalCheckFailed(error)) throw new AlreadyExistsError(what);
      throw error;
    }
  }

  private async get<T>(pk: string, sk: string): Promise<T | undefined> {
    // Strongly consistent: a key disabled a moment ago must be refused on the next request.
    const result = await this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return result.Item ? strip<T>(result.Item) : undefined;
  }

  private async queryPrefix<T>(pk: string, prefix: string): Promise<T[]> {
    return this.queryAll<T>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
      ConsistentRead: true,
    });
  }

  private async queryIndex<T>(gsi1pk: string): Promise<T[]> {
    // Global secondary indexes are eventually consistent; lists may lag a write briefly.
    return this.queryAll<T>({
      IndexName: BY_ORGANIZATION_INDEX,
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': gsi1pk },
    });
  }

  private async queryAll<T>(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<T[]> {
    const items: T[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(new QueryCommand({ ...input, TableName: this.tableName, ExclusiveStartKey: startKey }));
      for (const item of page.Items ?? []) items.push(strip<T>(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
  }

  private async update<T>(pk: string, sk: string, patch: Record<string, unknown>): Promise<T | undefined> {
    const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets = entries.map(([field, value], i) => {
      names[`#f${i}`] = field;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    });
    try {
      const result = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk, sk },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes ? strip<T>(result.Attributes) : undefined;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return undefined;
      throw error;
    }
  }

  private async delete(pk: string, sk: string): Promise<boolean> {
    try {
      await this.client.send(
        new DeleteCommand({ TableName: this.tableName, Key: { pk, sk }, ConditionExpression: 'attribute_exists(pk)' }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}

const orgPk = (id: string) => `ORG#${id}`;
const keyPk = (hash: string) => `APIKEY#${hash}`;

function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...rest } = item;
  return rest as T;
}
