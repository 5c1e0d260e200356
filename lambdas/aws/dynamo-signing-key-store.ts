import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SigningKeyRecord, SigningKeyStore } from '../signing/signer';
import { putItem, queryAll, strip } from './dynamo-items';
import { SIGNING_KEY_PARTITION } from './table-schemas';

/** Signing-key records in the keys table: pk {@link SIGNING_KEY_PARTITION}, sk the kid. */
export class DynamoSigningKeyStore implements SigningKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(record: SigningKeyRecord): Promise<void> {
    await putItem(this.client, this.tableName, { pk: SIGNING_KEY_PARTITION, sk: record.kid, ...record });
  }

  async list(): Promise<SigningKeyRecord[]> {
    const items = await queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': SIGNING_KEY_PARTITION },
    });
    return items.map((item) => strip<SigningKeyRecord>(item));
  }
}
