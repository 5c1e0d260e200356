/**
 * The fields of a chat completion request the gateway types, apart from the request parser so
 * the interface description can import them without the validators.
 */
export const ROLES = ['system', 'user', 'assistant', 'tool', 'developer'];

type Json = Record<string, unknown>;

/** Every integer parameter stays within the integers a double holds exactly (and JavaScript reads as they were sent). */
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

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
};
