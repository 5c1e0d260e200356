import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError } from '../accounts/account-store';
import { UnfinishedWriteError } from '../errors';
import { conditionalWrite, type TransactionAction } from './dynamo-items';
import { ABANDONED_PLACE_MS, abandonedAt, isAbandoned } from './dynamo-places';

/**
 * Workspace slugs, unique per organization: one claim item per slug (`ORG#<org>` /
 * `SLUG#<slug>`) naming the workspace that holds it, put in the transaction that creates or
 * renames its workspace ({@link claimAction}) on condition that the slug is free or already the
 * workspace's: of two concurrent claims exactly one wins, and no claim exists without its
 * workspace. A rename gives the old slug back in the same transaction; a deleted workspace gives
 * it back once gone ({@link release}). A claim whose workspace does not hold the slug (a crash
 * between a delete and the release, or a release before claims were transactional left one) is
 * taken over once older than {@link ABANDONED_PLACE_MS}, or at once when its writer is provably
 * gone ({@link isAbandoned}), so a crash cannot lock a slug; until then the refusal says when it
 * is free ({@link UnfinishedWriteError}).
 */
export class WorkspaceSlugs {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Whether the workspace exists and has the slug. */
    private readonly holdsSlug: (organizationId: string, id: string, slug: string) => Promise<boolean>,
    /** Before this instant no writer still runs (see isAbandoned). */
    private readonly writersSince?: Date,
  ) {}

  /**
   * The put of the claim of `slug` for the workspace, for the transaction that writes the
   * workspace: it takes a free slug, keeps one the workspace holds, or replaces `abandoned`, the
   * claim {@link takeOver} found abandoned. On failure it hands back the claim that is there.
   */
  claimAction(organizationId: string, slug: string, workspaceId: string, at: string, abandoned?: SlugClaim): TransactionAction {
    return {
      Put: {
        TableName: this.tableName,
        Item: { ...claimKey(organizationId, slug), workspaceId, claimedAt: at },
        ConditionExpression: abandoned ? 'attribute_not_exists(pk) OR workspaceId IN (:mine, :abandoned)' : 'attribute_not_exists(pk) OR workspaceId = :mine',
        ExpressionAttributeValues: { ':mine': workspaceId, ...(abandoned ? { ':abandoned': abandoned.workspaceId } : {}) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }

  /** The delete of the workspace's claim of `slug`, for the transaction that renames it away: never another workspace's claim. */
  releaseAction(organizationId: string, slug: string, workspaceId: string): TransactionAction {
    return {
      Delete: {
        TableName: this.tableName,
        Key: claimKey(organizationId, slug),
        ConditionExpression: 'attribute_not_exists(pk) OR workspaceId = :mine',
        ExpressionAttributeValues: { ':mine': workspaceId },
      },
    };
  }

  /**
   * What to do about the claim `current` that a {@link claimAction} met: the claim to take over
   * when it is abandoned; else {@link AlreadyExistsError} when its workspace has the slug, or
   * {@link UnfinishedWriteError} while the write that left it may still run.
   */
  async takeOver(organizationId: string, slug: string, current: SlugClaim | undefined, now: number): Promise<SlugClaim | undefined> {
    if (!current) return undefined;
    if (await this.holdsSlug(organizationId, current.workspaceId, slug)) throw new AlreadyExistsError(`A workspace with slug "${slug}"`);
    const claimedAt = Date.parse(current.claimedAt);
    if (!isAbandoned(claimedAt, now, this.writersSince)) throw new UnfinishedWriteError(`The slug "${slug}" is held`, abandonedAt(claimedAt));
    return current;
  }

  /** Gives `slug` back, only if this workspace holds its claim. */
  async release(organizationId: string, slug: string, workspaceId: string): Promise<void> {
    await conditionalWrite(this.client, {
      Delete: {
        TableName: this.tableName,
        Key: claimKey(organizationId, slug),
        ConditionExpression: 'workspaceId = :mine',
        ExpressionAttributeValues: { ':mine': workspaceId },
      },
    });
  }
}

/** A slug's claim: the workspace that holds the slug, and when it was claimed. */
export interface SlugClaim {
  workspaceId: string;
  claimedAt: string;
}

/** The claim item of `slug`: it names the workspace that holds the slug (`workspaceId`). */
export const claimKey = (organizationId: string, slug: string) => ({ pk: `ORG#${organizationId}`, sk: `SLUG#${slug}` });
