import { API_BASE_PATH } from '../base-paths';
import { endpointTraits, type CallerPolicy } from './caller-policy';
import type { CatalogQuery, CatalogSort } from './catalog-query';
import { endpointKeys, SORT_KEYS, sortOrder, type SortFields } from './catalog-sort';
import { filterFields, modalityBits, type FilterFields } from './model-filter';
import { providersDataJson } from './providers';
import type { CatalogEntry, ProviderEndpoint, PublicModel } from './types';

interface IndexedEntry extends SortFields {
  entry: CatalogEntry;
  /**
   * The first view serialized and its {@link variantKey} (top endpoint position and context
   * length): most callers share one, and a cold listing then allocates no map per model.
   * Numeric keys: no key string is built per model per request.
   */
  firstView: string | undefined;
  firstVariant: number;
  /** Views of the other variants, by {@link variantKey}. */
  otherViews: Map<number, string> | undefined;
}

/** How many callers' ordered lists an index keeps (each an array of model positions). */
const RECENT_LISTS = 64;
/**
 * Bytes of answered pages and full lists kept with those lists: a repeated request (a caller's
 * full list, the page a client polls) costs no serialization. Past it, the oldest lists' go first.
 */
export const KEPT_ANSWER_BYTES = 32 * 1024 * 1024;

/** A caller's ordered list and the answers already serialized from it, by page. */
interface KeptList {
  /**
   * The listed models by position in the index, in the caller's order: one allocation per
   * list rather than an object per model, which at 10,000 models would cost a new caller
   * more in garbage collection than its filtering. The endpoints of a listed model the
   * caller reaches are found again, from `reaches`, for the few models a page shows.
   */
  readonly models: Int32Array;
  readonly reaches: Reaches;
  readonly answers: Map<string, string>;
}

/** Whether a caller reaches an endpoint, by its position in the index's endpoint arrays. */
type Reaches = (endpoint: number, model: number) => boolean;

/** One caller's listing: how many models it holds, and the page asked for. */
export interface ListResult {
  total: number;
  /** The `data` array, already serialized. */
  dataJson: string;
}

/**
 * The catalog in memory, indexed for the per-caller listing. Built once per catalog
 * version; each request filters, sorts and pages without touching DynamoDB, and
 * serializes each model view once per variant (docs/reference.md#the-catalog).
 */
export class CatalogIndex {
  private readonly entries: IndexedEntry[];
  private readonly byId = new Map<string, number>(); // positions in `entries`
  /** The positions of the models sharing each canonical slug, in default order. */
  private readonly bySlug = new Map<string, number[]>();
  private readonly recentLists = new Map<string, KeptList>();
  private keptBytes = 0;
  /**
   * What filtering reads, in flat arrays rather than through each entry's object graph: each
   * entry's output modalities (bits of {@link modalityBits}: the filter is one AND per model)
   * and first endpoint (its endpoints run to the next entry's first), and each endpoint's context length and traits (an index into `traitEndpoints`,
   * one endpoint of each distinct traits).
   */
  private readonly modalities: Int32Array;
  private readonly firstEndpoints: Int32Array;
  private readonly endpointContexts: Float64Array;
  private readonly endpointTraitIds: Int32Array;
  private readonly traitEndpoints: ProviderEndpoint[] = [];
  /** What the public catalog's filters read (`GET /models`), by model position; see {@link ModelFilter}. */
  private readonly filterFields: FilterFields;
  /** The list being filtered, copied out at its length. */
  private readonly scratchModels: Int32Array;
  private providersJson: string | undefined; // `GET /providers`, built on first use

