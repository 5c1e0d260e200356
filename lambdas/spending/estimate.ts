import { VARIABLE_PRICE, effectivePricing, type EffectivePrice } from '../catalog/pricing';
import type { PriceKey, ProviderEndpoint } from '../catalog/types';
import { ZERO, compare, plus, times } from '../usd';

/**
 * What of a request can make a provider bill, as the protocol that carries it reads its body
 * (lambdas/inference/billable-request.ts): the gateway's estimate covers each of these.
 */
export interface BillableRequest {
  /** Bytes of the body as sent: a byte-level tokenizer makes at most one prompt token of each. */
  bodyBytes: number;
  /**
   * The largest completion length the request allows (the larger of its token caps, and a
   * reasoning budget on top): what a provider may generate for each choice. Undefined when it sets none.
   */
  completionCap: number | undefined;
  /** Choices asked for (`n`): each is generated and billed. */
  choices: number;
  /** Input images: each is tokens of its own, whatever its bytes in the body, and its per-image price. */
  images: number;
  /** Parts whose tokens nothing in the body bounds (a file, audio or video by URL, a PDF's pages): the prompt may fill the context. */
  unsizedParts: number;
}

/** The most a provider counts for one input image, in prompt tokens (docs/limits.md, "What a request may cost"). */
export const IMAGE_TOKENS_MAX = 8192;

/** Prices of a prompt token of any kind: fresh, written to a cache, audio, image tokens. */
const PROMPT_PRICES: readonly PriceKey[] = ['prompt', 'input_cache_write', 'input_cache_write_1h', 'audio', 'input_audio_cache', 'image_token'];
/** Prices of a completion token of any kind: text, hidden reasoning, audio and image output. */
const COMPLETION_PRICES: readonly PriceKey[] = ['completion', 'internal_reasoning', 'audio_output', 'image_output', 'image_token'];

/** The most a request may cost, or why nothing bounds it. */
export type CostBound =
  | {
      bounded: true;
      cost: string;
      /** What of it the prompt tokens cost. */
      promptCost: string;
      /** The endpoint whose bound it is; none when no endpoint costs anything. */
      endpoint: ProviderEndpoint | undefined;
    }
  | { bounded: false; reason: string };

/**
 * The most a completion can cost on whichever of `endpoints` serves it, at the prices of the
 * request instant `at` (docs/limits.md, "What a request may cost"): its prompt bound and its
 * completion bound ({@link tokenBounds}), each token at the dearest price of its kind, at every
 * price tier a prompt within the bound may meet; the per-request and per-image prices; all of it
 * once per choice. A variable price (a router's "-1") bounds nothing: the answer says whose.
 */
export function maximumCost(request: BillableRequest, endpoints: readonly ProviderEndpoint[], at: Date): CostBound {
  let most = ZERO;
  let promptCost = ZERO;
  let bounding: ProviderEndpoint | undefined;
  for (const endpoint of endpoints) {
    const { prompt, completion } = tokenBounds(request, endpoint);
    for (const promptTokens of tierStarts(endpoint, prompt)) {
      const price = effectivePricing(endpoint.pricing, { promptTokens, at });
      const variable = [...PROMPT_PRICES, ...COMPLETION_PRICES, 'request', 'image'].find((key) => price[key as PriceKey] === VARIABLE_PRICE);
      if (variable !== undefined) return { bounded: false, reason: `${endpoint.provider_name}'s ${variable} price for this model is variable` };
      const promptPart = times(dearest(price, PROMPT_PRICES), String(prompt));
      const each = plus(promptPart, times(dearest(price, COMPLETION_PRICES), String(completion)), price.request ?? ZERO, times(price.image ?? ZERO, String(request.images)));
      const cost = times(each, String(request.choices));
      if (compare(cost, most) > 0) [most, promptCost, bounding] = [cost, times(promptPart, String(request.choices)), endpoint];
    }
  }
  return { bounded: true, cost: most, promptCost, endpoint: bounding };
}

/**
 * The prompt and completion tokens a request may be billed on one endpoint, per choice: the
 * body's bytes and {@link IMAGE_TOKENS_MAX} an image, within the prompt limit (the whole limit
 * when a part's size is unknown); the completion cap within {@link completionLimit}.
 */
export function tokenBounds(request: BillableRequest, endpoint: ProviderEndpoint): { prompt: number; completion: number } {
  const context = positive(endpoint.context_length) ?? Number.MAX_SAFE_INTEGER;
  const promptLimit = Math.min(positive(endpoint.max_prompt_tokens) ?? context, context);
  const prompt = request.unsizedParts > 0 ? promptLimit : Math.min(request.bodyBytes + request.images * IMAGE_TOKENS_MAX, promptLimit);
  return { prompt, completion: Math.min(request.completionCap ?? Number.MAX_SAFE_INTEGER, completionLimit(endpoint)) };
}

/** The most an endpoint generates for one choice: its maximum completion tokens, else its context. */
export function completionLimit(endpoint: ProviderEndpoint): number {
  const context = positive(endpoint.context_length) ?? Number.MAX_SAFE_INTEGER;
  return Math.min(positive(endpoint.max_completion_tokens) ?? context, context);
}

/** The prompt sizes at which the endpoint's price may change, up to `prompt`: none, each tier's first token, and `prompt` itself. */
function tierStarts(endpoint: ProviderEndpoint, prompt: number): number[] {
  const starts = new Set([0, prompt]);
  for (const override of endpoint.pricing.overrides ?? []) {
    const from = override.min_prompt_tokens;
    if (typeof from === 'number' && Number.isFinite(from) && from + 1 <= prompt) starts.add(Math.max(0, Math.floor(from) + 1));
  }
  return [...starts];
}

function dearest(price: EffectivePrice, keys: readonly PriceKey[]): string {
  let most = ZERO;
  for (const key of keys) {
    const value = price[key as keyof EffectivePrice];
    if (value !== undefined && compare(value, most) > 0) most = value;
  }
  return most;
}

const positive = (value: number | null | undefined): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined);
