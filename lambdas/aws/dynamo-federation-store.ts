import { createHash } from 'node:crypto';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { systemClock, type Clock } from '../clock';
import { IssuerUrlTakenError, byCreation, type FederationStore } from '../federation/federation-store';
import type { FederationIssuer, FederationPolicy } from '../federation/types';
import { conditionalDelete, isConditionalCheckFailed } from './dynamo-client';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/**
 * Issuers and policies in the policies table, one item per fact:
 *
 * | item             | pk             | sk                       | gsi1pk                | gsi1sk                         |
 * |------------------|----------------|--------------------------|-----------------------|--------------------------------|
 * | issuer           | `ORG#<org>`    | `ISSUER#<id>`            |                       |                                |
 * | issuer URL claim | `ORG#<org>`    | `ISSUER_URL#<sha256>`    |                       |                                |
 * | policy           | `POLICY#<id>`  | `POLICY`                 | `ORG#<org>#POLICIES`  | `<issuerId>#<createdAt>#<id>`  |
 *
 * The token exchange names a policy by id alone: one GetItem finds it, a second its issuer
 * (both strongly consistent). Issuer URLs are unique per organization through a claim item
 * keyed by the URL's hash (bounded key length, any URL). Other facts in this table (exchange
 * events, replay markers) use other key prefixes.
 */
