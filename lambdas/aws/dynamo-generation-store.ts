import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../clock';
import { GENERATION_ID, GENERATION_RETENTION_DAYS, type GenerationRecord, type GenerationStore } from '../usage/generations';
import { DynamoItems, strip } from './dynamo-items';

/** The partition-key prefix of generations in the usage table: one item each, its own partition. */
export const GENERATION_PREFIX = 'GEN#';
const SORT_KEY = 'GENERATION';

/**
 * Generations in the usage table: `GEN#<id>` / `GENERATION`, one item per completion, a
 * partition of its own (ids are random, so no partition takes more than one write), expiring
 * {@link GENERATION_RETENTION_DAYS} days after the request (`expiresAt`, DynamoDB's TTL).
 */
export class DynamoGenerationStore implements GenerationStore {
  private readonly items: DynamoItems;

  constructor(
    client: DynamoDBDocumentClient,
    tableName: string,
    private readonly clock: Clock,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  async put(record: GenerationRecord): Promise<void> {
    await this.items.put(generationItem(record));
  }

  /** Strongly consistent, as clients ask right after the answer; one past its time is gone even before TTL removes it. */
  async get(id: string): Promise<GenerationRecord | undefined> {
    if (!GENERATION_ID.test(id)) return undefined;
    const item = await this.items.getItem(generationKey(id), { consistent: true });
    if (!item || (item.expiresAt as number) * 1000 <= this.clock.now().getTime()) return undefined;
    const { expiresAt: _expiresAt, ...rest } = strip<GenerationRecord & { expiresAt: number }>(item);
    return rest;
  }
}

/** A generation's item: its key, the record, and when it expires. */
export function generationItem(record: GenerationRecord): Record<string, unknown> {
  const expiresAt = Math.floor(Date.parse(record.createdAt) / 1000) + GENERATION_RETENTION_DAYS * 86_400;
  return { ...generationKey(record.id), ...record, expiresAt };
}

/** The key of a generation's item. */
export const generationKey = (id: string) => ({ pk: `${GENERATION_PREFIX}${id}`, sk: SORT_KEY });
