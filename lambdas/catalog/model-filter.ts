import type { ModelFilter } from './catalog-query';
import { MODEL_CATEGORIES, OUTPUT_MODALITIES, SUPPORTED_PARAMETERS, type CatalogEntry, type OutputModality } from './types';

/**
 * What the catalog index filters by, besides the caller's policy: output modalities (docs/reference.md#the-catalog)
 * and the public catalog's filters (`GET /models`: category, supported parameters, search),
 * each model's fields kept as bits or lowercase text in flat arrays, so that a filter is a few
 * integer operations per model.
 */

/** The fields the public catalog's filters read, one flat array each, and the test they make. */
export interface FilterFields {
  matcher(filter: ModelFilter): (position: number) => boolean;
}

const PARAMETER_BIT = new Map<string, number>(SUPPORTED_PARAMETERS.map((parameter, i) => [parameter, 1 << i]));
const CATEGORY_BIT = new Map<string, number>(MODEL_CATEGORIES.map((category, i) => [category, 1 << i]));

const bitsOf = (values: Iterable<string> | undefined, bits: ReadonlyMap<string, number>): number => {
  let out = 0;
  for (const value of values ?? []) out |= bits.get(value) ?? 0;
  return out;
};

/** The filter fields of a catalog, built once per catalog version. */
export function filterFields(catalog: readonly CatalogEntry[]): FilterFields {
  const parameters = Int32Array.from(catalog, (entry) => bitsOf(entry.model.supported_parameters, PARAMETER_BIT));
  const categories = Int32Array.from(catalog, (entry) => bitsOf(entry.categories, CATEGORY_BIT));
  // What a search looks in, lowercase: `q` is lowercased once (catalog-query.ts).
  const texts = catalog.map(({ model }) => `${model.id}\n${model.canonical_slug}\n${model.name}`.toLowerCase());
  return {
    matcher({ category, parameters: wanted, search }) {
      const categoryBit = category === undefined ? 0 : bitsOf([category], CATEGORY_BIT);
      const parameterBits = bitsOf(wanted, PARAMETER_BIT);
      return (position) =>
        (categoryBit & categories[position]!) === categoryBit &&
        (parameterBits & parameters[position]!) === parameterBits &&
        (search === undefined || texts[position]!.includes(search));
    },
  };
}

const MODALITY_BIT = new Map<string, number>(OUTPUT_MODALITIES.map((modality, i) => [modality, 1 << i]));

/** A set of output modalities as bits, one per modality: what the index compares a model's with. */
export const modalityBits = (modalities: Iterable<OutputModality>): number => bitsOf(modalities, MODALITY_BIT);
