import { OPEN_POLICY } from '../../../lambdas/catalog/caller-policy';
import { CatalogCache } from '../../../lambdas/catalog/catalog-cache';
import type { CatalogStore, StoredCatalog } from '../../../lambdas/catalog/catalog-store';
import { catalogEntry } from '../../support/catalog-fixtures';
import { FixedClock } from '../../support/fixed-clock';

/** Holds one catalog in memory and counts the reads the cache makes; reads can be held or made to fail. */
class FakeCatalogStore implements CatalogStore {
  loads = 0;
  versionReads = 0;
  /** The next load throws this. */
  failNextLoad: Error | undefined;
  /** The next version read throws this. */
  failNextVersion: Error | undefined;
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;

  constructor(private catalog: StoredCatalog) {}

  /** Replaces the stored catalog, as an import would. */
  publish(version: string, ids: string[]): void {
    this.catalog = { version, entries: ids.map((id) => catalogEntry(id)) };
  }

  /** Holds every read until {@link release} is called. */
  hold(): void {
    this.gate = new Promise((resolve) => (this.openGate = resolve));
  }

  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  async load(): Promise<StoredCatalog> {
    this.loads += 1;
    await this.gate;
    this.throwIfFailing('failNextLoad');
    return { version: this.catalog.version, entries: [...this.catalog.entries] };
  }

  async version(): Promise<string | undefined> {
    this.versionReads += 1;
    await this.gate;
    this.throwIfFailing('failNextVersion');
    return this.catalog.version;
  }

  private throwIfFailing(which: 'failNextLoad' | 'failNextVersion'): void {
    const failure = this[which];
    this[which] = undefined;
    if (failure) throw failure;
  }

  async putEntries(): Promise<void> {
    throw new Error('not used by the cache');
  }

  async setUsage(): Promise<boolean> {
    throw new Error('not used by the cache');
  }

  async remove(): Promise<void> {
    throw new Error('not used by the cache');
  }
}

const MAX_AGE_SECONDS = 60;
/** Every interval drawn at the middle of its ±20%: exactly its nominal length. */
const MIDDLE = { random: () => 0.5 };

function ids(index: Awaited<ReturnType<CatalogCache['get']>>): string[] {
  return (JSON.parse(index.list(OPEN_POLICY, { outputModalities: null, sort: null, page: null }).dataJson) as { id: string }[]).map(
    (m) => m.id,
  );
}

