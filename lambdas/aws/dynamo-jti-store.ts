import { createHash } from 'node:crypto';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JtiStore } from '../federation/jti-replay';
import { conditionalDelete, isConditionalCheckFailed } from './dynamo-client';

/**
 * Seen subject-token `jti` values in the policies table: pk `JTI#<issuerId>#<sha256(jti)>`
 * (a `jti` may be long; its hash keeps the key small), TTL `expiresAt` at the subject
 * token's `exp`. One conditional put claims it.
 */
export class DynamoJtiStore implements JtiStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(issuerId: string, jti: string, expiresAt: number, claimant: string, now: Date): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: jtiPk(issuerId, jti), sk: 'JTI', expiresAt, claimant },
          // An expired claim counts as absent (TTL deletes late).
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
          ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  async release(issuerId: string, jti: string, claimant: string): Promise<void> {
    await conditionalDelete(this.client, {
      TableName: this.tableName,
      Key: { pk: jtiPk(issuerId, jti), sk: 'JTI' },
      ConditionExpression: 'claimant = :claimant',
      ExpressionAttributeValues: { ':claimant': claimant },
    });
  }
}

const jtiPk = (issuerId: string, jti: string) => `JTI#${issuerId}#${createHash('sha256').update(jti, 'utf8').digest('base64url')}`;
