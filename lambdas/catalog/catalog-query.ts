import { invalidParameter } from '../errors';
import { OUTPUT_MODALITIES, type OutputModality } from './types';

/** SPEC 4.1 sort values; the arena order has a neutral and a wire name (DESIGN.md). */
export const SORTS = [
  'most-popular',
  'newest',
  'top-weekly',
  'pricing-low-to-high',
  'pricing-high-to-low',
  'context-high-to-low',
  'throughput-high-to-low',
  'latency-low-to-high',
  'intelligence-high-to-low',
  'coding-high-to-low',
  'agentic-high-to-low',
  'design-arena-elo-high-to-low',
] as const;
export type CatalogSort = (typeof SORTS)[number];

export const SORT_ALIASES: Readonly<Record<string, CatalogSort>> = { 'arena-elo-high-to-low': 'design-arena-elo-high-to-low' };

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 500;

export interface CatalogQuery {
  /** null: every modality (`all`). */
  outputModalities: ReadonlySet<OutputModality> | null;
  sort: CatalogSort | null;
  /** null: the full list (SPEC 4.1 rule 1, both offset and limit omitted). */
  page: { offset: number; limit: number } | null;
}

/**
 * Parses SPEC 4.1 query parameters. Bad values are 400s naming the parameter (SPEC 7.1,
 * bounds per SPEC 8); unknown parameters are ignored, as HTTP caches and proxies add some.
 */
export function parseCatalogQuery(params: Readonly<Record<string, string | undefined>> | null): CatalogQuery {
  const query = params ?? {};
  const offset = parseInteger(query, 'offset', 0, Number.MAX_SAFE_INTEGER);
  const limit = parseInteger(query, 'limit', 1, MAX_LIMIT);
  const page = offset === undefined && limit === undefined ? null : { offset: offset ?? 0, limit: limit ?? DEFAULT_LIMIT };
  return { outputModalities: parseModalities(query.output_modalities), sort: parseSort(query.sort), page };
}

function parseInteger(query: Readonly<Record<string, string | undefined>>, name: string, min: number, max: number): number | undefined {
  const raw = query[name];
  // The public schema types offset as integer-or-null: an empty value means "not given".
  if (raw === undefined || raw === '' || (name === 'offset' && raw === 'null')) return undefined;
  if (!/^\d+$/.test(raw)) throw invalidParameter(name, `must be an integer from ${min} to ${max}`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidParameter(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

function parseModalities(raw: string | undefined): ReadonlySet<OutputModality> | null {
  if (raw === undefined) return new Set<OutputModality>(['text']);
  const parts = raw.split(',').map((part) => part.trim().toLowerCase());
  if (parts.length === 1 && parts[0] === 'all') return null;
  const known = OUTPUT_MODALITIES as readonly string[];
  if (parts.some((part) => !known.includes(part))) {
    throw invalidParameter('output_modalities', `must be "all" or a comma-separated list of ${OUTPUT_MODALITIES.join(', ')}`);
  }
  return new Set(parts as OutputModality[]);
}

function parseSort(raw: string | undefined): CatalogSort | null {
  if (raw === undefined || raw === '') return null;
  const sort = Object.hasOwn(SORT_ALIASES, raw) ? SORT_ALIASES[raw]! : raw;
  if (!(SORTS as readonly string[]).includes(sort)) throw invalidParameter('sort', `must be one of ${SORTS.join(', ')}`);
  return sort as CatalogSort;
}

/** SPEC 2.10: relative URL of the next page keeping the other parameters, or null. */
export function nextPageLink(basePath: string, query: CatalogQuery, rawParams: Readonly<Record<string, string | undefined>> | null, total: number): string | null {
  if (!query.page || query.page.offset + query.page.limit >= total) return null;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(rawParams ?? {})) {
    if (value !== undefined && key !== 'offset' && key !== 'limit') params.set(key, value);
  }
  params.set('offset', String(query.page.offset + query.page.limit));
  params.set('limit', String(query.page.limit));
  return `${basePath}?${params.toString()}`;
}
