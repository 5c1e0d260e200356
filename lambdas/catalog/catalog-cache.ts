import type { Clock, Random } from '../clock';
import type { ModelUsage } from './types';
import { CatalogIndex } from './catalog-index';
import type { CatalogStore } from './catalog-store';
import type { CatalogEntry } from './types';

/** The gateway's own traffic per model, added to the imported usage figures. */
export interface UsageFigures {
  /** Requests and tokens per model over the last week. */
  recent(now: Date): Promise<ModelUsage>;
  /** How often the figures are read again; the index is rebuilt only then. */
  maxAgeSeconds: number;
}

/** Told when the cache (re)loads the catalog, e.g. to count reloads as a metric. */
export type CatalogLoadListener = (loaded: { version: string | undefined; entries: number }) => void;

/** How a cache spreads its checks and reloads, and whom it tells of a failed background read. */
export interface CatalogCacheOptions {
  /** Spreads each container's checks over ±20% of their interval, and its reloads over the spread. @default Math.random */
  random?: Random;
  /**
   * Once a check finds a new version, the reload waits a random time up to this long: a fleet
   * of containers then reloads over the spread, not in one burst on the models' items. @default 0
   */
  reloadSpreadSeconds?: number;
  /** Told of a background read that failed: the cache serves what it holds and reads again later. */
  onFailure?: (read: 'version' | 'catalog' | 'usage figures', error: Error) => void;
}

/** After a failed background read, the next try comes after this long (or sooner, at the next interval). */
const RETRY_AFTER_MS = 5000;

/**
 * The catalog of one Lambda container, held in memory and served as is for about
 * `maxAgeSeconds` after a check (each interval drawn within ±20%); then a request reads the
 * version item, and the catalog reloads only when the version moved (docs/architecture.md,
 * "Following one request"). A change is visible on every container within 1.2 ×
 * `maxAgeSeconds`, plus the reload spread, plus one load. With usage figures, the `most-popular`
 * and `top-weekly` sorts also count the gateway's own last week (docs/reference.md#listing-rules
 * rule 2). A background read that fails never fails a request: the catalog held is served and
 * the read tried again a few seconds on. Only a container that holds no catalog yet fails.
 */
export class CatalogCache {
  private index: CatalogIndex | undefined;
  private version: string | undefined;
  private entries: CatalogEntry[] = [];
  private figures: ModelUsage = new Map();
  private checkDue = -Infinity;
  private usageDue = -Infinity;
  /** When the reload of a version found new is due; undefined when none is waiting. */
  private reloadDue: number | undefined;
  private readonly reloadSpreadMs: number;
  private refreshing: Promise<CatalogIndex> | undefined;
  private readonly random: Random;
  private readonly onFailure: NonNullable<CatalogCacheOptions['onFailure']>;

  constructor(
    private readonly store: CatalogStore,
    private readonly clock: Clock,
    private readonly maxAgeSeconds: number,
    private readonly onLoad: CatalogLoadListener = () => undefined,
    private readonly usage?: UsageFigures,
    options: CatalogCacheOptions = {},
  ) {
    this.random = options.random ?? Math.random;
    this.reloadSpreadMs = (options.reloadSpreadSeconds ?? 0) * 1000;
    this.onFailure = options.onFailure ?? (() => undefined);
  }

  async get(): Promise<CatalogIndex> {
    const now = this.clock.now().getTime();
    const reloadWaits = this.reloadDue === undefined || now < this.reloadDue;
    if (this.index && now < this.checkDue && reloadWaits && (this.usage === undefined || now < this.usageDue)) return this.index;
    // One refresh at a time per container; concurrent callers share it.
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(): Promise<CatalogIndex> {
    const now = this.clock.now();
    const at = now.getTime();
    if (!this.index) {
      await this.load();
      this.checkDue = at + this.interval(this.maxAgeSeconds);
    } else if (this.reloadDue !== undefined && at >= this.reloadDue) {
      if ((await this.attempt('catalog', () => this.load())).failed) this.reloadDue = at + RETRY_AFTER_MS;
      else this.reloadDue = undefined;
    } else if (at >= this.checkDue) {
      const version = await this.attempt('version', () => this.store.version());
      if (version.failed) {
        this.checkDue = at + Math.min(RETRY_AFTER_MS, this.interval(this.maxAgeSeconds));
        return this.index;
      }
      if (version.value !== this.version && this.reloadDue === undefined) {
        if (this.reloadSpreadMs > 0) this.reloadDue = at + this.random() * this.reloadSpreadMs;
        else if ((await this.attempt('catalog', () => this.load())).failed) {
          this.checkDue = at + Math.min(RETRY_AFTER_MS, this.interval(this.maxAgeSeconds));
          return this.index;
        }
      }
      this.checkDue = at + this.interval(this.maxAgeSeconds);
    }
    const usageWasDue = this.usage !== undefined && at >= this.usageDue;
    if (usageWasDue) {
      const figures = await this.attempt('usage figures', () => this.usage!.recent(now));
      if (figures.failed) this.usageDue = at + Math.min(RETRY_AFTER_MS, this.interval(this.usage!.maxAgeSeconds));
      else {
        this.figures = figures.value;
        this.usageDue = at + this.interval(this.usage!.maxAgeSeconds);
      }
    }
    if (usageWasDue || !this.index || this.builtFrom !== this.entries) this.build();
    return this.index!;
  }

  /** The entries the index was last built from. */
  private builtFrom: CatalogEntry[] | undefined;

  private build(): void {
    this.index = new CatalogIndex(this.figures.size > 0 ? this.entries.map((entry) => withUsage(entry, this.figures)) : this.entries);
    this.builtFrom = this.entries;
  }

  private async load(): Promise<void> {
    const catalog = await this.store.load();
    this.entries = catalog.entries;
    this.version = catalog.version;
    this.onLoad({ version: catalog.version, entries: catalog.entries.length });
  }

  /** `seconds` in milliseconds, drawn within ±20%. */
  private interval(seconds: number): number {
    return seconds * 1000 * (0.8 + 0.4 * this.random());
  }

  private async attempt<T>(read: 'version' | 'catalog' | 'usage figures', run: () => Promise<T>): Promise<{ failed: false; value: T } | { failed: true }> {
    try {
      return { failed: false, value: await run() };
    } catch (error) {
      this.onFailure(read, error instanceof Error ? error : new Error(String(error)));
      return { failed: true };
    }
  }
}

function withUsage(entry: CatalogEntry, figures: ModelUsage): CatalogEntry {
  const served = figures.get(entry.model.id);
  if (!served) return entry;
  return { ...entry, popularity: entry.popularity + served.requests, weeklyTokens: entry.weeklyTokens + served.tokens };
}
