import type { CallerPolicy } from './caller-policy';
import type { CatalogQuery, CatalogSort } from './catalog-query';
import { averageTokenPrice } from './pricing';
import type { CatalogEntry, OutputModality, ProviderEndpoint, PublicModel } from './types';

/** A caller's view of one model: the endpoints it can reach, the first one routing-preferred. */
interface ModelView {
  indexed: IndexedEntry;
  top: ProviderEndpoint;
  topIndex: number;
  contextLength: number | null;
}

interface IndexedEntry {
  entry: CatalogEntry;
  /** Default order: position in the imported catalog. */
  position: number;
  outputModalities: ReadonlySet<OutputModality>;
  /** Sort keys that do not depend on the caller; null means "no score", sorted last. */
  created: number;
  popularity: number;
  weeklyTokens: number;
  intelligence: number | null;
  coding: number | null;
  agentic: number | null;
  arenaElo: number | null;
  /** Serialized views, by `topIndex:contextLength`; most callers share the first. */
  serialized: Map<string, string>;
}

/** Per-endpoint sort keys. */
function endpointKeys(endpoint: ProviderEndpoint) {
  return {
    price: averageTokenPrice(endpoint.pricing),
    throughput: endpoint.throughput_last_30m?.p50 ?? null,
    latency: endpoint.latency_last_30m?.p50 ?? null,
  };
}

type Direction = 'asc' | 'desc';

const SORT_KEYS: Record<CatalogSort, { direction: Direction; key: (view: ModelView) => number | null }> = {
  'most-popular': { direction: 'desc', key: (v) => v.indexed.popularity },
  newest: { direction: 'desc', key: (v) => v.indexed.created },
  'top-weekly': { direction: 'desc', key: (v) => v.indexed.weeklyTokens },
  'pricing-low-to-high': { direction: 'asc', key: (v) => endpointKeys(v.top).price },
  'pricing-high-to-low': { direction: 'desc', key: (v) => endpointKeys(v.top).price },
  'context-high-to-low': { direction: 'desc', key: (v) => v.contextLength },
  'throughput-high-to-low': { direction: 'desc', key: (v) => endpointKeys(v.top).throughput },
  'latency-low-to-high': { direction: 'asc', key: (v) => endpointKeys(v.top).latency },
  'intelligence-high-to-low': { direction: 'desc', key: (v) => v.indexed.intelligence },
  'coding-high-to-low': { direction: 'desc', key: (v) => v.indexed.coding },
  'agentic-high-to-low': { direction: 'desc', key: (v) => v.indexed.agentic },
  'design-arena-elo-high-to-low': { direction: 'desc', key: (v) => v.indexed.arenaElo },
};

export interface ListResult {
  total: number;
  /** The `data` array, already serialized. */
  dataJson: string;
}

/**
 * The catalog in memory, indexed for the per-caller listing. Built once per catalog
 * version; each request filters, sorts and pages without touching DynamoDB, and
 * serializes each model view once per variant (SPEC 4.1).
 */
export class CatalogIndex {
  private readonly entries: IndexedEntry[];
  private readonly bySlug = new Map<string, IndexedEntry>();

