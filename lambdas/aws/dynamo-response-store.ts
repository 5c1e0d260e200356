import { gunzipSync, gzipSync } from 'node:zlib';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../clock';
import { RESPONSE_ID, type ResponseStore, type StoredResponse } from '../usage/stored-responses';
import { conditionalWrite, getItem, putItem } from './dynamo-items';

/** The most a kept response's compressed conversation and answer may take: DynamoDB's item limit is 400 KB. */
export const MAX_STORED_BYTES = 350 * 1024;

/**
 * Responses in their own table (encrypted at rest with the deployment's own KMS key): one item
 * per response, its own partition (`pk` is the random id, so none is hot), the response and its
 * conversation gzipped in one binary attribute of at most {@link MAX_STORED_BYTES}, expiring
 * `retentionDays` after the request (`expiresAt`, DynamoDB's TTL). The organization is in the
 * item: another's id reads as none.
 */
export class DynamoResponseStore implements ResponseStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock,
    private readonly retentionDays: number,
  ) {}

  async put(stored: StoredResponse): Promise<'stored' | 'too_large'> {
    const body = gzipSync(JSON.stringify({ response: stored.response, items: stored.items }));
    if (body.byteLength > MAX_STORED_BYTES) return 'too_large';
    const expiresAt = Math.floor(Date.parse(stored.createdAt) / 1000) + this.retentionDays * 86_400;
    await putItem(this.client, this.tableName, { pk: stored.id, organizationId: stored.organizationId, createdAt: stored.createdAt, body, expiresAt });
    return 'stored';
  }

  /** Strongly consistent: a continuation follows its response at once. */
  async get(id: string, organizationId: string): Promise<StoredResponse | undefined> {
    if (!RESPONSE_ID.test(id)) return undefined;
    const item = await getItem(this.client, this.tableName, { pk: id });
    if (!item || item.organizationId !== organizationId || (item.expiresAt as number) * 1000 <= this.clock.now().getTime()) return undefined;
    const { response, items } = JSON.parse(gunzipSync(item.body as Uint8Array).toString('utf8')) as Pick<StoredResponse, 'response' | 'items'>;
    return { id, organizationId, createdAt: item.createdAt as string, response, items };
  }

  /** Deleted only when it is the organization's and not yet expired. */
  async delete(id: string, organizationId: string): Promise<boolean> {
    if (!RESPONSE_ID.test(id)) return false;
    const outcome = await conditionalWrite(this.client, {
      Delete: {
        TableName: this.tableName,
        Key: { pk: id },
        ConditionExpression: 'organizationId = :organization AND expiresAt > :now',
        ExpressionAttributeValues: { ':organization': organizationId, ':now': Math.floor(this.clock.now().getTime() / 1000) },
      },
    });
    return outcome.written;
  }
}
