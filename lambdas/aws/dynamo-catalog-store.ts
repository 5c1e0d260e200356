import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { systemRandom, type Random } from '../clock';
import type { CatalogStore, StoredCatalog } from '../catalog/catalog-store';
import type { CatalogEntry } from '../catalog/types';
import { batchWriteAll, conditionalWrite, getItem, scanAll, transactWrite, type BatchWrite } from './dynamo-items';

/**
 * The catalog in the models table: one item per model (`MODEL#<id>` / `ENTRY`, the
 * public entry with its endpoints and usage figures) and one version item
 * (`CATALOG` / `VERSION`) that every write bumps, so readers notice changes cheaply.
 *
 * Every container reads the version about every 30 s: 100,000 of them would take more than a
 * partition's reads from one item. So each bump writes the version and its
 * {@link VERSION_COPIES} copies (`CATALOG_VERSION#<n>` / `VERSION`) in one transaction, and a
 * reader reads one copy chosen at random; the version item itself is read where a copy is
 * missing (a catalog written before copies).
 */
export class DynamoCatalogStore implements CatalogStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly newVersion: () => string = randomUUID,
    private readonly random: Random = systemRandom,
  ) {}

  async load(): Promise<StoredCatalog> {
    const version = await this.version();
    const found = await scanAll(this.client, {
      TableName: this.tableName,
      FilterExpression: 'sk = :entry',
      ExpressionAttributeValues: { ':entry': 'ENTRY' },
    });
    const items = found.map((item) => ({
      position: item.position as number,
      entry: {
        model: item.model as CatalogEntry['model'],
        endpoints: item.endpoints as CatalogEntry['endpoints'],
        popularity: item.popularity as number,
        weeklyTokens: item.weeklyTokens as number,
        ...(item.categories ? { categories: item.categories as CatalogEntry['categories'] } : {}),
      },
    }));
    items.sort((a, b) => a.position - b.position || a.entry.model.id.localeCompare(b.entry.model.id));
    return { version, entries: items.map((item) => item.entry) };
  }

  async version(): Promise<string | undefined> {
    const copy = Math.min(VERSION_COPIES - 1, Math.floor(this.random() * VERSION_COPIES));
    const copied = await getItem(this.client, this.tableName, versionCopyKey(copy));
    if (copied) return copied.version as string | undefined;
    return (await getItem(this.client, this.tableName, VERSION_KEY))?.version as string | undefined;
  }

  async putEntries(entries: readonly { position: number; entry: CatalogEntry }[]): Promise<void> {
    await this.batchWrite(
      entries.map(({ position, entry }) => ({
        PutRequest: {
          Item: {
            pk: modelPk(entry.model.id),
            sk: 'ENTRY',
            position,
            model: entry.model,
            endpoints: entry.endpoints,
            popularity: entry.popularity,
            weeklyTokens: entry.weeklyTokens,
            ...(entry.categories?.length ? { categories: entry.categories } : {}),
          },
        },
      })),
    );
    await this.bumpVersion();
  }

  async setUsage(modelId: string, usage: { popularity?: number; weeklyTokens?: number }): Promise<boolean> {
    const sets: string[] = [];
    const values: Record<string, number> = {};
    if (usage.popularity !== undefined) {
      sets.push('popularity = :p');
      values[':p'] = usage.popularity;
    }
    if (usage.weeklyTokens !== undefined) {
      sets.push('weeklyTokens = :w');
      values[':w'] = usage.weeklyTokens;
    }
    if (sets.length === 0) return true;
    const { written } = await conditionalWrite(this.client, {
      Update: {
        TableName: this.tableName,
        Key: { pk: modelPk(modelId), sk: 'ENTRY' },
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: values,
      },
    });
    if (!written) return false;
    await this.bumpVersion();
    return true;
  }

  async remove(modelIds: readonly string[]): Promise<void> {
    await this.batchWrite(modelIds.map((id) => ({ DeleteRequest: { Key: { pk: modelPk(id), sk: 'ENTRY' } } })));
    await this.bumpVersion();
  }

  private async bumpVersion(): Promise<void> {
    const version = { version: this.newVersion(), updatedAt: new Date().toISOString() };
    await transactWrite(
      this.client,
      [VERSION_KEY, ...Array.from({ length: VERSION_COPIES }, (_, copy) => versionCopyKey(copy))].map((key) => ({ Put: { TableName: this.tableName, Item: { ...key, ...version } } })),
    );
  }

  private batchWrite(requests: BatchWrite[]): Promise<void> {
    return batchWriteAll(this.client, this.tableName, requests);
  }
}

const modelPk = (id: string) => `MODEL#${id}`;

/** Copies of the catalog's version item: at 200,000 containers checking every 30 s, each takes about 420 reads a second. */
export const VERSION_COPIES = 16;
const VERSION_KEY = { pk: 'CATALOG', sk: 'VERSION' };
const versionCopyKey = (copy: number) => ({ pk: `CATALOG_VERSION#${copy}`, sk: 'VERSION' });
