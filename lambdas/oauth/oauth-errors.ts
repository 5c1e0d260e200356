import type { APIGatewayProxyResult } from 'aws-lambda';

/** RFC 6749 §5.2 error codes used by the token endpoint (docs/reference.md#oauth-errors). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_grant'
  | 'invalid_target'
  | 'temporarily_unavailable'
  | 'server_error'
  | 'invalid_dpop_proof';

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

// One factory per error code: the endpoint's code never spells a status and a code apart, so an
// `invalid_grant` cannot be sent as a 500 nor a `temporarily_unavailable` without `Retry-After`.

/** RFC 8707 §2, RFC 8693 §2.2.2: a `resource` that is not this API. */
export const invalidTarget = (description: string) => new OAuthError(400, 'invalid_target', description);

/** RFC 6749 §5.2: a missing, repeated or malformed parameter; 413 for a body over the limit. */
export const invalidRequest = (description: string, status: 400 | 413 = 400) => new OAuthError(status, 'invalid_request', description);

/** docs/reference.md#oauth-errors: past the per-address cap, `invalid_request` with 429 and when to retry. */
export const tooManyRequests = (description: string, retryAfterSeconds: number) =>
  new OAuthError(429, 'invalid_request', description, { 'Retry-After': String(retryAfterSeconds) });

/** RFC 6749 §5.2: a grant type other than token exchange. */
export const unsupportedGrantType = (description: string) => new OAuthError(400, 'unsupported_grant_type', description);

/** RFC 6749 §5.2: a scope other than the one the policy grants. */
export const invalidScope = (description: string) => new OAuthError(400, 'invalid_scope', description);

/** RFC 8693 §2.2.2: the subject token or the policy is not valid; one generic description (docs/reference.md#oauth-errors). */
export const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);

/** RFC 9449 §5: a DPoP proof that fails a check, or none where the policy requires one. */
export const invalidDpopProof = (description: string) => new OAuthError(400, 'invalid_dpop_proof', description);

/** RFC 6749 §5.2: retry later, after `Retry-After` seconds. */
export const temporarilyUnavailable = (description: string, retryAfterSeconds: number) =>
  new OAuthError(503, 'temporarily_unavailable', description, { 'Retry-After': String(retryAfterSeconds) });

/** What every other failure becomes: no detail on the wire. */
const serverError = () => new OAuthError(500, 'server_error', 'Internal server error');

/** RFC 6749 §5.1: token responses and errors are never cached. */
export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

/**
 * RFC 6749 §5.2: `error_description` is limited to %x20-21 / %x23-5B / %x5D-7E, printable ASCII
 * without `"` and `\`. Descriptions quote library messages (jose's `"iat" claim must be a
 * number`), so each is brought into that set here, once: a double quote becomes a single one,
 * a backslash a slash, and any other character outside the set (a control, a tab, a line
 * break, anything beyond ASCII) a question mark.
 */
export function oauthErrorDescription(text: string): string {
  return text.replace(/[^\x20-\x7e]|["\\]/gu, (character) => (character === '"' ? "'" : character === '\\' ? '/' : '?'));
}

/**
 * The one serializer of OAuth errors. With a request id, the response carries it in
 * `X-Request-Id` and at the end of `error_description`, so a workload's logs lead its admin
 * to the recorded reason without the wire revealing it.
 */
export function toOAuthResponse(error: unknown, requestId?: string): APIGatewayProxyResult {
  const known = error instanceof OAuthError && error.expose ? error : serverError();
  const description = oauthErrorDescription(requestId === undefined ? known.description : `${known.description} (request id ${requestId})`);
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
