import { API_BASE_PATH } from '../routes';
import type { CallerPolicy } from './caller-policy';
import type { CatalogQuery, CatalogSort } from './catalog-query';
import { averageTokenPrice } from './pricing';
import { OUTPUT_MODALITIES, type CatalogEntry, type OutputModality, type ProviderEndpoint, type PublicModel } from './types';

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
  /** Output modalities as bits of {@link modalityBits}: the filter is one AND per model. */
  outputModalities: number;
  /** Sort keys that do not depend on the caller; null means "no score", sorted last. */
  created: number;
  popularity: number;
  weeklyTokens: number;
  intelligence: number | null;
  coding: number | null;
  agentic: number | null;
  arenaElo: number | null;
  /** Sort keys of each endpoint, by endpoint position: computed once, not per request. */
  endpointKeys: EndpointKeys[];
  /**
   * Serialized views, by top endpoint position, then by context length; most callers share
   * one. Numeric keys: no key string is built per model per request.
   */
  serialized: (Map<number, string> | undefined)[];
}

interface EndpointKeys {
  price: number | null;
  throughput: number | null;
  latency: number | null;
}

function endpointKeys(endpoint: ProviderEndpoint): EndpointKeys {
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
  'pricing-low-to-high': { direction: 'asc', key: (v) => v.indexed.endpointKeys[v.topIndex]!.price },
  'pricing-high-to-low': { direction: 'desc', key: (v) => v.indexed.endpointKeys[v.topIndex]!.price },
  'context-high-to-low': { direction: 'desc', key: (v) => v.contextLength },
  'throughput-high-to-low': { direction: 'desc', key: (v) => v.indexed.endpointKeys[v.topIndex]!.throughput },
  'latency-low-to-high': { direction: 'asc', key: (v) => v.indexed.endpointKeys[v.topIndex]!.latency },
  'intelligence-high-to-low': { direction: 'desc', key: (v) => v.indexed.intelligence },
  'coding-high-to-low': { direction: 'desc', key: (v) => v.indexed.coding },
  'agentic-high-to-low': { direction: 'desc', key: (v) => v.indexed.agentic },
  'design-arena-elo-high-to-low': { direction: 'desc', key: (v) => v.indexed.arenaElo },
};

/** How many callers' ordered lists an index keeps (each is an array of references). */
const RECENT_LISTS = 64;
/**
 * Bytes of answered pages and full lists kept with those lists: a repeated request (a
 * caller's full list, the page a client polls) costs no serialization. The oldest lists'
 * bytes go first past the budget.
 */
export const KEPT_ANSWER_BYTES = 32 * 1024 * 1024;

