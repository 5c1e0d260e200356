/**
 * Builds `CatalogEntry` records (docs/reference.md#the-model-entry models plus their provider endpoints) for the
 * public model snapshot, which carries models but no endpoints, data policies or regions.
 *
 * Everything is derived deterministically from a hash of the model id (and of the provider
 * tag for per-endpoint figures): the same inputs always give the same catalog, so local runs,
 * tests and benchmarks agree. Real endpoint records (`data/endpoints-excerpt.json`) and model
 * statistics (`data/model-stats.json`) are used where they exist; the rest is synthetic but
 * shaped so that the data-policy and region filters have something to filter.
 */
import { multiplyDecimal } from '../lambdas/decimal';
import {
  OVERRIDABLE_PRICE_KEYS,
  PRICE_KEYS,
  type CatalogEntry,
  type PricingOverride,
  type ProviderEndpoint,
  type PublicModel,
  type PublicPricing,
} from '../lambdas/catalog/types';
import { hash, medianOnly, pick, round, unit, withinRange } from './seed-figures';
import {
  authorTag,
  dataPolicyFor,
  extraHosts,
  isCloudHost,
  isRouterModel,
  providerDisplayName,
  regionsFor,
  ROUTER_POLICY,
  ROUTER_TAG,
} from './seed-providers';
import type { ExcerptEndpoint, ModelStats, SeedSources } from './seed-sources';

const QUANTIZATIONS = ['fp8', 'bf16', 'fp16', 'int4', 'fp4', 'unknown'] as const;

/** Extra endpoints price between 0.8x and 1.6x the model's public price. */
const PRICE_FACTORS = ['0.8', '0.9', '1', '1', '1.1', '1.2', '1.25', '1.5', '1.6'] as const;

/** Extra endpoints sometimes offer a shorter context than the public entry. */
const CONTEXT_FACTORS = [1, 1, 1, 0.5, 0.25] as const;

/**
 * One `CatalogEntry` per model, in input order. Pure: the sources are passed in, nothing is
 * read or randomised.
 * - Endpoint 0 is the model's public entry (docs/reference.md#the-model-entry `pricing`, `top_provider`,
 *   `supported_parameters`), served by the model's author, or by the provider the excerpt
 *   lists first when it has the model's endpoint 0.
 * - Models in the excerpt get its other endpoints, in the excerpt's order, and no synthetic
 *   ones; other models get 0–3 extra synthetic endpoints (1–4 in all; at least 2 for `:free`).
 * - Router models (`openrouter/…` or prompt price "-1") get exactly one endpoint, tagged
 *   {@link ROUTER_TAG}.
 */
export function deriveCatalogEntries(models: PublicModel[], sources: SeedSources): CatalogEntry[] {
  const excerptByModel = new Map<string, ExcerptEndpoint[]>();
  for (const endpoint of sources.endpoints) {
    const list = excerptByModel.get(endpoint.model_id) ?? [];
    list.push(endpoint);
    excerptByModel.set(endpoint.model_id, list);
  }
  for (const list of excerptByModel.values()) list.sort((a, b) => a._endpoint_index - b._endpoint_index);

  return models.map((model) => {
    const stats = sources.stats[model.canonical_slug];
    const excerpt = excerptByModel.get(model.id) ?? [];
    return {
      model,
      endpoints: deriveEndpoints(model, excerpt, stats),
      ...usageFigures(model, stats),
    };
  });
}

