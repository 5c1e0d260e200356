import type { CatalogSort } from './catalog-query';
import { averageTokenPrice } from './pricing';
import type { ProviderEndpoint } from './types';

/** What the sorts read of a model; null means "no score", sorted last. */
export interface SortFields {
  /** Sort keys that do not depend on the caller. */
  created: number;
  popularity: number;
  weeklyTokens: number;
  intelligence: number | null;
  coding: number | null;
  agentic: number | null;
  arenaElo: number | null;
  /** Sort keys of each endpoint, by endpoint position: computed once, not per request. */
  endpointKeys: EndpointKeys[];
}

/** What the price, throughput and latency sorts read of one endpoint; null: no score. */
export interface EndpointKeys {
  price: number | null;
  throughput: number | null;
  latency: number | null;
}

/** An endpoint's sort keys: its average token price and its recent median throughput and latency (docs/reference.md#listing-rules rule 2). */
export function endpointKeys(endpoint: ProviderEndpoint): EndpointKeys {
  return {
    price: averageTokenPrice(endpoint.pricing),
    throughput: endpoint.throughput_last_30m?.p50 ?? null,
    latency: endpoint.latency_last_30m?.p50 ?? null,
  };
}

type Direction = 'asc' | 'desc';

/** A sort key of one listed model, from its fields, its top endpoint's position and its context length. */
type SortKey = (model: SortFields, top: number, contextLength: number) => number | null;

/** Each `sort` value's direction, and the key it orders a listed model by. */
export const SORT_KEYS: Record<CatalogSort, { direction: Direction; key: SortKey }> = {
  'most-popular': { direction: 'desc', key: (m) => m.popularity },
  newest: { direction: 'desc', key: (m) => m.created },
  'top-weekly': { direction: 'desc', key: (m) => m.weeklyTokens },
  'pricing-low-to-high': { direction: 'asc', key: (m, top) => m.endpointKeys[top]!.price },
  'pricing-high-to-low': { direction: 'desc', key: (m, top) => m.endpointKeys[top]!.price },
  'context-high-to-low': { direction: 'desc', key: (_m, _top, contextLength) => contextLength },
  'throughput-high-to-low': { direction: 'desc', key: (m, top) => m.endpointKeys[top]!.throughput },
  'latency-low-to-high': { direction: 'asc', key: (m, top) => m.endpointKeys[top]!.latency },
  'intelligence-high-to-low': { direction: 'desc', key: (m) => m.intelligence },
  'coding-high-to-low': { direction: 'desc', key: (m) => m.coding },
  'agentic-high-to-low': { direction: 'desc', key: (m) => m.agentic },
  'design-arena-elo-high-to-low': { direction: 'desc', key: (m) => m.arenaElo },
};

/**
 * The order of `count` items by the key of each (docs/reference.md#listing-rules rule 3): missing scores last, ties
 * in their order before sorting.
 */
export function sortOrder(count: number, direction: Direction, keyOf: (item: number) => number | null): Int32Array {
  const keys = new Float64Array(count);
  const missing = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const value = keyOf(i);
    if (value === null) missing[i] = 1;
    else keys[i] = value;
  }
  const sign = direction === 'asc' ? 1 : -1;
  const order = new Int32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  return order.sort((a, b) => {
    if (missing[a] || missing[b]) return missing[a] === missing[b] ? a - b : missing[a]! - missing[b]!;
    return (keys[a]! - keys[b]!) * sign || a - b;
  });
}
