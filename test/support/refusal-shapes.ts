import type { RouteDefinition } from '../../lambdas/route-definition';

const MESSAGES_TYPES: Readonly<Record<number, string>> = { 400: 'invalid_request_error', 403: 'permission_error', 415: 'invalid_request_error' };
const RESPONSES_TYPES: Readonly<Record<number, string>> = { 400: 'invalid_request_error', 403: 'permission_error', 415: 'invalid_request_error' };

/**
 * The body a route refuses with, in its API's shape: the common error body, Anthropic's for the
 * Messages API, OpenAI's for the Responses API (docs/api.md).
 */
export function refusalBody(route: Pick<RouteDefinition, 'errorSchema'>, status: number, message: string): unknown {
  if (route.errorSchema === 'MessagesError') return { type: 'error', error: { type: MESSAGES_TYPES[status], message } };
  if (route.errorSchema === 'ResponsesError') return { error: { type: RESPONSES_TYPES[status], message, param: null, code: null } };
  return { error: { code: status, message } };
}
