import { VARIABLE_PRICE, effectivePricing } from '../catalog/pricing';
import { SUPPORTED_PARAMETERS, type ProviderEndpoint, type PublicModel } from '../catalog/types';
import { NotFoundError } from '../errors';

type Json = Record<string, unknown>;

/**
 * A request's own routing preferences, the public API's `provider` object (docs/providers.md,
 * "Routing a request"), read once from the validated body. They only narrow and order the
 * endpoints the caller's organization, guardrails and privacy settings already allow.
 */
export interface RoutingAsk {
  order: string[] | undefined;
  only: Set<string> | undefined;
  ignore: Set<string>;
  quantizations: Set<string> | undefined;
  allowFallbacks: boolean;
  requireParameters: boolean;
  dataCollection: 'allow' | 'deny';
  zdr: boolean;
  sort: 'price' | 'throughput' | 'latency' | undefined;
  /** USD per token (prompt, completion) or per unit (request, image). */
  maxPrice: Partial<Record<'prompt' | 'completion' | 'request' | 'image', number>>;
  /** The request's parameters a model may or may not support: what `requireParameters` asks of an endpoint. */
  parameters: string[];
}

const SUPPORTED: ReadonlySet<string> = new Set(SUPPORTED_PARAMETERS);
const names = (value: unknown): string[] | undefined => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string').map(canonical) : undefined);
/** A provider as a request may name it: its slug or its name, in any case, spaces as hyphens. */
const canonical = (name: string): string => name.trim().toLowerCase().replace(/\s+/g, '-');

/** The routing preferences of a chat request body. */
export function routingAsk(body: Readonly<Json>): RoutingAsk {
  const provider = (typeof body.provider === 'object' && body.provider !== null ? body.provider : {}) as Json;
  const sort = typeof provider.sort === 'object' && provider.sort !== null ? (provider.sort as Json).by : provider.sort;
  const quantizations = names(provider.quantizations);
  const only = names(provider.only);
  const maxPrice: RoutingAsk['maxPrice'] = {};
  const limits = (provider.max_price ?? {}) as Json;
  for (const key of ['prompt', 'completion', 'request', 'image'] as const) {
    const value = Number(limits[key]);
    if (limits[key] !== undefined && limits[key] !== null && Number.isFinite(value)) maxPrice[key] = key === 'prompt' || key === 'completion' ? value / 1e6 : value;
  }
  return {
    order: names(provider.order),
    only: only ? new Set(only) : undefined,
    ignore: new Set(names(provider.ignore) ?? []),
    quantizations: quantizations ? new Set(quantizations) : undefined,
    allowFallbacks: provider.allow_fallbacks !== false,
    requireParameters: provider.require_parameters === true,
    dataCollection: provider.data_collection === 'deny' ? 'deny' : 'allow',
    zdr: provider.zdr === true,
    sort: sort === 'price' || sort === 'throughput' || sort === 'latency' ? sort : undefined,
    maxPrice,
    parameters: Object.keys(body).filter((name) => SUPPORTED.has(name) && body[name] !== null && body[name] !== undefined),
  };
}

/** The names an endpoint answers to: its tag, its provider slug and its provider's name. */
function namesOf(endpoint: ProviderEndpoint): string[] {
  const tag = endpoint.tag.toLowerCase();
  return [tag, tag.split('/')[0]!, canonical(endpoint.provider_name)];
}

const named = (endpoint: ProviderEndpoint, set: ReadonlySet<string>): boolean => namesOf(endpoint).some((name) => set.has(name));

/**
 * The endpoints to try, in order: those the preferences allow (`only`, `ignore`,
 * `quantizations`, `data_collection`, `zdr`, `max_price`, and under `require_parameters` those
 * that support every parameter sent and whose API `carries` it), sorted by `sort`, those named in
 * `order` first in its order; without fallbacks only the ordered ones, or only the first.
 */
