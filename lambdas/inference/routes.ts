import { ref } from '../openapi/json-schema';
import type { RouteDefinition } from '../route-definition';
import { RESPONSE_ID } from '../usage/stored-responses';

const RESPONSE_ID_SCHEMA = { type: 'string', pattern: RESPONSE_ID.source, description: 'A response id, `resp_…`.' };

/** docs/reference.md#scopes-and-access: inference. */
export const INFERENCE_ROUTES = [
  {
    operationId: 'createChatCompletion',
    method: 'POST',
    path: '/chat/completions',
    function: 'inference',
    access: 'inference',
    summary: 'Chat completion, streamed as server-sent events when `stream` is true',
    body: ref('ChatCompletionRequest'),
    ok: {
      status: 200,
      media: {
        'application/json': { schema: ref('ChatResult') },
        // One `data:` line per chunk, then `data: [DONE]`.
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'Server-sent events: each `data:` is a ChatStreamChunk (components), then `data: [DONE]`; a failure after the stream started is a last chunk with `error`, without `[DONE]`.',
          },
        },
      },
    },
    // 402: a spending limit without room for the request (docs/limits.md). 503: no upstream
    // configured for the model, or its usage could not be recorded.
    errors: [400, 402, 404, 502, 503, 504],
  },
  {
    operationId: 'createMessages',
    method: 'POST',
    path: '/messages',
    function: 'inference',
    access: 'inference',
    summary: "Anthropic's Messages API on the same routing, limits and accounting; the key as `x-api-key` or a bearer token",
    body: ref('MessagesRequest'),
    keyHeader: 'x-api-key',
    errorSchema: 'MessagesError',
    ok: {
      status: 200,
      media: {
        'application/json': { schema: ref('MessagesResult') },
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'Server-sent events as Anthropic sends them: `message_start`, `content_block_start`/`_delta`/`_stop` per block, `message_delta`, `message_stop`; a failure after the stream started is an `error` event.',
          },
        },
      },
    },
    errors: [400, 402, 404, 502, 503, 504],
  },
  {
    operationId: 'countMessageTokens',
    method: 'POST',
    path: '/messages/count_tokens',
    function: 'inference',
    access: 'inference',
    summary: "An estimate of a Messages API request's input tokens, admitted as the request would be; no provider is asked",
    body: ref('MessagesCountTokensRequest'),
    keyHeader: 'x-api-key',
    errorSchema: 'MessagesError',
    ok: { status: 200, schema: ref('MessagesTokenCount') },
    errors: [400, 404],
  },
  {
    operationId: 'createResponses',
    method: 'POST',
    path: '/responses',
    function: 'inference',
    access: 'inference',
    summary: "OpenAI's Responses API on the same routing, limits and accounting; kept for its organization unless `store` is false",
    body: ref('ResponsesRequest'),
    errorSchema: 'ResponsesError',
    ok: {
      status: 200,
      media: {
        'application/json': { schema: ref('ResponsesResult') },
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'Server-sent events as OpenAI sends them, each named by its `type` and numbered by `sequence_number`: `response.created`, `response.in_progress`, the output items\' events, then `response.completed` (or `response.incomplete`); a failure after the stream started is an `error` event and `response.failed`.',
          },
        },
      },
    },
    errors: [400, 402, 404, 502, 503, 504],
  },
  {
    operationId: 'getResponse',
    method: 'GET',
    path: '/responses/{id}',
    function: 'inference',
    access: 'inference',
    summary: "A kept response of the caller's organization",
    pathParameters: { id: RESPONSE_ID_SCHEMA },
    errorSchema: 'ResponsesError',
    ok: { status: 200, schema: ref('ResponsesResult') },
    errors: [404],
  },
  {
    operationId: 'deleteResponse',
    method: 'DELETE',
    path: '/responses/{id}',
    function: 'inference',
    access: 'inference',
    summary: "Deletes a kept response of the caller's organization",
    pathParameters: { id: RESPONSE_ID_SCHEMA },
    errorSchema: 'ResponsesError',
    ok: { status: 200, schema: ref('ResponseDeleted') },
    errors: [404],
  },
] as const satisfies readonly RouteDefinition[];

/** The declaration of a route the inference function serves. */
export type InferenceRoute = (typeof INFERENCE_ROUTES)[number];