  constructor(
    catalog: readonly CatalogEntry[],
    private readonly keptAnswerBudget = KEPT_ANSWER_BYTES,
  ) {
    this.entries = catalog.map(indexEntry);
    const endpointCount = catalog.reduce((sum, entry) => sum + entry.endpoints.length, 0);
    this.modalities = new Int32Array(this.entries.length);
    this.firstEndpoints = new Int32Array(this.entries.length + 1);
    this.endpointContexts = new Float64Array(endpointCount);
    this.endpointTraitIds = new Int32Array(endpointCount);
    this.scratchModels = new Int32Array(this.entries.length);
    const traitIds = new Map<string, number>();
    let next = 0;
    this.entries.forEach((indexed, position) => {
      this.modalities[position] = modalityBits(indexed.entry.model.architecture.output_modalities);
      this.firstEndpoints[position] = next;
      for (const endpoint of indexed.entry.endpoints) {
        const traits = endpointTraits(endpoint);
        let id = traitIds.get(traits);
        if (id === undefined) {
          id = this.traitEndpoints.push(endpoint) - 1;
          traitIds.set(traits, id);
        }
        this.endpointContexts[next] = endpoint.context_length;
        this.endpointTraitIds[next] = id;
        next++;
      }
    });
    this.firstEndpoints[this.entries.length] = next;
    this.filterFields = filterFields(catalog);
    this.entries.forEach((indexed, position) => {
      const { id, canonical_slug: slug } = indexed.entry.model;
      this.byId.set(id, position);
      const sharing = this.bySlug.get(slug);
      if (sharing) sharing.push(position);
      else this.bySlug.set(slug, [position]);
    });
    // Variants (`:free`, `:batch`) share their base model's canonical slug, so a link by slug
    // would show the base model: their `links.details` names their own id instead.
    for (const [position, indexed] of this.entries.entries()) {
      const { id, canonical_slug: slug } = indexed.entry.model;
      if (this.bySlug.get(slug)![0] !== position && id !== slug) {
        const model = { ...indexed.entry.model, links: { details: `${API_BASE_PATH}/models/${id}/endpoints` } };
        indexed.entry = { ...indexed.entry, model };
      }
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The models this caller may use, filtered, sorted and paged (docs/reference.md#the-catalog). */
  list(policy: CallerPolicy, query: CatalogQuery): ListResult {
    const kept = this.filteredAndSorted(policy, query);
    const total = kept.models.length;
    const pageKey = query.page ? `${query.page.offset}:${query.page.limit}` : 'all';
    let dataJson = kept.answers.get(pageKey);
    if (dataJson === undefined) {
      const start = query.page ? Math.min(query.page.offset, total) : 0;
      const end = query.page ? Math.min(start + query.page.limit, total) : total;
      dataJson = this.serializeList(kept, start, end);
      this.keepAnswer(kept, pageKey, dataJson);
    }
    return { total, dataJson };
  }

  /**
   * The `data` array of the list's models `start` to `end`, concatenated rather than joined:
   * like the string `JSON.stringify` returns, it stays a rope over the views' kept strings
   * until it is written out, once. A joined copy is a second copy of every byte, and one over
   * 128 KB is allocated outside the heap's pages, page by page, which on some machines costs
   * more than the rest of the request.
   */
  private serializeList(list: KeptList, start: number, end: number): string {
    if (start >= end) return '[]';
    const { models, reaches } = list;
    let json = `[${this.serializeView(models[start]!, reaches)}`;
    for (let i = start + 1; i < end; i++) json += `,${this.serializeView(models[i]!, reaches)}`;
    return `${json}]`;
  }

  /** The listed model at `position` as this caller sees it, serialized once per variant. */
  private serializeView(position: number, reaches: Reaches): string {
    const first = this.firstEndpoints[position]!;
    return serializeView(this.entries[position]!, this.topEndpoint(position, reaches) - first, this.longestContext(position, reaches));
  }

  /** The routing-preferred endpoint the caller reaches: the model's first it reaches; -1 for none. */
  private topEndpoint(position: number, reaches: Reaches): number {
    for (let i = this.firstEndpoints[position]!; i < this.firstEndpoints[position + 1]!; i++) {
      if (reaches(i, position)) return i;
    }
    return -1;
  }

  /** The longest context among the endpoints of a listed model the caller reaches. */
  private longestContext(position: number, reaches: Reaches): number {
    let longest = 0;
    for (let i = this.firstEndpoints[position]!; i < this.firstEndpoints[position + 1]!; i++) {
      if (reaches(i, position) && this.endpointContexts[i]! > longest) longest = this.endpointContexts[i]!;
    }
    return longest;
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
    const key = `${policy.key}|${modalities ?? 'all'}|${query.sort ?? ''}${query.filter ? `|${JSON.stringify(query.filter)}` : ''}`;
    const kept = this.recentLists.get(key);
    if (kept) {
      // Map order is insertion order: re-inserting marks the list as most recently used.
      this.recentLists.delete(key);
      this.recentLists.set(key, kept);
      return kept;
    }
    const list = this.filtered(policy, modalities, query.filter && this.filterFields.matcher(query.filter));
    if (query.sort) this.sortList(list, query.sort);
    this.recentLists.set(key, list);
    if (this.recentLists.size > RECENT_LISTS) {
      const oldest = this.recentLists.keys().next().value!;
      this.forgetAnswers(this.recentLists.get(oldest)!);
      this.recentLists.delete(oldest);
    }
    return list;
  }

  /**
   * The models this caller can use among `modalities` (null: `all`, which also lists a model
   * without output modalities), in the default order, each with its routing-preferred
   * endpoint and the longest context it can reach.
   */
  private filtered(policy: CallerPolicy, modalities: number | null, matches?: (position: number) => boolean): KeptList {
    const { entries, firstEndpoints, endpointTraitIds, scratchModels: models } = this;
    // A policy deciding by traits is asked once per distinct traits, not once per endpoint.
    const allowedTraits = policy.decidesByTraits ? Uint8Array.from(this.traitEndpoints, (e) => (policy.allowsEndpoint(e) ? 1 : 0)) : null;
    const reaches: Reaches = allowedTraits
      ? (endpoint) => allowedTraits[endpointTraitIds[endpoint]!] === 1
      : (endpoint, model) => policy.allowsEndpoint(entries[model]!.entry.endpoints[endpoint - firstEndpoints[model]!]!);
    const everyModel = policy.allowsEveryModel === true;
    let count = 0;
    for (let position = 0; position < entries.length; position++) {
      if (modalities !== null && (this.modalities[position]! & modalities) === 0) continue;
      if (!everyModel && !policy.allowsModel(entries[position]!.entry.model)) continue;
      if (matches && !matches(position)) continue;
      const end = firstEndpoints[position + 1]!;
      let i = firstEndpoints[position]!;
      // Inlined `topEndpoint` for the common policy: this loop is a new caller's whole cost.
      if (allowedTraits) while (i < end && allowedTraits[endpointTraitIds[i]!] === 0) i++;
      else while (i < end && !reaches(i, position)) i++;
      if (i < end) models[count++] = position;
    }
    return { models: models.slice(0, count), reaches, answers: new Map() };
  }

  private sortList(list: KeptList, sort: CatalogSort): void {
    const { direction, key } = SORT_KEYS[sort];
    const { models, reaches } = list;
    const order = sortOrder(models.length, direction, (i) => {
      const position = models[i]!;
      const top = this.topEndpoint(position, reaches) - this.firstEndpoints[position]!;
      return key(this.entries[position]!, top, this.longestContext(position, reaches));
    });
    const unsorted = models.slice();
    for (let i = 0; i < models.length; i++) models[i] = unsorted[order[i]!]!;
  }

  /** One model by id or canonical slug, with the endpoints this caller may reach. */
  endpointsFor(slug: string, policy: CallerPolicy): { model: PublicModel; endpoints: ProviderEndpoint[] } | undefined {
    const position = this.find(slug, policy);
    if (position === undefined) return undefined;
    const { model, endpoints } = this.entries[position]!.entry;
    return { model, endpoints: endpoints.filter((e) => policy.allowsEndpoint(e)) };
  }

  /** One model by id or canonical slug as this caller sees it, serialized as a listing shows it. */
  modelJson(slug: string, policy: CallerPolicy): string | undefined {
    const position = this.find(slug, policy);
    if (position === undefined) return undefined;
    const { endpoints } = this.entries[position]!.entry;
    const first = this.firstEndpoints[position]!;
    return this.serializeView(position, (endpoint) => policy.allowsEndpoint(endpoints[endpoint - first]!));
  }

  /**
   * The position of the model a slug names for this caller, if it may use it and reach one of
   * its endpoints. Ids win over canonical slugs: variants (`:free`, `:batch`) share their base
   * model's slug. A slug is the first model holding it that this caller can use: a listed
   * variant's `links.details` (its canonical slug) resolves even when the base model is
   * filtered out.
   */
  private find(slug: string, policy: CallerPolicy): number | undefined {
    const byId = this.byId.get(slug);
    const candidates = byId !== undefined ? [byId] : (this.bySlug.get(slug) ?? []);
    return candidates.find((position) => {
      const { model, endpoints } = this.entries[position]!.entry;
      return policy.allowsModel(model) && endpoints.some((e) => policy.allowsEndpoint(e));
    });
  }

  /** The `data` of `GET /providers`, serialized once per catalog version. */
  providersDataJson(): string {
    this.providersJson ??= providersDataJson(this.entries.map((indexed) => indexed.entry));
    return this.providersJson;
  }

  /** Bytes of the answers kept with recent lists, at most the budget (for tests and the benchmark). */
  get keptAnswerBytes(): number {
    return this.keptBytes;
  }

  /** Approximate bytes of the serialized views held (for the benchmark). */
  serializedBytes(): number {
    let bytes = 0;
    for (const indexed of this.entries) {
      if (indexed.firstView !== undefined) bytes += indexed.firstView.length * 2;
      for (const json of indexed.otherViews?.values() ?? []) bytes += json.length * 2;
    }
    return bytes;
  }
}

function indexEntry(entry: CatalogEntry): IndexedEntry {
  const model = entry.model;
  const aa = model.benchmarks?.artificial_analysis;
  const arena = model.benchmarks?.design_arena ?? [];
  return {
    entry,
    created: model.created,
    popularity: entry.popularity,
    weeklyTokens: entry.weeklyTokens,
    intelligence: aa?.intelligence_index ?? null,
    coding: aa?.coding_index ?? null,
    agentic: aa?.agentic_index ?? null,
    // docs/reference.md#listing-rules rule 2: the best rating across arenas.
    arenaElo: arena.length > 0 ? Math.max(...arena.map((a) => a.elo)) : null,
    endpointKeys: entry.endpoints.map(endpointKeys),
    firstView: undefined,
    firstVariant: -1,
    otherViews: undefined,
  };
}

/**
 * The model as this caller sees it: pricing and limits of the endpoint its requests
 * route to first, context length of the longest it can reach.
 */
function serializeView(indexed: IndexedEntry, topIndex: number, contextLength: number): string {
  const key = variantKey(topIndex, contextLength);
  if (indexed.firstVariant === key) return indexed.firstView!;
  const cached = indexed.otherViews?.get(key);
  if (cached !== undefined) return cached;
  const { model, endpoints } = indexed.entry;
  const top = endpoints[topIndex]!;
  // Every member of the public shape in the public catalog's order (the snapshot's), whatever
  // order the stored item has; an absent optional member stays absent (JSON.stringify leaves
  // undefined out). One literal: every view has one hidden class, which serializes faster than
  // a spread copy of the model.
  const view: { [Member in keyof Required<PublicModel>]: PublicModel[Member] | undefined } = {
    id: model.id,
    canonical_slug: model.canonical_slug,
    alias_target: model.alias_target,
    hugging_face_id: model.hugging_face_id,
    name: model.name,
    created: model.created,
    description: model.description,
    context_length: contextLength,
    architecture: model.architecture,
    pricing: top.pricing,
    top_provider: {
      context_length: top.context_length,
      max_completion_tokens: top.max_completion_tokens,
      is_moderated: top.is_moderated,
    },
    per_request_limits: model.per_request_limits,
    supported_parameters: model.supported_parameters,
    default_parameters: model.default_parameters,
    supported_voices: model.supported_voices,
    knowledge_cutoff: model.knowledge_cutoff,
    expiration_date: model.expiration_date,
    links: model.links,
    benchmarks: model.benchmarks,
    reasoning: model.reasoning,
  };
  const json = JSON.stringify(view);
  if (indexed.firstView === undefined) {
    indexed.firstView = json;
    indexed.firstVariant = key;
  } else {
    (indexed.otherViews ??= new Map()).set(key, json);
  }
  return json;
}

/** One number for a view's variant: context lengths are integers far below 2^32, endpoints per model below 2^20. */
function variantKey(topIndex: number, contextLength: number): number {
  return topIndex * 2 ** 32 + contextLength;
}
