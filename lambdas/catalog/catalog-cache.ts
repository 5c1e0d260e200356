import type { Clock } from '../clock';
import type { ModelUsage } from '../usage/usage';
import { CatalogIndex } from './catalog-index';
import type { CatalogStore } from './catalog-store';
import type { CatalogEntry } from './types';

/** The gateway's own recent traffic per model, added to the imported usage figures. */
export interface UsageFigures {
  /** Requests and tokens per model over the last week, at `now`. */
  recent(now: Date): Promise<ModelUsage>;
  /** How often the figures are read again; the index is rebuilt only then. */
  maxAgeSeconds: number;
}

/** Told when the cache (re)loads the catalog, e.g. to count reloads as a metric. */
export type CatalogLoadListener = (loaded: { version: string | undefined; entries: number }) => void;

/**
 * The catalog of one Lambda container, held in memory. For `maxAgeSeconds` after a check
 * it is served as is; after that the next request reads the version item (one GetItem)
 * and reloads the catalog only when the version moved. A catalog change is therefore
 * visible within `maxAgeSeconds` plus one load, on every container.
 *
 * With usage figures, the `most-popular` and `top-weekly` sorts also count the requests and
 * tokens the gateway served in the last week (SPEC 4.1 rule 2), read every
 * `usage.maxAgeSeconds`.
 */
export class CatalogCache {
  private index: CatalogIndex | undefined;
  private version: string | undefined;
  private entries: CatalogEntry[] = [];
  private figures: ModelUsage = new Map();
  private checkedAt = -Infinity;
  private usageCheckedAt = -Infinity;
  private refreshing: Promise<CatalogIndex> | undefined;

  constructor(
    private readonly store: CatalogStore,
    private readonly clock: Clock,
    private readonly maxAgeSeconds: number,
    private readonly onLoad: CatalogLoadListener = () => undefined,
    private readonly usage?: UsageFigures,
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
    const now = this.clock.now();
    const checkedAt = now.getTime();
    const usageDue = this.usage !== undefined && checkedAt - this.usageCheckedAt >= this.usage.maxAgeSeconds * 1000;
    let changed = !this.index;
    if (this.index) {
      const version = await this.store.version();
      changed = version !== this.version;
      if (!changed && !usageDue) {
        this.checkedAt = checkedAt;
        return this.index;
      }
    }
    if (changed) {
      const catalog = await this.store.load();
      this.entries = catalog.entries;
      this.version = catalog.version;
      this.onLoad({ version: catalog.version, entries: catalog.entries.length });
    }
    if (usageDue) {
      this.figures = await this.usage!.recent(now);
      this.usageCheckedAt = checkedAt;
    }
    this.index = new CatalogIndex(this.figures.size > 0 ? this.entries.map((entry) => withUsage(entry, this.figures)) : this.entries);
    this.checkedAt = checkedAt;
    return this.index;
  }
}

function withUsage(entry: CatalogEntry, figures: ModelUsage): CatalogEntry {
  const served = figures.get(entry.model.id);
  if (!served) return entry;
  return { ...entry, popularity: entry.popularity + served.requests, weeklyTokens: entry.weeklyTokens + served.tokens };
}
