import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SigningKeyRecord, SigningKeyStore } from '../signing/signer';
import { SIGNING_KEY_PARTITION } from './table-schemas';

/** Signing-key records in the keys table: pk {@link SIGNING_KEY_PARTITION}, sk the kid. */
export class DynamoSigningKeyStore implements SigningKeyStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async put(record: SigningKeyRecord): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: { pk: SIGNING_KEY_PARTITION, sk: record.kid, ...record } }));
  }

  async list(): Promise<SigningKeyRecord[]> {
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': SIGNING_KEY_PARTITION },
      }),
    );
    return (result.Items ?? []).map(({ pk: _pk, sk: _sk, ...record }) => record as SigningKeyRecord);
  }
}
