import type { Clock } from '../clock';
import { CatalogIndex } from './catalog-index';
import type { CatalogStore } from './catalog-store';

/**
 * The catalog of one Lambda container, held in memory. For `maxAgeSeconds` after a check
 * it is served as is; after that the next request reads the version item (one GetItem)
 * and reloads the catalog only when the version moved. A catalog change is therefore
 * visible within `maxAgeSeconds` plus one load, on every container.
 */
/** Told when the cache (re)loads the catalog, e.g. to count reloads as a metric. */
export type CatalogLoadListener = (loaded: { version: string | undefined; entries: number }) => void;

export class CatalogCache {
  private index: CatalogIndex | undefined;
  private version: string | undefined;
  private checkedAt = -Infinity;
  private refreshing: Promise<CatalogIndex> | undefined;

  constructor(
    private readonly store: CatalogStore,
    private readonly clock: Clock,
    private readonly maxAgeSeconds: number,
    private readonly onLoad: CatalogLoadListener = () => undefined,
  ) {}

  async get(): Promise<CatalogIndex> {
    if (this.index && this.clock.now().getTime() - this.checkedAt < this.maxAgeSeconds * 1000) return this.index;
    // One refresh at a time per container; concurrent callers share it.
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(): Promise<CatalogIndex> {
    const checkedAt = this.clock.now().getTime();
    if (this.index) {
      const version = await this.store.version();
      if (version === this.version) {
        this.checkedAt = checkedAt;
        return this.index;
      }
    }
    const catalog = await this.store.load();
    this.index = new CatalogIndex(catalog.entries);
    this.version = catalog.version;
    this.checkedAt = checkedAt;
    this.onLoad({ version: catalog.version, entries: catalog.entries.length });
    return this.index;
  }
}
