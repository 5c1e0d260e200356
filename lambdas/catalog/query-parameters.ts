import { invalid } from '../openapi/json-schema';
import { MODEL_CATEGORIES, OUTPUT_MODALITIES, SUPPORTED_PARAMETERS } from './types';

/**
 * The query parameters of `GET /models/user` (docs/reference.md#the-catalog, docs/reference.md#limits) and of the public catalog's
 * `GET /models` and `GET /models/count`, as their routes declare them: data apart from the
 * parser (catalog-query.ts), so the route registry loads no validator.
 */

/** The sort values (docs/reference.md#listing-rules); the arena order has a neutral and a wire name (docs/api.md, the catalog). */
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
/** One `sort` value. */
export type CatalogSort = (typeof SORTS)[number];

/** Other names a `sort` value is accepted under: the arena order's wire name. */
export const SORT_ALIASES: Readonly<Record<string, CatalogSort>> = { 'arena-elo-high-to-low': 'design-arena-elo-high-to-low' };

/** The largest page `limit` takes (docs/reference.md#listing-rules rule 1). */
export const MAX_LIMIT = 1000;
/** The page size when only `offset` is given (docs/reference.md#listing-rules rule 1). */
export const DEFAULT_LIMIT = 500;

/** The longest `q` a search takes: longer than any model name or id. */
export const SEARCH_MAX_LENGTH = 200;

const OUTPUT_MODALITIES_PARAMETER = {
  name: 'output_modalities',
  // Read leniently (letter case and spaces around commas do not matter) by catalog-query.ts.
  schema: { type: 'string' },
  description: `\`all\` or a comma-separated list of output modalities (${OUTPUT_MODALITIES.join(', ')}); default \`text\`.`,
} as const;

/** One supported parameter, with the spaces a hand-written list may hold around commas. */
const PARAMETER_NAME = `(${SUPPORTED_PARAMETERS.join('|')})`;

/** The query parameters of `GET /models/user`: the page, the order and the output modalities. */
export const CATALOG_QUERY_PARAMETERS = [
  {
    name: 'offset',
    // Integer or null, as in the public document; `null` means not given (an empty value is refused).
    schema: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    description: 'Models to skip, at least 0. With neither offset nor limit the whole list comes back.',
  },
  { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT }, description: `Page size, 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} when only offset is given.` },
  {
    name: 'sort',
    // The alias is accepted, not advertised.
    schema: { type: 'string', enum: [...SORTS, ...Object.keys(SORT_ALIASES)], ...invalid({ enum: `must be one of ${SORTS.join(', ')}` }) },
    description: 'Server-side order (see the listing rules of the catalog in the reference); absent or empty: the catalog order.',
  },
  OUTPUT_MODALITIES_PARAMETER,
] as const;

/** `GET /models`: the per-caller list's parameters, and the public catalog's filters. */
export const MODEL_LIST_QUERY_PARAMETERS = [
  ...CATALOG_QUERY_PARAMETERS,
  {
    name: 'category',
    schema: { type: 'string', enum: [...MODEL_CATEGORIES], ...invalid({ enum: `must be one of ${MODEL_CATEGORIES.join(', ')}` }) },
    description: 'Only the models filed under this use case.',
  },
  {
    name: 'supported_parameters',
    schema: {
      type: 'string',
      pattern: `^ *${PARAMETER_NAME} *(, *${PARAMETER_NAME} *)*$`,
      ...invalid({ pattern: `must be a comma-separated list of ${SUPPORTED_PARAMETERS.join(', ')}` }),
    },
    description: 'A comma-separated list of request parameters: only the models that support every one.',
  },
  {
    name: 'q',
    schema: { type: 'string', maxLength: SEARCH_MAX_LENGTH, ...invalid({ maxLength: `must be at most ${SEARCH_MAX_LENGTH} characters` }) },
    description: 'Free text: only the models whose id, canonical slug or name holds it, in any letter case.',
  },
] as const;

/** `GET /models/count`. */
export const MODEL_COUNT_QUERY_PARAMETERS = [OUTPUT_MODALITIES_PARAMETER] as const;
