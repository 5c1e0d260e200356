import { createHash } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemRandom, writerEpoch, writerStopped, type Random } from '../clock';
import { OPEN_BUCKET_SECONDS, OPEN_HOURS_READ, diedGeneration, openBucketEnds, openBucketOf, type OpenCompletion, type OpenCompletions } from '../spending/open-completions';
import { DynamoItems, type TransactionAction } from './dynamo-items';
import { generationItem } from './dynamo-generation-store';
import { USAGE_SHARDS, usageUpdate } from './dynamo-usage-store';

/** The partition-key prefix of open completions: `OPEN#<hour>#<shard>`. */
export const OPEN_PREFIX = 'OPEN#';

/**
 * How many partitions one hour's open completions spread over, by their generation id: each
 * completion writes its item and deletes it, so 512 partitions take 256,000 completions a second
 * at a partition's 1,000 writes.
 */
export const OPEN_SHARDS = 512;

/** How many the local runtime spreads them over: one process's rate needs few, and the rollup reads them all. */
export const LOCAL_OPEN_SHARDS = 4;

/** Partitions the rollup reads at once. */
const PARALLEL_READS = 32;

/** What the store is built with beside its table. */
export interface OpenCompletionOptions {
  /** {@link OPEN_SHARDS} in AWS; locally a few, for one process's rate. */
  shards?: number;
  /** Picks the usage shard a died completion is recorded in. */
  random?: Random;
  /**
   * Locally, the runtime's start: a completion opened by an earlier process died with it, and is
   * recorded at once. Absent in AWS, where only the hour's end and a request's longest run tell.
   */
  writersSince?: Date;
}

/**
 * Open completions in the usage table (docs/architecture.md, "Spending limits"): one item per
 * completion, `OPEN#<hour>#<shard>` / `<generation id>`, put beside the write-ahead of a limited
 * one's estimate (an unlimited one's beside its provider's call) and deleted once its usage is
 * recorded. The rollup reads the last
 * {@link OPEN_HOURS_READ} hours' partitions and records what is left of those whose completions
 * can no longer run, each in one transaction with the deletion of its item and the put of its
 * generation, on condition that the generation does not exist: a completion whose generation was
 * written had ended, and however many rollups run, each completion is recorded once.
 */
export class DynamoOpenCompletions implements OpenCompletions {
  private readonly items: DynamoItems;
  private readonly shards: number;
  private readonly random: Random;
  private readonly writer: string;
  private readonly writersSince?: Date;

  constructor(
    client: DynamoDBDocumentClient,
    private readonly tableName: string,
    options: OpenCompletionOptions = {},
  ) {
    this.items = new DynamoItems(client, tableName);
    this.shards = options.shards ?? OPEN_SHARDS;
    this.random = options.random ?? systemRandom;
    this.writersSince = options.writersSince;
    this.writer = writerEpoch(options.writersSince);
  }

  async open(completion: OpenCompletion): Promise<void> {
    const at = Date.parse(completion.request.createdAt);
    const expiresAt = Math.ceil(at / 1000) + (OPEN_HOURS_READ + 1) * OPEN_BUCKET_SECONDS;
    await this.items.put({ ...this.keyOf(completion), usage: completion.usage, request: completion.request, writer: this.writer, expiresAt });
  }

  async close(completion: OpenCompletion): Promise<void> {
    await this.items.write({ Delete: { Key: this.keyOf(completion) } });
  }

  async recordDied(now: Date): Promise<{ recorded: number; failed: ReadonlySet<string> }> {
    const last = openBucketOf(now);
    const partitions: string[] = [];
    for (let bucket = last - OPEN_HOURS_READ; bucket <= last; bucket++) {
      // An hour still running is read only where a writer that stopped may have left completions in it.
      if (openBucketEnds(bucket) > now.getTime() && this.writersSince === undefined) continue;
      for (let shard = 0; shard < this.shards; shard++) partitions.push(`${OPEN_PREFIX}${bucket}#${shard}`);
    }
    let recorded = 0;
    const failed = new Set<string>();
    for (let start = 0; start < partitions.length; start += PARALLEL_READS) {
      const found = await Promise.all(partitions.slice(start, start + PARALLEL_READS).map((pk) => this.items.queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } })));
      const died = found.flat().filter((item) => this.died(item, now));
      const outcomes = await Promise.allSettled(died.map((item) => this.record(item)));
      outcomes.forEach((outcome, i) => {
        if (outcome.status === 'fulfilled') recorded += outcome.value ? 1 : 0;
        else failed.add(String((died[i]!.usage as { organizationId?: unknown } | undefined)?.organizationId));
      });
    }
    return { recorded, failed };
  }

  /** Whether an open completion's function can no longer be running. */
  private died(item: Record<string, unknown>, now: Date): boolean {
    const bucket = Number((item.pk as string).slice(OPEN_PREFIX.length).split('#')[0]);
    return openBucketEnds(bucket) <= now.getTime() || writerStopped(item.writer, this.writersSince);
  }

  /** Records a died completion and deletes its item, in one transaction; true when it was recorded. */
  private async record(item: Record<string, unknown>): Promise<boolean> {
    const completion = item as unknown as OpenCompletion;
    const key = { pk: item.pk as string, sk: item.sk as string };
    const shard = Math.min(USAGE_SHARDS - 1, Math.floor(this.random() * USAGE_SHARDS));
    const TableName = this.tableName;
    const actions: TransactionAction[] = [
      { Update: { TableName, ...usageUpdate(completion.usage, shard, 'rollup') } },
      { Put: { TableName, Item: generationItem(diedGeneration(completion)), ConditionExpression: 'attribute_not_exists(pk)' } },
      { Delete: { TableName, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
    ];
    const outcome = await this.items.transact(actions);
    if (outcome.written) return true;
    // Its generation exists: it ended, and only its close was lost. Gone: another rollup recorded it.
    if (outcome.failed.some(({ index }) => index === 1) && !outcome.failed.some(({ index }) => index === 2)) await this.items.write({ Delete: { Key: key } });
    return false;
  }

  /** An open completion's key: the hour it began in, and a shard its generation id picks. */
  private keyOf(completion: OpenCompletion): { pk: string; sk: string } {
    const { generationId, createdAt } = completion.request;
    const shard = createHash('sha256').update(generationId).digest().readUInt32BE(0) % this.shards;
    return { pk: `${OPEN_PREFIX}${openBucketOf(new Date(createdAt))}#${shard}`, sk: generationId };
  }
}