/** A caller's ordered list and the answers already serialized from it, by page. */
interface KeptList {
  readonly views: readonly ModelView[];
  readonly answers: Map<string, string>;
}

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
  private readonly byId = new Map<string, IndexedEntry>();
  /** The models sharing each canonical slug, in default order. */
  private readonly bySlug = new Map<string, IndexedEntry[]>();
  private readonly recentLists = new Map<string, KeptList>();
  private keptBytes = 0;

  constructor(
    catalog: readonly CatalogEntry[],
    private readonly keptAnswerBudget = KEPT_ANSWER_BYTES,
  ) {
    this.entries = catalog.map((entry, position) => indexEntry(entry, position));
    for (const indexed of this.entries) {
      const { id, canonical_slug: slug } = indexed.entry.model;
      this.byId.set(id, indexed);
      const sharing = this.bySlug.get(slug);
      if (sharing) sharing.push(indexed);
      else this.bySlug.set(slug, [indexed]);
    }
    // Variants (`:free`, `:batch`) share their base model's canonical slug, so a link by slug
    // would show the base model: their `links.details` names their own id instead.
    for (const indexed of this.entries) {
      const { id, canonical_slug: slug } = indexed.entry.model;
      if (this.bySlug.get(slug)![0] !== indexed && id !== slug) {
        const model = { ...indexed.entry.model, links: { details: `${API_BASE_PATH}/models/${id}/endpoints` } };
        indexed.entry = { ...indexed.entry, model };
      }
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The models this caller may use, filtered, sorted and paged (SPEC 4.1). */
  list(policy: CallerPolicy, query: CatalogQuery): ListResult {
    const kept = this.filteredAndSorted(policy, query);
    const { views } = kept;
    const pageKey = query.page ? `${query.page.offset}:${query.page.limit}` : 'all';
    let dataJson = kept.answers.get(pageKey);
    if (dataJson === undefined) {
      const page = query.page ? views.slice(query.page.offset, query.page.offset + query.page.limit) : views;
      dataJson = `[${page.map(serializeView).join(',')}]`;
      this.keepAnswer(kept, pageKey, dataJson);
    }
    return { total: views.length, dataJson };
  }

  private keepAnswer(kept: KeptList, pageKey: string, json: string): void {
    const bytes = json.length * 2;
    if (bytes > this.keptAnswerBudget) return;
    kept.answers.set(pageKey, json);
    this.keptBytes += bytes;
    for (const list of this.recentLists.values()) {
      if (this.keptBytes <= this.keptAnswerBudget) break;
      this.forgetAnswers(list);
    }
  }

  private forgetAnswers(list: KeptList): void {
    for (const json of list.answers.values()) this.keptBytes -= json.length * 2;
    list.answers.clear();
  }

  /**
   * The caller's whole ordered list. Callers page through it request after request, so the
   * most recent lists are kept (by policy, modalities and sort) with the answers serialized
   * from them: a later page costs only its own models, a repeated one nothing. The index is
   * immutable, so a kept list never goes stale.
   */
  private filteredAndSorted(policy: CallerPolicy, query: CatalogQuery): KeptList {
    const modalities = query.outputModalities ? modalityBits(query.outputModalities) : null;
    const key = `${policy.key}|${modalities ?? 'all'}|${query.sort ?? ''}`;
    const kept = this.recentLists.get(key);
    if (kept) {
      // Map order is insertion order: re-inserting marks the list as most recently used.
      this.recentLists.delete(key);
      this.recentLists.set(key, kept);
      return kept;
    }
    const views: ModelView[] = [];
    for (const indexed of this.entries) {
      // null: `all`, which also lists a model without output modalities.
      if (modalities !== null && (indexed.outputModalities & modalities) === 0) continue;
      const view = viewFor(indexed, policy);
      if (view) views.push(view);
    }
    if (query.sort) sortViews(views, query.sort);
    const list: KeptList = { views, answers: new Map() };
    this.recentLists.set(key, list);
    if (this.recentLists.size > RECENT_LISTS) {
      const oldest = this.recentLists.keys().next().value!;
      this.forgetAnswers(this.recentLists.get(oldest)!);
      this.recentLists.delete(oldest);
    }
    return list;
  }

  /** One model by id or canonical slug, with the endpoints this caller may reach. */
  endpointsFor(slug: string, policy: CallerPolicy): { model: PublicModel; endpoints: ProviderEndpoint[] } | undefined {
    // Ids win over canonical slugs: variants (`:free`, `:batch`) share their base model's slug.
    // A slug is the first model holding it that this caller can use: a listed variant's
    // `links.details` (its canonical slug) resolves even when the base model is filtered out.
    const byId = this.byId.get(slug);
    const candidates = byId ? [byId] : (this.bySlug.get(slug) ?? []);
    for (const indexed of candidates) {
      if (!policy.allowsModel(indexed.entry.model)) continue;
      const endpoints = indexed.entry.endpoints.filter((e) => policy.allowsEndpoint(e));
      if (endpoints.length > 0) return { model: indexed.entry.model, endpoints };
    }
    return undefined;
  }

  /** Bytes of the answers kept with recent lists, at most the budget (for tests and the benchmark). */
  get keptAnswerBytes(): number {
    return this.keptBytes;
  }

  /** Approximate bytes of the serialized views held (for the benchmark). */
  serializedBytes(): number {
    let bytes = 0;
    for (const indexed of this.entries) {
      for (const byContext of indexed.serialized) for (const json of byContext?.values() ?? []) bytes += json.length * 2;
    }
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
    outputModalities: modalityBits(model.architecture.output_modalities),
    created: model.created,
    popularity: entry.popularity,
    weeklyTokens: entry.weeklyTokens,
    intelligence: aa?.intelligence_index ?? null,
    coding: aa?.coding_index ?? null,
    agentic: aa?.agentic_index ?? null,
    // SPEC 4.1 rule 2: the best rating across arenas.
    arenaElo: arena.length > 0 ? Math.max(...arena.map((a) => a.elo)) : null,
    endpointKeys: entry.endpoints.map(endpointKeys),
    serialized: [],
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
  const byContext = (view.indexed.serialized[view.topIndex] ??= new Map());
  // A view exists only with a reachable endpoint, so its context length is a number.
  const cacheKey = view.contextLength!;
  const cached = byContext.get(cacheKey);
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
  byContext.set(cacheKey, json);
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

const MODALITY_BIT = new Map<string, number>(OUTPUT_MODALITIES.map((modality, i) => [modality, 1 << i]));

function modalityBits(modalities: Iterable<OutputModality>): number {
  let bits = 0;
  for (const modality of modalities) bits |= MODALITY_BIT.get(modality) ?? 0;
  return bits;
}
