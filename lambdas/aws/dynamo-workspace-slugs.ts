import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError } from '../accounts/account-store';
import { conditionalDelete, conditionalWrite } from './dynamo-client';
import { DynamoItems } from './dynamo-items';
import { ABANDONED_PLACE_MS, isAbandoned } from './dynamo-places';

/**
 * Workspace slugs, unique per organization: one claim item per slug (`pk ORG#<org>`,
 * `sk SLUG#<slug>`) naming the workspace that holds it. A claim is put on condition that none
 * exists, so of two concurrent claims of one slug exactly one wins, and given back on condition
 * that it names the workspace giving it back. A claim whose workspace does not exist (the
 * process died between the claim and the workspace's write, or after deleting the workspace) is
 * taken over once it is older than {@link ABANDONED_PLACE_MS}, or at once when its writer is
 * provably gone ({@link isAbandoned}), so a crash cannot lock a slug.
 */
export class WorkspaceSlugs {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly workspaceExists: (organizationId: string, id: string) => Promise<boolean>,
    /** Before this instant no writer still runs (see isAbandoned). */
    private readonly writersSince?: Date,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /** Claims `slug` for the workspace; {@link AlreadyExistsError} when another holds it. */
  async claim(organizationId: string, slug: string, workspaceId: string, at: string): Promise<void> {
    const key = claimKey(organizationId, slug);
    const claim = { ...key, workspaceId, claimedAt: at };
    const taken = new AlreadyExistsError(`A workspace with slug "${slug}"`);
    if (await conditionalWrite(this.client, new PutCommand({ TableName: this.tableName, Item: claim, ConditionExpression: 'attribute_not_exists(pk)' }))) return;
    const current = await this.items.get<{ workspaceId: string; claimedAt: string }>(key.pk, key.sk);
    const abandoned =
      current !== undefined &&
      current.workspaceId !== workspaceId &&
      isAbandoned(Date.parse(current.claimedAt), Date.parse(at), this.writersSince) &&
      !(await this.workspaceExists(organizationId, current.workspaceId));
    if (current?.workspaceId === workspaceId) return;
    if (!abandoned) throw taken;
    const takenOver = await conditionalWrite(
      this.client,
      new PutCommand({
        TableName: this.tableName,
        Item: claim,
        ConditionExpression: 'workspaceId = :previous',
        ExpressionAttributeValues: { ':previous': current.workspaceId },
      }),
    );
    if (!takenOver) throw taken;
  }

  /** Gives `slug` back, only if this workspace holds its claim. */
  async release(organizationId: string, slug: string, workspaceId: string): Promise<void> {
    await conditionalDelete(this.client, {
      TableName: this.tableName,
      Key: claimKey(organizationId, slug),
      ConditionExpression: 'workspaceId = :mine',
      ExpressionAttributeValues: { ':mine': workspaceId },
    });
  }
}

/** The claim item of `slug`: it names the workspace that holds the slug (`workspaceId`). */
export const claimKey = (organizationId: string, slug: string) => ({ pk: `ORG#${organizationId}`, sk: `SLUG#${slug}` });
