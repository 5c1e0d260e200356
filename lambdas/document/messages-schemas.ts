import { CHAT_PARAMETERS, MAX_SAFE_INTEGER } from '../inference/chat-parameters';
import { invalid, nonBlank, type Json } from '../openapi/json-schema';

const anyObject: Json = { type: 'object', additionalProperties: true };

/**
 * Anthropic's Messages API (`POST /messages`, docs/api.md#the-messages-api): the request as its
 * reference defines it, its fields typed where the gateway reads them; fields the gateway does
 * not act on (beta fields) are accepted and not sent on. The answer and the error in its shapes.
 */
export const MESSAGES_SCHEMAS: Readonly<Record<string, Json>> = {
  MessagesRequest: messagesRequest(),
  MessagesCountTokensRequest: { ...messagesRequest(), description: 'A Messages API request to count: `max_tokens` and `stream` are not needed.', required: ['model', 'messages'] },
  MessagesTokenCount: {
    type: 'object',
    description: 'An estimate of the input tokens, not any model\'s own count.',
    properties: { input_tokens: { type: 'integer', minimum: 0 } },
    required: ['input_tokens'],
  },
  MessagesResult: {
    type: 'object',
    description: 'A message as Anthropic answers it; `usage.cost` is what the acting key was charged.',
    properties: {
      id: { type: 'string' },
      type: { type: 'string', const: 'message' },
      role: { type: 'string', const: 'assistant' },
      model: { type: 'string' },
      content: { type: 'array', items: anyObject },
      stop_reason: { type: ['string', 'null'] },
      stop_sequence: { type: ['string', 'null'] },
      usage: {
        type: 'object',
        properties: {
          input_tokens: { type: 'integer' },
          output_tokens: { type: 'integer' },
          cache_read_input_tokens: { type: 'integer' },
          cache_creation_input_tokens: { type: 'integer' },
          cost: { type: 'number' },
        },
        required: ['input_tokens', 'output_tokens'],
      },
    },
    required: ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'usage'],
  },
  MessagesError: {
    type: 'object',
    description: "An error in Anthropic's shape.",
    properties: {
      type: { type: 'string', const: 'error' },
      error: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } }, required: ['type', 'message'] },
    },
    required: ['type', 'error'],
  },
};

/** Anthropic's Messages API request, as `POST /messages` takes it. */
function messagesRequest(): Json {
  return {
      type: 'object',
      description: "Anthropic's Messages API request, with the public API's `provider` and `models`.",
      properties: {
        model: nonBlank(256, { description: 'A model id or canonical slug from the catalog.' }),
        max_tokens: { type: 'integer', minimum: 1, maximum: MAX_SAFE_INTEGER },
        messages: {
          type: 'array',
          minItems: 1,
          ...invalid('must be a non-empty array'),
          items: {
            type: 'object',
            properties: { role: { type: 'string', enum: ['user', 'assistant', 'system'] }, content: { type: ['string', 'array'], items: anyObject } },
            required: ['role', 'content'],
            additionalProperties: true,
          },
        },
        system: { type: ['string', 'array'], items: anyObject },
        stream: { type: 'boolean' },
        temperature: { type: 'number', minimum: 0, maximum: 1 },
        top_p: { type: 'number', minimum: 0, maximum: 1 },
        top_k: { type: 'integer', minimum: 0, maximum: MAX_SAFE_INTEGER },
        stop_sequences: { type: 'array', items: { type: 'string' } },
        tools: { type: 'array', items: anyObject },
        tool_choice: anyObject,
        thinking: anyObject,
        metadata: anyObject,
        provider: CHAT_PARAMETERS.provider!,
        models: CHAT_PARAMETERS.models!,
      },
      required: ['model', 'max_tokens', 'messages'],
      additionalProperties: true,
    };
}
