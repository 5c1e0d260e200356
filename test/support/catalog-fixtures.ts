import type { CatalogEntry, DataPolicy, ModelBenchmarks, OutputModality, ProviderEndpoint, PublicModel } from '../../lambdas/catalog/types';

/**
 * Builders for catalog fixtures. The defaults describe one plain text model served by one
 * endpoint; a test that depends on a value passes it as an override.
 */

/** What a provider does with prompts when a test does not say: no training, no retention, ZDR. */
export const OPEN_DATA_POLICY: DataPolicy = { training: false, retainsPrompts: false, zeroDataRetention: true };

export type EndpointOverrides = Omit<Partial<ProviderEndpoint>, 'dataPolicy'> & {
  /** Merged over {@link OPEN_DATA_POLICY}. */
  dataPolicy?: Partial<DataPolicy>;
};

export function providerEndpoint(tag: string, overrides: EndpointOverrides = {}): ProviderEndpoint {
  const { dataPolicy, ...fields } = overrides;
  return {
    tag,
    provider_name: tag,
    name: `${tag} | model`,
    quantization: 'bf16',
    context_length: 32000,
    max_completion_tokens: 4096,
    max_prompt_tokens: null,
    pricing: { prompt: '0.000001', completion: '0.000002' },
    supported_parameters: ['max_tokens'],
    is_moderated: false,
    status: 0,
    uptime_last_30m: null,
    uptime_last_5m: null,
    uptime_last_1d: null,
    supports_implicit_caching: false,
    latency_last_30m: null,
    throughput_last_30m: null,
    dataPolicy: { ...OPEN_DATA_POLICY, ...dataPolicy },
    regions: ['us'],
    ...fields,
  };
}

/** A public model whose pricing and limits match the default endpoint's. */
export function publicModel(id: string, overrides: Partial<PublicModel> = {}): PublicModel {
  return {
    id,
    canonical_slug: id,
    name: id,
    created: 0,
    description: `About ${id}`,
    context_length: 32000,
    architecture: { modality: 'text->text', input_modalities: ['text'], output_modalities: ['text'] },
    pricing: { prompt: '0.000001', completion: '0.000002' },
    top_provider: { context_length: 32000, max_completion_tokens: 4096, is_moderated: false },
    per_request_limits: null,
    supported_parameters: ['max_tokens'],
    default_parameters: null,
    supported_voices: null,
    links: { details: `/api/v1/models/${id}/endpoints` },
    ...overrides,
  };
}

export interface CatalogEntryFields {
  model?: PublicModel;
  endpoints?: ProviderEndpoint[];
  popularity?: number;
  weeklyTokens?: number;
}

/** A stored catalog entry: by default {@link publicModel} served by one `host` endpoint, unused. */
export function catalogEntry(id: string, fields: CatalogEntryFields = {}): CatalogEntry {
  return {
    model: fields.model ?? publicModel(id),
    endpoints: fields.endpoints ?? [providerEndpoint('host')],
    popularity: fields.popularity ?? 0,
    weeklyTokens: fields.weeklyTokens ?? 0,
  };
}

/** What {@link indexEntry} takes from a test; the rest is its defaults. */
export interface IndexEntryFields {
  slug?: string;
  created?: number;
  popularity?: number;
  weeklyTokens?: number;
  output?: OutputModality[];
  benchmarks?: ModelBenchmarks;
  endpoints?: ProviderEndpoint[];
}

/**
 * A catalog entry for CatalogIndex tests: canonical slug `<id>-20260101` unless given, and public
 * pricing and top provider no endpoint has, so a caller's view shows which endpoint it took them from.
 */
export function indexEntry(id: string, fields: IndexEntryFields = {}): CatalogEntry {
  const output = fields.output ?? ['text'];
  const model = publicModel(id, {
    canonical_slug: fields.slug ?? `${id}-20260101`,
    name: `Model ${id}`,
    created: fields.created ?? 1_760_000_000,
    description: `About ${id}`,
    context_length: 32000,
    architecture: { modality: `text->${output.join('+')}`, input_modalities: ['text'], output_modalities: output },
    // The public entry's own pricing and top provider: a caller's view replaces both.
    pricing: { prompt: '0.5', completion: '0.5' },
    top_provider: { context_length: 1, max_completion_tokens: 1, is_moderated: true },
    supported_parameters: ['max_tokens'],
    ...(fields.benchmarks ? { benchmarks: fields.benchmarks } : {}),
  });
  return catalogEntry(id, { ...fields, model });
}
