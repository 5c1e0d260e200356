/**
 * The fields of a chat completion request the gateway types, apart from the request parser so
 * the interface description can import them without the validators.
 */
export const ROLES = ['system', 'user', 'assistant', 'tool', 'developer'];

type Json = Record<string, unknown>;

/** Every integer parameter stays within the integers a double holds exactly (and JavaScript reads as they were sent). */
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** The most models a request's `models` may name. */
export const MAX_FALLBACK_MODELS = 16;
/** How `provider.sort` may order endpoints. */
export const PROVIDER_SORTS = ['price', 'throughput', 'latency'] as const;
/** A list of provider slugs or names (or quantizations), at most 64 of at most 128 characters. */
const providerNames = (): Json => ({ type: ['array', 'null'], maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 128 } });
/** A price ceiling: a non-negative number, or its decimal string as the public document writes it. */
const PRICE_LIMIT: Json = {
  anyOf: [
    { type: 'number', minimum: 0, 'x-invalid': 'must be a non-negative number of USD' },
    { type: 'string', pattern: '^\\d{1,9}(\\.\\d{1,12})?$', 'x-invalid': 'must be a non-negative number of USD' },
  ],
};

/** A number parameter within [min, max]; null means not set. */
const number = (minimum: number, maximum: number): Json => ({ type: ['number', 'null'], minimum, maximum });
const integer = (minimum: number, maximum: number): Json => ({ type: ['integer', 'null'], minimum, maximum });

/**
 * The sampling, length and flag parameters of the chat-completion convention, with the ranges
 * the public document gives them (its descriptions: temperature 0-2, top_p 0-1, penalties -2 to
 * 2, top_logprobs 0-20, stop up to 4) and, where it gives none, OpenAI's API (n 1-128,
 * logit_bias -100 to 100) or its parameter guide (top_k 0 or more, min_p and top_a 0-1,
 * max_tokens 1 or more, repetition_penalty up to 2: not 0, which the penalty divides by).
 * Integers with no upper bound of their own (top_k, seed, max_tokens) stop at the largest safe
 * integer. A value outside its range is a 400 naming the parameter, never sent to a provider.
 */
export const CHAT_PARAMETERS: Readonly<Record<string, Json>> = {
  temperature: number(0, 2),
  top_p: number(0, 1),
  top_k: integer(0, MAX_SAFE_INTEGER),
  min_p: number(0, 1),
  top_a: number(0, 1),
  frequency_penalty: number(-2, 2),
  presence_penalty: number(-2, 2),
  repetition_penalty: {
    type: ['number', 'null'],
    exclusiveMinimum: 0,
    maximum: 2,
    'x-invalid': { exclusiveMinimum: 'must be a number greater than 0 and at most 2', maximum: 'must be a number greater than 0 and at most 2' },
  },
  seed: integer(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
  max_tokens: integer(1, MAX_SAFE_INTEGER),
  max_completion_tokens: integer(1, MAX_SAFE_INTEGER),
  n: integer(1, 128),
  top_logprobs: integer(0, 20),
  logit_bias: {
    type: ['object', 'null'],
    description: 'Token ids to a bias from -100 to 100.',
    additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
  },
  stop: {
    type: ['string', 'array', 'null'],
    description: 'Up to 4 stop sequences.',
    items: { type: 'string' },
    maxItems: 4,
  },
  stream: { type: 'boolean' },
  logprobs: { type: 'boolean' },
  parallel_tool_calls: { type: 'boolean' },
  include_reasoning: { type: 'boolean' },
  models: {
    type: 'array',
    description: 'Models to try in order when the one before cannot serve; `model` may be left out when this is given.',
    minItems: 1,
    maxItems: MAX_FALLBACK_MODELS,
    items: { type: 'string', minLength: 1, maxLength: 256, pattern: '\\S' },
  },
  provider: {
    type: ['object', 'null'],
    description: 'Routing preferences for this request, within what the organization and guardrails allow (docs/providers.md, "Routing a request").',
    properties: {
      order: providerNames(),
      only: providerNames(),
      ignore: providerNames(),
      quantizations: providerNames(),
      allow_fallbacks: { type: ['boolean', 'null'] },
      require_parameters: { type: ['boolean', 'null'] },
      zdr: { type: ['boolean', 'null'] },
      enforce_distillable_text: { type: ['boolean', 'null'] },
      data_collection: { type: ['string', 'null'], enum: ['allow', 'deny', null] },
      sort: {
        anyOf: [
          { type: 'string', enum: [...PROVIDER_SORTS] },
          { type: 'object', properties: { by: { type: 'string', enum: [...PROVIDER_SORTS] }, partition: { type: ['string', 'null'] } }, required: ['by'] },
          { type: 'null' },
        ],
      },
      max_price: {
        type: ['object', 'null'],
        description: 'USD per million prompt or completion tokens, per request, per image.',
        properties: Object.fromEntries(['prompt', 'completion', 'request', 'image', 'audio'].map((name) => [name, PRICE_LIMIT])),
        additionalProperties: false,
      },
      preferred_min_throughput: { type: ['number', 'object', 'null'] },
      preferred_max_latency: { type: ['number', 'object', 'null'] },
    },
    additionalProperties: false,
  },
};