export class DynamoFederationStore implements FederationStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock = systemClock,
  ) {}

  async getPolicy(policyId: string): Promise<FederationPolicy | undefined> {
    return this.get<FederationPolicy>(policyPk(policyId), POLICY_SK);
  }

  async getIssuer(organizationId: string, issuerId: string): Promise<FederationIssuer | undefined> {
    return this.get<FederationIssuer>(orgPk(organizationId), issuerSk(issuerId));
  }

  async createIssuer(issuer: FederationIssuer): Promise<void> {
    await this.claimUrl(issuer);
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: issuerItem(issuer),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      await this.releaseUrl(issuer.organizationId, issuer.issuerUrl, issuer.id);
      throw error;
    }
  }

  async listIssuers(organizationId: string): Promise<FederationIssuer[]> {
    const issuers = await this.queryAll<FederationIssuer>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': orgPk(organizationId), ':prefix': 'ISSUER#' },
      ConsistentRead: true,
    });
    return issuers.sort(byCreation);
  }

  async updateIssuer(next: FederationIssuer, expectedVersion: number): Promise<boolean> {
    const current = await this.getIssuer(next.organizationId, next.id);
    if (!current || current.version !== expectedVersion) return false;
    const urlChanged = current.issuerUrl !== next.issuerUrl;
    // The new URL is claimed before the issuer says it has it, and the old claim released
    // only after: a crash in between leaves a stale claim, never two issuers with one URL.
    if (urlChanged) await this.claimUrl(next);
    const written = await this.putIfVersion(issuerItem(next), expectedVersion);
    if (urlChanged) await this.releaseUrl(next.organizationId, written ? current.issuerUrl : next.issuerUrl, next.id);
    return written;
  }

  async deleteIssuer(organizationId: string, issuerId: string): Promise<boolean> {
    const current = await this.getIssuer(organizationId, issuerId);
    if (!current) return false;
    const deleted = await this.deleteIfExists(orgPk(organizationId), issuerSk(issuerId));
    await this.releaseUrl(organizationId, current.issuerUrl, issuerId);
    return deleted;
  }

  async createPolicy(policy: FederationPolicy): Promise<void> {
    await this.client.send(
      new PutCommand({ TableName: this.tableName, Item: policyItem(policy), ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  }

  async listPolicies(organizationId: string, issuerId?: string): Promise<FederationPolicy[]> {
    // Global secondary indexes are eventually consistent: a list may lag a write briefly.
    const input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'> =
      issuerId === undefined
        ? {
            IndexName: BY_ORGANIZATION_INDEX,
            KeyConditionExpression: 'gsi1pk = :pk',
            ExpressionAttributeValues: { ':pk': policiesGsiPk(organizationId) },
          }
        : {
            IndexName: BY_ORGANIZATION_INDEX,
            KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :issuer)',
            ExpressionAttributeValues: { ':pk': policiesGsiPk(organizationId), ':issuer': `${issuerId}#` },
          };
    const policies = await this.queryAll<FederationPolicy>(input);
    return policies.sort(byCreation);
  }

  async updatePolicy(next: FederationPolicy, expectedVersion: number): Promise<boolean> {
    return this.putIfVersion(policyItem(next), expectedVersion);
  }

  async deletePolicy(organizationId: string, policyId: string): Promise<boolean> {
    return conditionalDelete(this.client, {
      TableName: this.tableName,
      Key: { pk: policyPk(policyId), sk: POLICY_SK },
      ConditionExpression: 'organizationId = :org',
      ExpressionAttributeValues: { ':org': organizationId },
    });
  }

  /**
   * Claims `issuer.issuerUrl` for `issuer.id`. A claim whose issuer no longer exists is stale
   * (an interrupted create, update or delete) and is taken over once it is older than
   * {@link STALE_CLAIM_MS}; a younger one may belong to a create still in progress.
   */
  private async claimUrl(issuer: FederationIssuer): Promise<void> {
    const key = { pk: orgPk(issuer.organizationId), sk: urlSk(issuer.issuerUrl) };
    const claim = { ...key, issuerId: issuer.id, issuerUrl: issuer.issuerUrl, claimedAt: this.clock.now().toISOString() };
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.get<{ issuerId: string; claimedAt: string }>(key.pk, key.sk);
      if (existing?.issuerId === issuer.id) return;
      if (existing) {
        const holder = await this.getIssuer(issuer.organizationId, existing.issuerId);
        const age = this.clock.now().getTime() - Date.parse(existing.claimedAt);
        if (holder || !(age > STALE_CLAIM_MS)) throw new IssuerUrlTakenError(issuer.issuerUrl);
      }
      try {
        await this.client.send(
          new PutCommand({
            TableName: this.tableName,
            Item: claim,
            ...(existing
              ? { ConditionExpression: 'issuerId = :stale', ExpressionAttributeValues: { ':stale': existing.issuerId } }
              : { ConditionExpression: 'attribute_not_exists(pk)' }),
          }),
        );
        return;
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
      }
    }
    throw new IssuerUrlTakenError(issuer.issuerUrl);
  }

  /** Releases the claim only if this issuer holds it. */
  private async releaseUrl(organizationId: string, issuerUrl: string, issuerId: string): Promise<void> {
    await conditionalDelete(this.client, {
      TableName: this.tableName,
      Key: { pk: orgPk(organizationId), sk: urlSk(issuerUrl) },
      ConditionExpression: 'issuerId = :id',
      ExpressionAttributeValues: { ':id': issuerId },
    });
  }

  private async putIfVersion(item: Record<string, unknown>, expectedVersion: number): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: '#version = :expected AND organizationId = :org',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':expected': expectedVersion, ':org': item.organizationId },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  private async deleteIfExists(pk: string, sk: string): Promise<boolean> {
    return conditionalDelete(this.client, { TableName: this.tableName, Key: { pk, sk }, ConditionExpression: 'attribute_exists(pk)' });
  }

  private async get<T>(pk: string, sk: string): Promise<T | undefined> {
    // Strongly consistent: a policy paused or deleted a moment ago refuses the next exchange (SPEC 3).
    const result = await this.client.send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return result.Item ? strip<T>(result.Item) : undefined;
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
}

/** How old a claim on an issuer URL whose issuer does not exist must be before it is taken over. */
export const STALE_CLAIM_MS = 60_000;

const POLICY_SK = 'POLICY';
const orgPk = (organizationId: string) => `ORG#${organizationId}`;
const issuerSk = (issuerId: string) => `ISSUER#${issuerId}`;
const urlSk = (issuerUrl: string) => `ISSUER_URL#${createHash('sha256').update(issuerUrl, 'utf8').digest('hex')}`;
const policyPk = (policyId: string) => `POLICY#${policyId}`;
const policiesGsiPk = (organizationId: string) => `${orgPk(organizationId)}#POLICIES`;

function issuerItem(issuer: FederationIssuer): Record<string, unknown> {
  return { pk: orgPk(issuer.organizationId), sk: issuerSk(issuer.id), ...issuer };
}

function policyItem(policy: FederationPolicy): Record<string, unknown> {
  return {
    pk: policyPk(policy.id),
    sk: POLICY_SK,
    gsi1pk: policiesGsiPk(policy.organizationId),
    gsi1sk: `${policy.issuerId}#${policy.createdAt}#${policy.id}`,
    ...policy,
  };
}

function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, ...rest } = item;
  return rest as T;
}
