import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The document client, built once per cold start. The endpoint comes from the SDK's own
 * `AWS_ENDPOINT_URL_DYNAMODB`, which the local runtime points at the embedded server.
 */
export function createDocumentClient(client: DynamoDBClient = new DynamoDBClient({})): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
}

/** True when the error is DynamoDB's answer to a failed condition expression. */
export function isConditionalCheckFailed(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';
}
