import type { CatalogEntry } from './types';

/** A stored catalog: entries in default order and the version that changes on every write. */
export interface StoredCatalog {
  /** Undefined while nothing has ever been written. */
  version: string | undefined;
  entries: CatalogEntry[];
}

/** Where the catalog is kept: the models table in AWS (lambdas/aws/dynamo-catalog-store.ts). The functions only read it; seeding and the operator CLI write it. */
export interface CatalogStore {
  /** The whole catalog, in default order. */
  load(): Promise<StoredCatalog>;
  /** The current version only: one small read, so staleness checks stay cheap. */
  version(): Promise<string | undefined>;
  /** Writes (inserts or replaces) entries at their positions and bumps the version. */
  putEntries(entries: readonly { position: number; entry: CatalogEntry }[]): Promise<void>;
  /** Updates the usage figures two sorts read, and bumps the version. False for an unknown model. */
  setUsage(modelId: string, usage: { popularity?: number; weeklyTokens?: number }): Promise<boolean>;
  /** Removes models and bumps the version. */
  remove(modelIds: readonly string[]): Promise<void>;
}
