import { CHAT_PARAMETERS, MAX_SAFE_INTEGER } from '../inference/chat-parameters';
import { RESPONSE_ID } from '../usage/stored-responses';
import { nonBlank, ref, type Json } from '../openapi/json-schema';

const anyObject: Json = { type: 'object', additionalProperties: true };
const item: Json = { type: 'object', additionalProperties: true };

/**
 * OpenAI's Responses API (`POST /responses`, `GET` and `DELETE /responses/{id}`,
 * docs/api.md#the-responses-api): the request as OpenAI defines it, its fields typed where the
 * gateway reads them; the response object and OpenAI's error body.
 */
export const RESPONSES_SCHEMAS: Readonly<Record<string, Json>> = {
  ResponsesRequest: {
    type: 'object',
    description: "OpenAI's Responses API request, with the public API's `provider` and `models`.",
    properties: {
      model: nonBlank(256, { description: 'A model id or canonical slug from the catalog.' }),
      input: { type: ['string', 'array'], items: item, description: 'A user message, or items: messages, `function_call`, `function_call_output`, reasoning.' },
      instructions: { type: ['string', 'null'] },
      tools: { type: ['array', 'null'], maxItems: 512, items: anyObject },
      tool_choice: { type: ['string', 'object', 'null'] },
      text: { type: ['object', 'null'], properties: { format: anyObject }, additionalProperties: true },
      max_output_tokens: { type: ['integer', 'null'], minimum: 1, maximum: MAX_SAFE_INTEGER },
      temperature: CHAT_PARAMETERS.temperature!,
      top_p: CHAT_PARAMETERS.top_p!,
      reasoning: { type: ['object', 'null'], additionalProperties: true },
      metadata: { type: ['object', 'null'], maxProperties: 16, additionalProperties: { type: 'string', maxLength: 512 } },
      store: { type: ['boolean', 'null'], description: 'Keep the response for `GET /responses/{id}` and `previous_response_id` (the default), unless zero data retention applies.' },
      previous_response_id: { type: ['string', 'null'], maxLength: 128, description: 'Continue a kept response of the same organization: its input and output come first.' },
      parallel_tool_calls: { type: ['boolean', 'null'] },
      stream: { type: ['boolean', 'null'] },
      user: { type: ['string', 'null'], maxLength: 256 },
      provider: CHAT_PARAMETERS.provider!,
      models: CHAT_PARAMETERS.models!,
    },
    required: ['input'],
    // `model` may be left out when `models` names the models to try.
    if: { not: { properties: { models: true }, required: ['models'] } },
    then: { properties: { model: true }, required: ['model'] },
    additionalProperties: true,
  },
  ResponsesResult: {
    type: 'object',
    description: 'A response as OpenAI answers it; `usage.cost` is what the acting key was charged.',
    properties: {
      id: { type: 'string', pattern: RESPONSE_ID.source },
      object: { type: 'string', const: 'response' },
      created_at: { type: 'integer' },
      completed_at: { type: 'integer' },
      status: { type: 'string', enum: ['completed', 'incomplete', 'in_progress', 'failed'] },
      error: { type: ['object', 'null'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
      incomplete_details: { type: ['object', 'null'], properties: { reason: { type: 'string', enum: ['max_output_tokens', 'content_filter'] } } },
      model: { type: 'string' },
      output: { type: 'array', items: ref('ResponseOutputItem') },
      store: { type: 'boolean' },
      previous_response_id: { type: ['string', 'null'] },
      // The request's fields, repeated.
      instructions: { type: ['string', 'null'] },
      max_output_tokens: { type: ['integer', 'null'] },
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
      parallel_tool_calls: { type: 'boolean' },
      reasoning: { type: ['object', 'null'] },
      temperature: { type: ['number', 'null'] },
      text: { type: 'object' },
      tool_choice: { type: ['string', 'object'] },
      tools: { type: 'array', items: anyObject },
      top_p: { type: ['number', 'null'] },
      user: { type: ['string', 'null'] },
      truncation: { type: 'string', const: 'disabled' },
      usage: {
        type: ['object', 'null'],
        properties: {
          input_tokens: { type: 'integer' },
          input_tokens_details: { type: 'object', properties: { cached_tokens: { type: 'integer' } }, required: ['cached_tokens'] },
          output_tokens: { type: 'integer' },
          output_tokens_details: { type: 'object', properties: { reasoning_tokens: { type: 'integer' } }, required: ['reasoning_tokens'] },
          total_tokens: { type: 'integer' },
          cost: { type: 'number' },
        },
        required: ['input_tokens', 'input_tokens_details', 'output_tokens', 'output_tokens_details', 'total_tokens'],
      },
    },
    required: ['id', 'object', 'created_at', 'status', 'model', 'output', 'usage'],
  },
  ResponseOutputItem: {
    type: 'object',
    description: 'An output item: a `message` of `output_text` parts, a `function_call`, a `custom_tool_call` (free-form `input`), or `reasoning` (its text, and its `encrypted_content` to send back).',
    properties: {
      type: { type: 'string', enum: ['message', 'function_call', 'custom_tool_call', 'reasoning'] },
      id: { type: 'string' },
      status: { type: 'string', enum: ['in_progress', 'completed', 'incomplete'] },
      role: { type: 'string', const: 'assistant' },
      content: {
        type: 'array',
        items: {
          type: 'object',
          properties: { type: { type: 'string', enum: ['output_text', 'reasoning_text'] }, text: { type: 'string' }, annotations: { type: 'array' }, logprobs: { type: 'array' } },
          required: ['type', 'text'],
        },
      },
      call_id: { type: 'string' },
      name: { type: 'string' },
      arguments: { type: 'string' },
      input: { type: 'string', description: "A custom tool call's free-form input." },
      summary: { type: 'array', items: anyObject },
      encrypted_content: { type: 'string' },
    },
    required: ['type', 'id'],
  },
  ResponseDeleted: {
    type: 'object',
    properties: { id: { type: 'string' }, object: { type: 'string', const: 'response' }, deleted: { type: 'boolean', const: true } },
    required: ['id', 'object', 'deleted'],
  },
  ResponsesError: {
    type: 'object',
    description: "An error in OpenAI's shape; `code` names a refusal a client recovers from (`previous_response_not_found`).",
    properties: {
      error: {
        type: 'object',
        properties: {
          message: { type: 'string' },
          type: { type: 'string' },
          param: { type: ['string', 'null'] },
          code: { type: ['string', 'null'] },
          metadata: { type: 'object', description: 'What the common error body says beyond its message (a spending limit, the parameter refused).', additionalProperties: true },
        },
        required: ['message', 'type', 'param', 'code'],
      },
    },
    required: ['error'],
  },
};