describe('CatalogCache', () => {
  let store: FakeCatalogStore;
  let clock: FixedClock;
  let cache: CatalogCache;

  beforeEach(() => {
    store = new FakeCatalogStore({ version: 'v1', entries: [catalogEntry('a/one'), catalogEntry('a/two')] });
    clock = new FixedClock();
    cache = new CatalogCache(store, clock, MAX_AGE_SECONDS, undefined, undefined, MIDDLE);
  });

  it('tells its listener about each load, and only about loads', async () => {
    const loads: unknown[] = [];
    cache = new CatalogCache(store, clock, MAX_AGE_SECONDS, (loaded) => loads.push(loaded), undefined, MIDDLE);
    await cache.get();
    clock.advance(MAX_AGE_SECONDS * 1000);
    await cache.get();
    store.publish('v2', ['b/new']);
    clock.advance(MAX_AGE_SECONDS * 1000);
    await cache.get();

    expect(loads).toEqual([
      { version: 'v1', entries: 2 },
      { version: 'v2', entries: 1 },
    ]);
  });

  it('loads the catalog on the first call, without a version read', async () => {
    const index = await cache.get();

    expect(ids(index)).toEqual(['a/one', 'a/two']);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 1, versionReads: 0 });
  });

  it('serves from memory within maxAge without touching the store', async () => {
    const first = await cache.get();
    store.publish('v2', ['b/new']);

    clock.advance(MAX_AGE_SECONDS * 1000 - 1);
    const second = await cache.get();

    expect(second).toBe(first);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 1, versionReads: 0 });
  });

  it('after maxAge reads the version once and keeps the same index when it has not changed', async () => {
    const first = await cache.get();

    clock.advance(MAX_AGE_SECONDS * 1000);
    const second = await cache.get();

    expect(second).toBe(first);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 1, versionReads: 1 });
  });

  it('restarts the maxAge window after an unchanged version check', async () => {
    await cache.get();
    clock.advance(MAX_AGE_SECONDS * 1000);
    await cache.get();

    clock.advance(MAX_AGE_SECONDS * 1000 - 1);
    await cache.get();

    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 1, versionReads: 1 });
  });

  it('reloads when the version changed after maxAge, and serves the new catalog', async () => {
    const first = await cache.get();
    store.publish('v2', ['b/new']);

    clock.advance(MAX_AGE_SECONDS * 1000);
    const second = await cache.get();

    expect(second).not.toBe(first);
    expect(ids(second)).toEqual(['b/new']);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 2, versionReads: 1 });
  });

  it('remembers the reloaded version: the next check after maxAge does not reload again', async () => {
    await cache.get();
    store.publish('v2', ['b/new']);
    clock.advance(MAX_AGE_SECONDS * 1000);
    const reloaded = await cache.get();

    clock.advance(MAX_AGE_SECONDS * 1000);
    const again = await cache.get();

    expect(again).toBe(reloaded);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 2, versionReads: 2 });
  });

  it('shares one load among concurrent first calls', async () => {
    store.hold();

    const pending = [cache.get(), cache.get(), cache.get()];
    store.release();
    const [a, b, c] = await Promise.all(pending);

    expect(b).toBe(a);
    expect(c).toBe(a);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 1, versionReads: 0 });
  });

  it('shares one version check and one reload among concurrent calls after maxAge', async () => {
    await cache.get();
    store.publish('v2', ['b/new']);
    clock.advance(MAX_AGE_SECONDS * 1000);
    store.hold();

    const pending = [cache.get(), cache.get(), cache.get()];
    store.release();
    const [a, b, c] = await Promise.all(pending);

    expect(ids(a)).toEqual(['b/new']);
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 2, versionReads: 1 });
  });

  it('propagates a failed first load and retries on the next call', async () => {
    store.failNextLoad = new Error('table unavailable');

    await expect(cache.get()).rejects.toThrow('table unavailable');
    const index = await cache.get();

    expect(ids(index)).toEqual(['a/one', 'a/two']);
    expect(store.loads).toBe(2);
  });

  it('serves the catalog it holds to every caller when a version check fails, reports it, and checks again 5 s on', async () => {
    const failures: string[] = [];
    cache = new CatalogCache(store, clock, MAX_AGE_SECONDS, undefined, undefined, { ...MIDDLE, onFailure: (read, error) => failures.push(`${read}: ${error.message}`) });
    const first = await cache.get();
    store.publish('v2', ['b/new']);
    clock.advance(MAX_AGE_SECONDS * 1000);
    store.hold();
    store.failNextVersion = new Error('throttled');

    const pending = [cache.get(), cache.get()];
    store.release();
    expect(await Promise.all(pending)).toEqual([first, first]);
    expect({ versionReads: store.versionReads, failures }).toEqual({ versionReads: 1, failures: ['version: throttled'] });

    clock.advance(4999);
    expect(await cache.get()).toBe(first);
    expect(store.versionReads).toBe(1);
    clock.advance(1);
    expect(ids(await cache.get())).toEqual(['b/new']);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 2, versionReads: 2 });
  });

  it('serves the catalog it holds when the reload after a version change fails, and reloads on the next try', async () => {
    const failures: string[] = [];
    cache = new CatalogCache(store, clock, MAX_AGE_SECONDS, undefined, undefined, { ...MIDDLE, onFailure: (read, error) => failures.push(`${read}: ${error.message}`) });
    const first = await cache.get();
    store.publish('v2', ['b/new']);
    clock.advance(MAX_AGE_SECONDS * 1000);
    store.failNextLoad = new Error('load failed');

    expect(await cache.get()).toBe(first);
    expect(failures).toEqual(['catalog: load failed']);
    clock.advance(5000);
    const retried = await cache.get();

    expect(ids(retried)).toEqual(['b/new']);
    expect({ loads: store.loads, versionReads: store.versionReads }).toEqual({ loads: 3, versionReads: 2 });
  });

  it('keeps the usage figures it holds when reading them fails, and reads them again later', async () => {
    let fail = false;
    let reads = 0;
    const usage = {
      maxAgeSeconds: 300,
      recent: async () => {
        reads++;
        if (fail) throw new Error('throttled');
        return new Map([['a/two', { requests: 10, tokens: 100 }]]);
      },
    };
    cache = new CatalogCache(store, clock, MAX_AGE_SECONDS, undefined, usage, MIDDLE);
    const popular = async () => JSON.parse((await cache.get()).list(OPEN_POLICY, { outputModalities: null, sort: 'most-popular', page: null }).dataJson)[0].id;
    expect(await popular()).toBe('a/two');
    fail = true;
    clock.advance(300_000);
    expect(await popular()).toBe('a/two');
    fail = false;
    clock.advance(5000);
    expect(await popular()).toBe('a/two');
    expect(reads).toBe(3);
  });

  it('spreads its checks over ±20% of the interval, so containers do not read the version in step', async () => {
    const early = new CatalogCache(store, clock, MAX_AGE_SECONDS, undefined, undefined, { random: () => 0 });
    const late = new CatalogCache(store, clock, MAX_AGE_SECONDS, undefined, undefined, { random: () => 0.999999 });
    await Promise.all([early.get(), late.get()]);
    clock.advance(48_000);
    await Promise.all([early.get(), late.get()]);
    expect(store.versionReads).toBe(1);
    clock.advance(24_000);
    await late.get();
    expect(store.versionReads).toBe(2);
  });
});
