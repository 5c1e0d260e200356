import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validatePricing } from '../lambdas/catalog/pricing';
import { deriveCatalogEntries } from '../local/seed-endpoints';
import type { EndpointsExcerptFile, ModelStatsFile, SeedSources } from '../local/seed-sources';
import { MODEL_CATEGORIES, type CatalogEntry, type ModelCategory, type ProviderEndpoint, type PublicModel, type PublicPricing } from '../lambdas/catalog/types';
import { DATA_DIR } from '../local/seed';

/**
 * The catalog import, before anything is written: read a file in the public shape
 * (`{data: PublicModel[]}`) or as catalog entries (`[{model, endpoints, popularity,
 * weeklyTokens}]`), list every problem, and plan the entries to store.
 */

/** One reason the file is rejected, naming the model (or `item #N` when it has no usable id). */
export interface ImportProblem {
  model: string;
  message: string;
}

/** A model from the file; what it leaves out is kept from the catalog or derived. */
export interface ImportItem {
  model: PublicModel;
  endpoints?: ProviderEndpoint[];
  popularity?: number;
  weeklyTokens?: number;
  categories?: ModelCategory[];
}

/** What an import would store, and how many models and endpoints it adds, updates, keeps or derives. */
export interface ImportPlan {
  /** Every model of the file, at its position in the file. */
  entries: { position: number; entry: CatalogEntry }[];
  added: number;
  updated: number;
  endpoints: { fromFile: number; kept: number; derived: number };
  /** Stored models absent from the file: removed with `--replace`, untouched otherwise. */
  absent: string[];
}