function deriveEndpoints(model: PublicModel, excerpt: ExcerptEndpoint[], stats: ModelStats | undefined): ProviderEndpoint[] {
  if (isRouterModel(model)) {
    return [{ ...publicEndpoint(model, ROUTER_TAG, stats), dataPolicy: { ...ROUTER_POLICY }, regions: ['us'] }];
  }

  const first = excerpt.find((e) => e._endpoint_index === 0);
  const top = first ? fromExcerptTop(model, first) : publicEndpoint(model, authorTag(model.id), stats);
  const endpoints: ProviderEndpoint[] = [
    { ...top, dataPolicy: dataPolicyFor(model, top.tag, 0), regions: regionsFor(model, top.tag) },
  ];

  if (excerpt.length > 0) {
    for (const record of excerpt) {
      if (record === first) continue;
      const endpoint = fromExcerpt(record);
      endpoints.push({
        ...endpoint,
        dataPolicy: dataPolicyFor(model, endpoint.tag, endpoints.length),
        regions: regionsFor(model, endpoint.tag),
      });
    }
    return endpoints;
  }

  for (const host of extraHosts(model)) {
    const endpoint = syntheticEndpoint(model, host, stats);
    endpoints.push({
      ...endpoint,
      dataPolicy: dataPolicyFor(model, host, endpoints.length),
      regions: regionsFor(model, host),
    });
  }
  return endpoints;
}

type EndpointBody = Omit<ProviderEndpoint, 'dataPolicy' | 'regions'>;

/** The public entry as one endpoint; p50 latency/throughput from the model's median stats. */
function publicEndpoint(model: PublicModel, tag: string, stats: ModelStats | undefined): EndpointBody {
  const providerName = providerDisplayName(tag);
  return {
    tag,
    provider_name: providerName,
    name: `${providerName} | ${model.canonical_slug}`,
    quantization: 'unknown',
    context_length: publicContextLength(model),
    max_completion_tokens: model.top_provider.max_completion_tokens ?? null,
    max_prompt_tokens: null,
    pricing: structuredClone(model.pricing),
    supported_parameters: [...model.supported_parameters],
    is_moderated: model.top_provider.is_moderated,
    status: 0,
    uptime_last_30m: stats?.uptime ?? null,
    uptime_last_5m: null,
    uptime_last_1d: stats?.uptime ?? null,
    supports_implicit_caching: model.pricing.input_cache_read !== undefined && unit(model.id, 'implicit-cache') < 0.5,
    latency_last_30m: medianOnly(stats?.latency),
    throughput_last_30m: medianOnly(stats?.throughput),
  };
}

/** The excerpt's endpoint 0, with the public entry's pricing and limits (they must agree). */
function fromExcerptTop(model: PublicModel, record: ExcerptEndpoint): EndpointBody {
  return {
    ...fromExcerpt(record),
    context_length: publicContextLength(model),
    max_completion_tokens: model.top_provider.max_completion_tokens ?? null,
    pricing: structuredClone(model.pricing),
    supported_parameters: [...model.supported_parameters],
    is_moderated: model.top_provider.is_moderated,
  };
}

function fromExcerpt(record: ExcerptEndpoint): EndpointBody {
  return {
    tag: record.tag,
    provider_name: record.provider_name,
    name: record.name,
    quantization: record.quantization,
    context_length: record.context_length,
    max_completion_tokens: record.max_completion_tokens,
    max_prompt_tokens: record.max_prompt_tokens,
    pricing: excerptPricing(record.pricing),
    supported_parameters: [...record.supported_parameters],
    // The excerpt does not record moderation; only first-party endpoints moderate here.
    is_moderated: false,
    status: record.status,
    uptime_last_30m: record.uptime_last_30m,
    uptime_last_5m: record.uptime_last_5m,
    uptime_last_1d: record.uptime_last_1d,
    supports_implicit_caching: record.supports_implicit_caching,
    latency_last_30m: record.latency_last_30m && { ...record.latency_last_30m },
    throughput_last_30m: record.throughput_last_30m && { ...record.throughput_last_30m },
  };
}

/**
 * The excerpt publishes prices with its `discount` already applied (its qwen3-vl-8b-thinking
 * endpoint lists 0.65 × the public price beside `discount: 0.35`). The pricing rules (docs/reference.md#pricing-and-cost) read `discount`
 * as still to be applied, so it is dropped here rather than applied twice.
 */
