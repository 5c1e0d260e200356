import type { APIGatewayProxyResult } from 'aws-lambda';

/** RFC 6749 §5.2 error codes used by the token endpoint (SPEC 7.2). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_grant'
  | 'temporarily_unavailable'
  | 'server_error';

/** The OAuth error hierarchy: one class, serialized only by {@link toOAuthResponse}. */
export class OAuthError extends Error {
  get expose(): boolean {
    return this.status < 500 || this.code === 'temporarily_unavailable';
  }

  constructor(
    readonly status: number,
    readonly code: OAuthErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

export const invalidRequest = (description: string, status = 400) => new OAuthError(status, 'invalid_request', description);

/** RFC 6749 §5.1: token responses and errors are never cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

/**
 * The one serializer of OAuth errors. With a request id, the response carries it in
 * `X-Request-Id` and at the end of `error_description`, so a workload's logs lead its admin
 * to the recorded reason without the wire revealing it.
 */
export function toOAuthResponse(error: unknown, requestId?: string): APIGatewayProxyResult {
  const known = error instanceof OAuthError && error.expose ? error : new OAuthError(500, 'server_error', 'Internal server error');
  const description = requestId === undefined ? known.description : `${known.description} (request id ${requestId})`;
  return {
    statusCode: known.status,
    headers: {
      'Content-Type': 'application/json',
      ...NO_STORE,
      ...known.headers,
      ...(requestId === undefined ? {} : { 'X-Request-Id': requestId }),
    },
    body: JSON.stringify({ error: known.code, error_description: description }),
  };
}
