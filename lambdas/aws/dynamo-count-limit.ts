import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemClock, type Clock } from '../clock';
import { DynamoItems, strip } from './dynamo-items';
import { ABANDONED_PLACE_MS, reclaimAbandonedPlaces } from './dynamo-places';

/** What one bound counts: items of one kind per organization. */
export interface CountedKind {
  /** Names the places item: sort key `LIMIT#<kind>`. */
  readonly kind: string;
  /** The key of a counted item, to see whether it exists. */
  keyOf(organizationId: string, id: string): { pk: string; sk: string };
  /** Every counted item of the organization: what existed before the organization was first counted. */
  list(organizationId: string): Promise<readonly { id: string; createdAt: string }[]>;
}


/**
 * A per-organization bound on how many items of one kind exist, exact under any number of
 * concurrent creates and after a crash, with single-item conditional writes only
 * (docs/operating.md, "Per-organization limits").
 *
 * One item per organization and kind (`ORG#<org>` / `LIMIT#<kind>`) holds `holders`, each counted
 * id mapped to when its place was taken. A create takes its place first (`SET holders.<id>` on
 * condition `size(holders) < limit`) and writes its item after; a failed create, or a delete once
 * its item is gone, gives the place back. A crash can only leave a place without its item: at
 * the bound, such places older than {@link ABANDONED_PLACE_MS} are reclaimed before a create is
 * refused, and a sweep that finds nothing is not repeated within that time.
 */
export class DynamoCountLimit {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly counted: CountedKind,
    private readonly clock: Clock = systemClock,
    /** Before this instant no writer still runs (see isAbandoned). */
    private readonly writersSince?: Date,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /**
   * Takes a place for the item `id` about to be created; false when `limit` places are held.
   * The first create of an organization counts the items it already has (see {@link CountedKind.list}).
   */
  async take(organizationId: string, id: string, limit: number): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const taken = await this.items.write({
        Update: {
          Key: this.key(organizationId),
          UpdateExpression: 'SET holders.#id = :now',
          ConditionExpression: 'size(holders) < :limit',
          ExpressionAttributeNames: { '#id': id },
          ExpressionAttributeValues: { ':now': this.clock.now().toISOString(), ':limit': limit },
        },
      });
      if (taken.written) return true;
      // The places item as the condition found it: absent, or full.
      const places = taken.item && strip<Places>(taken.item);
      if (!places) await this.start(organizationId);
      else if (Object.keys(places.holders).length >= limit && (await this.sweep(organizationId, places)) === 0) return false;
      // Otherwise places were given back or reclaimed meanwhile: try again.
    }
    return false;
  }

  /**
   * Gives back the place of `id` once its item is deleted or its create failed, unless the
   * item exists: a create whose write failed may still have written it (a retried put).
   */
  async release(organizationId: string, id: string): Promise<void> {
    const key = this.counted.keyOf(organizationId, id);
    if ((await this.items.get<{ organizationId?: string }>(key.pk, key.sk))?.organizationId === organizationId) return;
    await this.update(organizationId, 'REMOVE holders.#id', { ExpressionAttributeNames: { '#id': id } });
  }

  /**
   * Whether the place taken for `id` at `takenAt` is still held. A create that took longer
   * than half the abandonment window checks this after writing its item: its place may
   * have been reclaimed meanwhile, and then the item must go. Quicker creates need no read.
   */
  async stillHeld(organizationId: string, id: string, takenAt: Date): Promise<boolean> {
    if (this.clock.now().getTime() - takenAt.getTime() < ABANDONED_PLACE_MS / 2) return true;
    const places = await this.read(organizationId);
    return places !== undefined && id in places.holders;
  }

  /** How many places are held, and by which ids; undefined when the organization was never counted. */
  async holders(organizationId: string): Promise<Record<string, string> | undefined> {
    return (await this.read(organizationId))?.holders;
  }

  /**
   * Removes the places older than {@link ABANDONED_PLACE_MS} whose items do not exist and
   * returns how many; skipped when a sweep found nothing less than that time ago.
   */
  private async sweep(organizationId: string, places: Places): Promise<number> {
    const now = this.clock.now().getTime();
    // A sweep made before the writers' start could not reclaim what they left: it counts for nothing.
    const sweptAt = places.sweptAt ? Date.parse(places.sweptAt) : undefined;
    if (sweptAt !== undefined && now - sweptAt < ABANDONED_PLACE_MS && !(this.writersSince && sweptAt < this.writersSince.getTime())) return 0;
    const gone = await reclaimAbandonedPlaces(
      this.client,
      this.items,
      this.tableName,
      { key: this.key(organizationId), attribute: 'holders', holders: places.holders, now, writersSince: this.writersSince },
      { keyOf: (id) => this.counted.keyOf(organizationId, id), isPlaced: (item) => item.organizationId === organizationId },
    );
    if (gone === 0) {
      await this.update(organizationId, 'SET sweptAt = :now', { ExpressionAttributeValues: { ':now': new Date(now).toISOString() } });
    }
    return gone;
  }

  /**
   * Starts counting an organization: its places item, holding the items it has. Written only
   * if absent, so of two concurrent starts one counts; until then no create can have taken
   * a place, so the listing misses none made under the bound.
   */
  private async start(organizationId: string): Promise<void> {
    const existing = await this.counted.list(organizationId);
    await this.items.write({
      Put: {
        Item: { ...this.key(organizationId), holders: Object.fromEntries(existing.map((item) => [item.id, item.createdAt])) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
  }

  private async update(
    organizationId: string,
    expression: string,
    attributes: { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, unknown> },
  ): Promise<void> {
    await this.items.write({
      Update: {
        Key: this.key(organizationId),
        UpdateExpression: expression,
        // Never creates the places item: only `start` does, with the items that exist.
        ConditionExpression: 'attribute_exists(pk)',
        ...attributes,
      },
    });
  }

  private async read(organizationId: string): Promise<Places | undefined> {
    const key = this.key(organizationId);
    return this.items.get<Places>(key.pk, key.sk);
  }

  private key(organizationId: string): { pk: string; sk: string } {
    return { pk: `ORG#${organizationId}`, sk: `LIMIT#${this.counted.kind}` };
  }
}

interface Places {
  holders: Record<string, string>;
  sweptAt?: string;
}