  constructor(catalog: readonly CatalogEntry[]) {
    this.entries = catalog.map((entry, position) => indexEntry(entry, position));
    // Ids win over canonical slugs: variants (`:free`, `:batch`) share their base model's slug.
    for (const indexed of this.entries) {
      if (!this.bySlug.has(indexed.entry.model.canonical_slug)) this.bySlug.set(indexed.entry.model.canonical_slug, indexed);
    }
    for (const indexed of this.entries) this.bySlug.set(indexed.entry.model.id, indexed);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The models this caller may use, filtered, sorted and paged (SPEC 4.1). */
  list(policy: CallerPolicy, query: CatalogQuery): ListResult {
    const views: ModelView[] = [];
    for (const indexed of this.entries) {
      if (query.outputModalities && !intersects(indexed.outputModalities, query.outputModalities)) continue;
      const view = viewFor(indexed, policy);
      if (view) views.push(view);
    }
    if (query.sort) sortViews(views, query.sort);
    const page = query.page ? views.slice(query.page.offset, query.page.offset + query.page.limit) : views;
    return { total: views.length, dataJson: `[${page.map(serializeView).join(',')}]` };
  }

  /** One model by id or canonical slug, with the endpoints this caller may reach. */
  endpointsFor(slug: string, policy: CallerPolicy): { model: PublicModel; endpoints: ProviderEndpoint[] } | undefined {
    const indexed = this.bySlug.get(slug);
    if (!indexed || !policy.allowsModel(indexed.entry.model)) return undefined;
    const endpoints = indexed.entry.endpoints.filter((e) => policy.allowsEndpoint(e));
    if (endpoints.length === 0) return undefined;
    return { model: indexed.entry.model, endpoints };
  }

  /** Approximate bytes of the serialized views held (for the benchmark). */
  serializedBytes(): number {
    let bytes = 0;
    for (const indexed of this.entries) for (const json of indexed.serialized.values()) bytes += json.length * 2;
    return bytes;
  }
}

function indexEntry(entry: CatalogEntry, position: number): IndexedEntry {
  const model = entry.model;
  const aa = model.benchmarks?.artificial_analysis;
  const arena = model.benchmarks?.design_arena ?? [];
  return {
    entry,
    position,
    outputModalities: new Set(model.architecture.output_modalities),
    created: model.created,
    popularity: entry.popularity,
    weeklyTokens: entry.weeklyTokens,
    intelligence: aa?.intelligence_index ?? null,
    coding: aa?.coding_index ?? null,
    agentic: aa?.agentic_index ?? null,
    // SPEC 4.1 rule 2: the best rating across arenas.
    arenaElo: arena.length > 0 ? Math.max(...arena.map((a) => a.elo)) : null,
    serialized: new Map(),
  };
}

function viewFor(indexed: IndexedEntry, policy: CallerPolicy): ModelView | undefined {
  const { model, endpoints } = indexed.entry;
  if (!policy.allowsModel(model)) return undefined;
  let topIndex = -1;
  let contextLength: number | null = null;
  for (let i = 0; i < endpoints.length; i++) {
    const endpoint = endpoints[i]!;
    if (!policy.allowsEndpoint(endpoint)) continue;
    if (topIndex < 0) topIndex = i;
    if (contextLength === null || endpoint.context_length > contextLength) contextLength = endpoint.context_length;
  }
  if (topIndex < 0) return undefined;
  return { indexed, top: endpoints[topIndex]!, topIndex, contextLength };
}

/**
 * The model as this caller sees it: pricing and limits of the endpoint its requests
 * route to first, context length of the longest it can reach.
 */
function serializeView(view: ModelView): string {
  const cacheKey = `${view.topIndex}:${view.contextLength}`;
  const cached = view.indexed.serialized.get(cacheKey);
  if (cached !== undefined) return cached;
  const model = view.indexed.entry.model;
  const json = JSON.stringify({
    ...model,
    context_length: view.contextLength,
    pricing: view.top.pricing,
    top_provider: {
      context_length: view.top.context_length,
      max_completion_tokens: view.top.max_completion_tokens,
      is_moderated: view.top.is_moderated,
    },
  });
  view.indexed.serialized.set(cacheKey, json);
  return json;
}

function sortViews(views: ModelView[], sort: CatalogSort): void {
  const { direction, key } = SORT_KEYS[sort];
  const keyed = views.map((view) => ({ view, key: key(view) }));
  const sign = direction === 'asc' ? 1 : -1;
  // SPEC 4.1 rule 3: missing scores last; ties keep the default order.
  keyed.sort((a, b) => {
    if (a.key === null || b.key === null) {
      if (a.key === b.key) return a.view.indexed.position - b.view.indexed.position;
      return a.key === null ? 1 : -1;
    }
    return (a.key - b.key) * sign || a.view.indexed.position - b.view.indexed.position;
  });
  for (let i = 0; i < keyed.length; i++) views[i] = keyed[i]!.view;
}

function intersects<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  for (const value of b) if (a.has(value)) return true;
  return false;
}