/** The real endpoint records and model statistics in data/, which derived endpoints draw on. */
export function loadSeedSources(dir: string = DATA_DIR): SeedSources {
  const read = <T>(file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;
  return {
    endpoints: read<EndpointsExcerptFile>('endpoints-excerpt.json').endpoints,
    stats: read<ModelStatsFile>('model-stats.json'),
  };
}

const ENTRY_FIELDS = ['model', 'endpoints', 'popularity', 'weeklyTokens', 'categories'];

/** Reads the file's parsed JSON into import items; any problem rejects the whole file. */
export function readCatalogFile(value: unknown): { items: ImportItem[]; problems: ImportProblem[] } {
  const problems: ImportProblem[] = [];
  const items: ImportItem[] = [];
  let list: unknown[];
  let entryShape: boolean;
  if (Array.isArray(value)) {
    list = value;
    entryShape = true;
  } else if (isRecord(value) && Array.isArray(value.data)) {
    list = value.data;
    entryShape = false;
  } else {
    return { items, problems: [{ model: 'file', message: 'expected {"data": [models]} or an array of catalog entries' }] };
  }
  if (list.length === 0) return { items, problems: [{ model: 'file', message: 'holds no models' }] };

  const firstIndex = new Map<string, number>();
  list.forEach((raw, index) => {
    const label = `item #${index + 1}`;
    if (entryShape && !(isRecord(raw) && 'model' in raw)) {
      problems.push({ model: label, message: 'expected a catalog entry {model, endpoints, popularity, weeklyTokens}' });
      return;
    }
    const model = entryShape ? (raw as Record<string, unknown>).model : raw;
    const id = isRecord(model) && typeof model.id === 'string' && model.id.trim() !== '' ? model.id : label;
    const messages = checkModel(model);
    if (entryShape) messages.push(...checkEntryFields(raw as Record<string, unknown>));
    if (id !== label) {
      const earlier = firstIndex.get(id);
      if (earlier !== undefined) messages.push(`appears more than once (first as item #${earlier + 1})`);
      else firstIndex.set(id, index);
    }
    problems.push(...messages.map((message) => ({ model: id, message })));
    if (messages.length > 0) return;
    const entry = raw as Record<string, unknown>;
    items.push(
      entryShape
        ? {
            model: model as PublicModel,
            endpoints: (entry.endpoints as ProviderEndpoint[] | undefined)?.length ? (entry.endpoints as ProviderEndpoint[]) : undefined,
            popularity: entry.popularity as number | undefined,
            weeklyTokens: entry.weeklyTokens as number | undefined,
            categories: entry.categories as ModelCategory[] | undefined,
          }
        : { model: model as PublicModel },
    );
  });
  return { items, problems };
}

/**
 * The entries to store. A model without endpoints in the file keeps its stored endpoints,
 * or gets derived demo endpoints when it is new; usage figures likewise. Positions follow
 * the file order.
 */
export function planCatalogImport(
  items: readonly ImportItem[],
  stored: readonly CatalogEntry[],
  sources: () => SeedSources,
): { plan: ImportPlan; problems: ImportProblem[] } {
  const storedById = new Map(stored.map((entry) => [entry.model.id, entry]));
  const problems: ImportProblem[] = [];
  const plan: ImportPlan = { entries: [], added: 0, updated: 0, endpoints: { fromFile: 0, kept: 0, derived: 0 }, absent: [] };
  let loadedSources: SeedSources | undefined;

  items.forEach((item, position) => {
    const existing = storedById.get(item.model.id);
    let derived: CatalogEntry | undefined;
    if (!existing && (!item.endpoints || item.popularity === undefined || item.weeklyTokens === undefined)) {
      try {
        loadedSources ??= sources();
        derived = deriveCatalogEntries([item.model], loadedSources)[0];
      } catch (error) {
        problems.push({ model: item.model.id, message: `cannot derive demo endpoints: ${(error as Error).message}` });
        return;
      }
    }
    const endpoints = item.endpoints ?? existing?.endpoints ?? derived!.endpoints;
    if (item.endpoints) plan.endpoints.fromFile++;
    else if (existing) plan.endpoints.kept++;
    else plan.endpoints.derived++;
    if (existing) plan.updated++;
    else plan.added++;
    plan.entries.push({
      position,
      entry: {
        model: item.model,
        endpoints,
        popularity: item.popularity ?? existing?.popularity ?? derived!.popularity,
        weeklyTokens: item.weeklyTokens ?? existing?.weeklyTokens ?? derived!.weeklyTokens,
        ...categoriesOf(item.categories ?? existing?.categories),
      },
    });
  });

  const imported = new Set(items.map((item) => item.model.id));
  plan.absent = stored.map((entry) => entry.model.id).filter((id) => !imported.has(id));
  return { plan, problems };
}

// --- validation of the file's models (docs/reference.md#the-model-entry PublicModel) and endpoints ---

type Rule = (value: unknown) => string | null;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const string: Rule = (v) => (typeof v === 'string' ? null : 'must be a string');
const nonEmptyString: Rule = (v) => (typeof v === 'string' && v.trim() !== '' ? null : 'must be a non-empty string');
const boolean: Rule = (v) => (typeof v === 'boolean' ? null : 'must be true or false');
const finiteNumber: Rule = (v) => (typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number');
const count: Rule = (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? null : 'must be an integer ≥ 0');
const positiveInteger: Rule = (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? null : 'must be an integer > 0');
const object: Rule = (v) => (isRecord(v) ? null : 'must be an object');
const stringArray: Rule = (v) =>
  Array.isArray(v) && v.every((item) => typeof item === 'string') ? null : 'must be an array of strings';
const nullable =
  (rule: Rule): Rule =>
  (v) =>
    v === null ? null : rule(v);

/** Checks fields of a record: `required` ones must be present, `optional` ones are checked when present. */
function checkFields(
  record: Record<string, unknown>,
  path: string,
  required: Record<string, Rule>,
  optional: Record<string, Rule> = {},
): string[] {
  const problems: string[] = [];
  for (const [field, rule] of Object.entries(required)) {
    const value = record[field];
    const reason = value === undefined ? 'is required' : rule(value);
    if (reason) problems.push(`${path}${field}: ${reason}`);
  }
  for (const [field, rule] of Object.entries(optional)) {
    const value = record[field];
    const reason = value === undefined ? null : rule(value);
    if (reason) problems.push(`${path}${field}: ${reason}`);
  }
  return problems;
}

function checkPricing(value: unknown, path: string): string[] {
  if (!isRecord(value)) return [`${path}pricing: ${value === undefined ? 'is required' : 'must be an object'}`];
  const prefix = path.replace(/\.$/, '');
  return validatePricing(value as PublicPricing).map((problem) => (prefix ? `${prefix}.${problem}` : problem));
}

/** The problems of one model of the file, each starting with the field it concerns; none when the model can be stored. */
export function checkModel(model: unknown): string[] {
  if (!isRecord(model)) return ['model: must be an object'];
  const problems = checkFields(
    model,
    '',
    {
      id: (v) => nonEmptyString(v) ?? (/\s/.test(v as string) ? 'must not contain whitespace' : null),
      canonical_slug: nonEmptyString,
      name: nonEmptyString,
      created: finiteNumber,
      context_length: nullable(positiveInteger),
      architecture: object,
      top_provider: object,
      per_request_limits: nullable(object),
      supported_parameters: stringArray,
      default_parameters: nullable(object),
      supported_voices: nullable(stringArray),
      links: object,
    },
    {
      description: string,
      hugging_face_id: nullable(string),
      expiration_date: nullable(string),
      knowledge_cutoff: nullable(string),
      alias_target: object,
      benchmarks: object,
      reasoning: object,
    },
  );
  problems.push(...checkPricing(model.pricing, ''));
  if (isRecord(model.architecture)) {
    problems.push(
      ...checkFields(
        model.architecture,
        'architecture.',
        { modality: nullable(string), input_modalities: stringArray, output_modalities: stringArray },
        { tokenizer: string, instruct_type: nullable(string) },
      ),
    );
  }
  if (isRecord(model.top_provider)) {
    problems.push(
      ...checkFields(
        model.top_provider,
        'top_provider.',
        { is_moderated: boolean },
        { context_length: nullable(positiveInteger), max_completion_tokens: nullable(count) },
      ),
    );
  }
  if (isRecord(model.links)) problems.push(...checkFields(model.links, 'links.', { details: string }));
  return problems;
}

/** The use cases `GET /models?category=` selects by, when the entry has any. */
function categoriesOf(categories: readonly ModelCategory[] | undefined): Pick<CatalogEntry, 'categories'> {
  return categories && categories.length > 0 ? { categories: [...new Set(categories)] } : {};
}

function checkEntryFields(entry: Record<string, unknown>): string[] {
  const problems = Object.keys(entry)
    .filter((field) => !ENTRY_FIELDS.includes(field))
    .map((field) => `${field}: is not a catalog entry field (${ENTRY_FIELDS.join(', ')})`);
  problems.push(...checkFields(entry, '', {}, { popularity: count, weeklyTokens: count }));
  if (entry.categories !== undefined && !(Array.isArray(entry.categories) && entry.categories.every((c) => MODEL_CATEGORIES.includes(c)))) {
    problems.push(`categories: must be an array of ${MODEL_CATEGORIES.join(', ')}`);
  }
  if (entry.endpoints !== undefined) {
    if (!Array.isArray(entry.endpoints)) problems.push('endpoints: must be an array');
    else entry.endpoints.forEach((endpoint, i) => problems.push(...checkEndpoint(endpoint, `endpoints[${i}].`)));
  }
  return problems;
}

function checkEndpoint(endpoint: unknown, path: string): string[] {
  if (!isRecord(endpoint)) return [`${path.replace(/\.$/, '')}: must be an object`];
  const problems = checkFields(endpoint, path, {
    tag: nonEmptyString,
    provider_name: string,
    name: string,
    quantization: string,
    context_length: positiveInteger,
    max_completion_tokens: nullable(count),
    max_prompt_tokens: nullable(count),
    supported_parameters: stringArray,
    is_moderated: boolean,
    status: finiteNumber,
    uptime_last_30m: nullable(finiteNumber),
    uptime_last_5m: nullable(finiteNumber),
    uptime_last_1d: nullable(finiteNumber),
    supports_implicit_caching: boolean,
    latency_last_30m: nullable(object),
    throughput_last_30m: nullable(object),
    dataPolicy: object,
    regions: stringArray,
  });
  problems.push(...checkPricing(endpoint.pricing, path));
  if (isRecord(endpoint.dataPolicy)) {
    problems.push(
      ...checkFields(endpoint.dataPolicy, `${path}dataPolicy.`, {
        training: boolean,
        retainsPrompts: boolean,
        zeroDataRetention: boolean,
      }),
    );
  }
  return problems;
}
