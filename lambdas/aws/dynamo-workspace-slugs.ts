import { DeleteCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError } from '../accounts/account-store';
import { UnfinishedWriteError } from '../errors';
import { DynamoItems, conditionalWrite } from './dynamo-items';
import { ABANDONED_PLACE_MS, abandonedAt, isAbandoned } from './dynamo-places';

/**
 * Workspace slugs, unique per organization: one claim item per slug (`pk ORG#<org>`,
 * `sk SLUG#<slug>`) naming the workspace that holds it. A claim is put on condition that none
 * exists, so of two concurrent claims of one slug exactly one wins, and given back on condition
 * that it names the workspace giving it back. A claim whose workspace does not hold the slug (the
 * process died between the claim and the workspace's write or rename, or after deleting or
 * renaming the workspace) is taken over once it is older than {@link ABANDONED_PLACE_MS}, or at
 * once when its writer is provably gone ({@link isAbandoned}), so a crash cannot lock a slug.
 * Until then the refusal says so, and when the slug is free again ({@link UnfinishedWriteError}).
 */
export class WorkspaceSlugs {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Whether the workspace exists and has the slug. */
    private readonly holdsSlug: (organizationId: string, id: string, slug: string) => Promise<boolean>,
    /** Before this instant no writer still runs (see isAbandoned). */
    private readonly writersSince?: Date,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /**
   * Claims `slug` for the workspace at `at`; {@link AlreadyExistsError} when another workspace
   * has it, {@link UnfinishedWriteError} when another workspace's write claimed it and has not
   * (yet) written the workspace.
   */
  async claim(organizationId: string, slug: string, workspaceId: string, at: string): Promise<void> {
    const key = claimKey(organizationId, slug);
    const claim = { ...key, workspaceId, claimedAt: at };
    let current: SlugClaim | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const condition = current
        ? { ConditionExpression: 'workspaceId = :previous', ExpressionAttributeValues: { ':previous': current.workspaceId } }
        : { ConditionExpression: 'attribute_not_exists(pk)' };
      if (await conditionalWrite(this.client, new PutCommand({ TableName: this.tableName, Item: claim, ...condition }))) return;
      current = await this.items.get<SlugClaim>(key.pk, key.sk);
      if (current?.workspaceId === workspaceId) return;
      if (current) await this.refuseIfHeld(organizationId, slug, current, Date.parse(at));
    }
    throw new AlreadyExistsError(`A workspace with slug "${slug}"`);
  }

  /** Refuses while the claim's workspace has the slug, or while the write that claimed it may still run. */
  private async refuseIfHeld(organizationId: string, slug: string, current: SlugClaim, now: number): Promise<void> {
    if (await this.holdsSlug(organizationId, current.workspaceId, slug)) throw new AlreadyExistsError(`A workspace with slug "${slug}"`);
    const claimedAt = Date.parse(current.claimedAt);
    if (!isAbandoned(claimedAt, now, this.writersSince)) throw new UnfinishedWriteError(`The slug "${slug}" is held`, abandonedAt(claimedAt));
  }

  /** Gives `slug` back, only if this workspace holds its claim. */
  async release(organizationId: string, slug: string, workspaceId: string): Promise<void> {
    await conditionalWrite(
      this.client,
      new DeleteCommand({
        TableName: this.tableName,
        Key: claimKey(organizationId, slug),
        ConditionExpression: 'workspaceId = :mine',
        ExpressionAttributeValues: { ':mine': workspaceId },
      }),
    );
  }
}

interface SlugClaim {
  workspaceId: string;
  claimedAt: string;
}

/** The claim item of `slug`: it names the workspace that holds the slug (`workspaceId`). */
export const claimKey = (organizationId: string, slug: string) => ({ pk: `ORG#${organizationId}`, sk: `SLUG#${slug}` });
