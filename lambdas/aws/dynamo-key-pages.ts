import { paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { KeyPage } from '../accounts/account-store';
import type { ApiKeyRecord } from '../accounts/types';
import { DynamoItems, itemId, strip } from './dynamo-items';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/** Keys read at once: one BatchGetItem. */
export const KEYS_READ_AT_ONCE = 100;

/** Index entries asked for at once while a page fills: ten BatchGetItems' worth. */
const ENTRIES_AT_ONCE = 1000;

/** The key of an API key's item. */
export const apiKeyKey = (hash: string) => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' });

/**
 * Pages of key lists in the keys table: the keys a list names, in its order, read strongly
 * consistently a hundred at a time only until the page is full, so a page costs what it shows
 * and what its offset skips, not the whole list.
 */
export class KeyPages {
  private readonly items: DynamoItems;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.items = new DynamoItems(client, tableName);
  }

  /**
   * A page of the organization's keys, oldest first, as its index lists them: the index asked a
   * thousand entries at a time, each key read from its item (an entry whose key is gone, or no
   * longer the organization's, is left out), until the page is full or the index ends.
   */
  async ofOrganization(organizationId: string, page: KeyPage): Promise<ApiKeyRecord[]> {
    const partition = `ORG#${organizationId}#APIKEYS`;
    return this.read(this.indexed(partition), page, (item) => item.gsi1pk === partition);
  }

  /**
   * `page` of the keys `lists` names a chunk at a time, read a hundred at a time: a key gone or
   * not `belongs` is left out, a disabled one too unless the page includes them; the offset
   * counts what is left in, after the `skipped` keys the caller left unread.
   */
  async read(lists: AsyncIterable<readonly string[]>, page: KeyPage, belongs: (item: Record<string, unknown>) => boolean, skipped = 0): Promise<ApiKeyRecord[]> {
    const keys: ApiKeyRecord[] = [];
    let passed = skipped;
    for await (const hashes of lists) {
      for (let start = 0; start < hashes.length && keys.length < page.limit; start += KEYS_READ_AT_ONCE) {
        const chunk = hashes.slice(start, start + KEYS_READ_AT_ONCE);
        const found = await this.items.batchGet(chunk.map(apiKeyKey));
        for (const hash of chunk) {
          const key = found.get(itemId(apiKeyKey(hash).pk, 'APIKEY'));
          if (!key || !belongs(key) || (!page.includeDisabled && key.disabled === true)) continue;
          if (passed < page.offset) passed++;
          else if (keys.length < page.limit) keys.push(strip<ApiKeyRecord>(key));
        }
      }
      if (keys.length >= page.limit) break;
    }
    return keys;
  }

  /** The hashes an index partition lists, in its order, a thousand at a time. */
  private async *indexed(partition: string): AsyncGenerator<string[]> {
    const pages = paginateQuery(
      { client: this.client, pageSize: ENTRIES_AT_ONCE },
      { TableName: this.tableName, IndexName: BY_ORGANIZATION_INDEX, KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': partition }, ProjectionExpression: 'pk' },
    );
    for await (const { Items = [] } of pages) yield Items.map((entry) => (entry.pk as string).slice('APIKEY#'.length));
  }
}