function excerptPricing(pricing: PublicPricing): PublicPricing {
  const { discount: _alreadyApplied, ...rest } = pricing;
  return structuredClone(rest) as PublicPricing;
}

function syntheticEndpoint(model: PublicModel, host: string, stats: ModelStats | undefined): EndpointBody {
  const key = `${model.id}|${host}`;
  const contextLength = Math.max(1, Math.floor(publicContextLength(model) * pick(key, 'context', CONTEXT_FACTORS)));
  const maxCompletion = model.top_provider.max_completion_tokens ?? null;
  const providerName = providerDisplayName(host);
  return {
    tag: host,
    provider_name: providerName,
    name: `${providerName} | ${model.canonical_slug}`,
    quantization: isCloudHost(host) ? 'unknown' : pick(key, 'quantization', QUANTIZATIONS),
    context_length: contextLength,
    max_completion_tokens: maxCompletion === null ? null : Math.min(maxCompletion, contextLength),
    max_prompt_tokens: null,
    pricing: scalePricing(model.pricing, pick(key, 'price', PRICE_FACTORS)),
    supported_parameters: [...model.supported_parameters],
    is_moderated: false,
    status: 0,
    uptime_last_30m: round(95 + 5 * unit(key, 'uptime-30m'), 2),
    uptime_last_5m: null,
    uptime_last_1d: round(97 + 3 * unit(key, 'uptime-1d'), 2),
    supports_implicit_caching: model.pricing.input_cache_read !== undefined && unit(key, 'implicit-cache') < 0.5,
    latency_last_30m: withinRange(stats?.latency, unit(key, 'latency')),
    throughput_last_30m: withinRange(stats?.throughput, unit(key, 'throughput')),
  };
}

/** Every price (base and override) × factor in exact decimal; conditions kept as they are. */
function scalePricing(pricing: PublicPricing, factor: string): PublicPricing {
  const scale = (price: string) => (factor === '1' ? price : multiplyDecimal(price, factor));
  const scaled: PublicPricing = { ...pricing, prompt: scale(pricing.prompt), completion: scale(pricing.completion) };
  for (const key of PRICE_KEYS) {
    const price = pricing[key];
    if (price !== undefined) scaled[key] = scale(price);
  }
  if (pricing.overrides) {
    scaled.overrides = pricing.overrides.map((override) => {
      const copy: PricingOverride = { ...override };
      if (override.utc_days) copy.utc_days = [...override.utc_days];
      for (const key of OVERRIDABLE_PRICE_KEYS) {
        const price = override[key];
        if (price !== undefined) copy[key] = scale(price);
      }
      return copy;
    });
  }
  return scaled;
}

/**
 * `popularity` is the real request count of the model's top provider where the stats have one
 * (base models only: `:free`/`:batch` variants share the slug but not the traffic); otherwise
 * a log-uniform figure in 1–100,000, with one model in five at 0. `weeklyTokens` is
 * popularity × a per-model 500–15,500 tokens per request × 7.
 */
function usageFigures(model: PublicModel, stats: ModelStats | undefined): { popularity: number; weeklyTokens: number } {
  const requestCount = stats?.topProvider?.request_count;
  let popularity: number;
  if (typeof requestCount === 'number' && !model.id.includes(':')) {
    popularity = requestCount;
  } else if (hash(`${model.id}|popular`) % 5 === 0) {
    popularity = 0;
  } else {
    popularity = Math.floor(10 ** (5 * unit(model.id, 'popularity')));
  }
  const tokensPerRequest = 500 + (hash(`${model.id}|tokens-per-request`) % 15000);
  return { popularity, weeklyTokens: popularity * tokensPerRequest * 7 };
}

function publicContextLength(model: PublicModel): number {
  const length = model.top_provider.context_length ?? model.context_length;
  if (length === null) throw new RangeError(`model ${model.id} has no context length`);
  return length;
}
