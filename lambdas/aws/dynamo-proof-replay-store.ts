import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ProofReplayStore } from '../credentials/dpop-proof';
import { conditionalWrite } from './dynamo-items';
import { PROOF_REPLAY_PREFIX } from './table-schemas';

/**
 * Seen DPoP proofs in the rate-counters table: pk `DPOP#<replay key>` (a hash of the proof
 * key's thumbprint and the proof's `jti`), TTL `expiresAt` at the end of the proof's window.
 * One conditional put claims a proof; an expired record counts as absent (TTL deletes late).
 */
export class DynamoProofReplayStore implements ProofReplayStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(replayKey: string, acceptedUntil: number, now: Date): Promise<boolean> {
    const claimed = await conditionalWrite(this.client, {
      Put: {
        TableName: this.tableName,
        Item: { pk: `${PROOF_REPLAY_PREFIX}${replayKey}`, expiresAt: acceptedUntil },
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
        ExpressionAttributeValues: { ':now': Math.floor(now.getTime() / 1000) },
      },
    });
    return claimed.written;
  }
}
