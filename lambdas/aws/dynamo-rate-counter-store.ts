import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { RateCounterStore } from '../oauth/exchange-rate-limit';
import { conditionalWrite } from './dynamo-items';

/**
 * Counters in the rate-counters table (pk the counter key, TTL `expiresAt`). One
 * conditional `UpdateItem` per hit: DynamoDB applies updates to one item one at a time, so
 * the condition sees every earlier hit and no concurrent request slips past the limit.
 *
 * Counter keys carry their window's start and expire at its end, so an expired counter is
 * never read again: the next window is a new item (TTL deletes the old one late).
 */
export class DynamoRateCounterStore implements RateCounterStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async incrementBelow(counterKey: string, limit: number, expiresAt: number, _now: Date): Promise<boolean> {
    const counted = await conditionalWrite(this.client, {
      Update: {
        TableName: this.tableName,
        Key: { pk: counterKey },
        UpdateExpression: 'SET #hits = if_not_exists(#hits, :zero) + :one, expiresAt = :expiresAt',
        ConditionExpression: 'attribute_not_exists(#hits) OR #hits < :limit',
        ExpressionAttributeNames: { '#hits': 'hits' },
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':limit': limit, ':expiresAt': expiresAt },
      },
    });
    return counted.written;
  }
}
