import { createHash } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { JtiStore } from '../federation/jti-replay';
import { conditionalWrite } from './dynamo-items';

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
    const claimed = await conditionalWrite(this.client, {
      Put: {
        TableName: this.tableName,
        Item: { pk: jtiPk(issuerId, jti), sk: 'JTI', expiresAt, claimant },
        // An expired claim counts as absent (TTL deletes late).
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
        ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
      },
    });
    return claimed.written;
  }

  async release(issuerId: string, jti: string, claimant: string): Promise<void> {
    await conditionalWrite(this.client, {
      Delete: {
        TableName: this.tableName,
        Key: { pk: jtiPk(issuerId, jti), sk: 'JTI' },
        ConditionExpression: 'claimant = :claimant',
        ExpressionAttributeValues: { ':claimant': claimant },
      },
    });
  }
}

const jtiPk = (issuerId: string, jti: string) => `JTI#${issuerId}#${createHash('sha256').update(jti, 'utf8').digest('base64url')}`;