export function routedEndpoints(endpoints: readonly ProviderEndpoint[], ask: RoutingAsk, carries: (endpoint: ProviderEndpoint, parameter: string) => boolean, at: Date): ProviderEndpoint[] {
  let kept = endpoints.filter((endpoint) => {
    if (ask.only && !named(endpoint, ask.only)) return false;
    if (named(endpoint, ask.ignore)) return false;
    if (ask.quantizations && !ask.quantizations.has(endpoint.quantization.toLowerCase())) return false;
    if (ask.dataCollection === 'deny' && (endpoint.dataPolicy.training || endpoint.dataPolicy.retainsPrompts)) return false;
    if (ask.zdr && !endpoint.dataPolicy.zeroDataRetention) return false;
    if (!withinPrice(endpoint, ask.maxPrice, at)) return false;
    if (ask.requireParameters) {
      return ask.parameters.every((parameter) => endpoint.supported_parameters.includes(parameter) && carries(endpoint, parameter));
    }
    return true;
  });
  if (ask.sort) kept = sortedBy(kept, ask.sort, at);
  if (ask.order) {
    const rank = (endpoint: ProviderEndpoint) => {
      const positions = namesOf(endpoint).map((name) => ask.order!.indexOf(name)).filter((i) => i >= 0);
      return positions.length > 0 ? Math.min(...positions) : Number.POSITIVE_INFINITY;
    };
    const ordered = kept.filter((endpoint) => rank(endpoint) < Number.POSITIVE_INFINITY).sort((a, b) => rank(a) - rank(b));
    return ask.allowFallbacks ? [...ordered, ...kept.filter((endpoint) => rank(endpoint) === Number.POSITIVE_INFINITY)] : ordered;
  }
  return ask.allowFallbacks ? kept : kept.slice(0, 1);
}

function price(endpoint: ProviderEndpoint, key: 'prompt' | 'completion' | 'request' | 'image', at: Date): number | undefined {
  const value = effectivePricing(endpoint.pricing, { promptTokens: 0, at })[key];
  return value === undefined ? 0 : value === VARIABLE_PRICE ? undefined : Number(value);
}

function withinPrice(endpoint: ProviderEndpoint, limits: RoutingAsk['maxPrice'], at: Date): boolean {
  for (const [key, limit] of Object.entries(limits) as [keyof RoutingAsk['maxPrice'], number][]) {
    const value = price(endpoint, key, at);
    // A variable price is not known to be within any ceiling.
    if (value === undefined || value > limit) return false;
  }
  return true;
}

function sortedBy(endpoints: ProviderEndpoint[], sort: NonNullable<RoutingAsk['sort']>, at: Date): ProviderEndpoint[] {
  const key = (endpoint: ProviderEndpoint): number => {
    if (sort === 'price') return (price(endpoint, 'prompt', at) ?? Infinity) + (price(endpoint, 'completion', at) ?? Infinity);
    if (sort === 'throughput') return -(endpoint.throughput_last_30m?.p50 ?? -Infinity);
    return endpoint.latency_last_30m?.p50 ?? Infinity;
  };
  // Stable: endpoints that tie keep the catalog's order.
  return endpoints.map((endpoint, i) => ({ endpoint, i, k: key(endpoint) })).sort((a, b) => a.k - b.k || a.i - b.i).map(({ endpoint }) => endpoint);
}

/** One model a request may be served by, with its endpoints in the order they are tried. */
export interface RouteCandidate {
  model: PublicModel;
  endpoints: ProviderEndpoint[];
}

/**
 * The models a request may be served by, in the order they are tried (its `model`, then its
 * `models`), each with the endpoints the caller may reach (`find`, the caller's policy applied)
 * routed by its preferences; a model without any is left out. None at all is a 404.
 */
export function routeCandidates(
  models: readonly string[],
  ask: RoutingAsk,
  find: (slug: string) => RouteCandidate | undefined,
  carriesFor: (modelId: string) => (endpoint: ProviderEndpoint, parameter: string) => boolean,
  at: Date,
): RouteCandidate[] {
  const candidates: RouteCandidate[] = [];
  for (const slug of models) {
    const found = find(slug);
    if (!found || candidates.some((candidate) => candidate.model.id === found.model.id)) continue;
    const endpoints = routedEndpoints(found.endpoints, ask, carriesFor(found.model.id), at);
    if (endpoints.length > 0) candidates.push({ model: found.model, endpoints });
  }
  if (candidates.length === 0) {
    const named = models.length === 1 ? `model ${models[0]}` : `any of the models ${models.join(', ')}`;
    throw new NotFoundError(`No endpoints found for ${named} that your settings, guardrails and routing preferences allow`);
  }
  return candidates;
}
