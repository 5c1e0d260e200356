import { invalidParameter } from '../errors';
import { queryValues, validated, type QueryString } from '../openapi/request-validation';
import { getModelsQuery, getUserModelsQuery, listModelsCountQuery } from '../openapi/validators/catalog.generated';
import {
  CATALOG_QUERY_PARAMETERS,
  DEFAULT_LIMIT,
  MODEL_COUNT_QUERY_PARAMETERS,
  MODEL_LIST_QUERY_PARAMETERS,
  SORT_ALIASES,
  type CatalogSort,
} from './query-parameters';
import { OUTPUT_MODALITIES, type ModelCategory, type OutputModality, type SupportedParameter } from './types';

export { DEFAULT_LIMIT, MAX_LIMIT, SORTS, SORT_ALIASES, type CatalogSort } from './query-parameters';

/** A catalog listing's query, parsed: which modalities, in which order, which page, and the public catalog's filters. */
export interface CatalogQuery {
  /** null: every modality (`all`). */
  outputModalities: ReadonlySet<OutputModality> | null;
  sort: CatalogSort | null;
  /** null: the full list (docs/reference.md#listing-rules rule 1, both offset and limit omitted). */
  page: { offset: number; limit: number } | null;
  /** The public catalog's filters (`GET /models`); none on the per-caller list. */
  filter?: ModelFilter;
}

/** What `GET /models` narrows the list to, beside the modalities; each member absent when not asked. */
export interface ModelFilter {
  readonly category?: ModelCategory;
  /** Every one of them among the model's `supported_parameters`. */
  readonly parameters?: readonly SupportedParameter[];
  /** Lowercase; held by the model's id, canonical slug or name. */
  readonly search?: string;
}

/**
 * Parses docs/reference.md#the-catalog query parameters: offset, limit and sort as their schemas accept them (bad
 * values are 400s naming the parameter, docs/reference.md#the-common-error-body, bounds per docs/reference.md#limits), the modality list by
 * hand, as it is read leniently. Unknown parameters are ignored, as HTTP caches and proxies
 * add some.
 */
export function parseCatalogQuery(queryString: QueryString): CatalogQuery {
  return listQuery(validated(getUserModelsQuery, listValues(queryString, CATALOG_QUERY_PARAMETERS)));
}

/**
 * `GET /models`: the same parameters, and the public catalog's filters (`category`,
 * `supported_parameters`, `q`). An empty filter value filters nothing.
 */
export function parseModelListQuery(queryString: QueryString): CatalogQuery {
  const values = listValues(queryString, MODEL_LIST_QUERY_PARAMETERS);
  for (const name of ['category', 'supported_parameters', 'q']) if (typeof values[name] === 'string' && values[name].trim() === '') delete values[name];
  const query = validated(getModelsQuery, values);
  const search = query.q?.trim().toLowerCase();
  const filter: ModelFilter = {
    ...(query.category ? { category: query.category } : {}),
    ...(query.supported_parameters ? { parameters: query.supported_parameters.split(',').map((name) => name.trim() as SupportedParameter) } : {}),
    ...(search ? { search } : {}),
  };
  return { ...listQuery(query), ...(Object.keys(filter).length > 0 ? { filter } : {}) };
}

/** `GET /models/count`: the models of the modalities asked, counted whole. */
export function parseModelCountQuery(queryString: QueryString): CatalogQuery {
  const query = validated(listModelsCountQuery, queryValues(queryString, MODEL_COUNT_QUERY_PARAMETERS));
  return { outputModalities: parseModalities(query.output_modalities), sort: null, page: null };
}

function listValues(queryString: QueryString, parameters: Parameters<typeof queryValues>[1]): Record<string, any> {
  const values = queryValues(queryString, parameters);
  // An empty sort means the catalog order.
  if (values.sort === '') delete values.sort;
  return values;
}

function listQuery(query: { offset?: number | null; limit?: number; sort?: string; output_modalities?: string }): CatalogQuery {
  const { offset, limit } = query;
  const page = offset == null && limit === undefined ? null : { offset: offset ?? 0, limit: limit ?? DEFAULT_LIMIT };
  const sort = query.sort === undefined ? null : Object.hasOwn(SORT_ALIASES, query.sort) ? SORT_ALIASES[query.sort]! : (query.sort as CatalogSort);
  return { outputModalities: parseModalities(query.output_modalities), sort, page };
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

/** docs/reference.md#the-model-entry: relative URL of the next page keeping the other parameters, or null. */
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
