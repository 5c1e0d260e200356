import {
  DomainError,
  TooManyRequestsError,
  UnauthenticatedError,
  type AuthenticationFailureReason,
  type AuthenticationScheme,
  type DomainErrorKind,
  type ErrorMetadata,
} from '../errors';
import { DPOP_SIGNING_ALGS } from '../credentials/dpop-wire';

/**
 * The HTTP boundary of every non-OAuth route (docs/reference.md#the-common-error-body). One serializer,
 * {@link toErrorBody}, turns any thrown value into the `{error: {code, message, metadata}}`
 * body: domain errors by their kind (an unreadable or oversized body included: the request
 * parser throws them too); anything else becomes a 500 without detail.
 */
export type { ErrorMetadata } from '../errors';

/** The status of each domain error kind (docs/reference.md#the-common-error-body). */
export const STATUS_OF_KIND: Readonly<Record<DomainErrorKind, number>> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  payment_required: 402,
  unavailable: 503,
  upstream_failed: 502,
  upstream_timeout: 504,
};

/** The common error body (docs/reference.md#the-common-error-body). */
export interface ErrorBody {
  error: { code: number; message: string; metadata?: ErrorMetadata };
}

/** What the serializer says beyond the body. */
export interface ErrorSerializerOptions {
  /**
   * The protected resource metadata URL a 401's challenge names (RFC 9728 §5.1); given by
   * every function that serves protected routes.
   */
  readonly resourceMetadataUrl?: string;
}

/** The status, body and headers that answer an error: a domain error by its kind, anything else a bare 500. */
export function toErrorBody(
  error: unknown,
  options: ErrorSerializerOptions = {},
): { status: number; body: ErrorBody; headers?: Readonly<Record<string, string>> } {
  if (!(error instanceof DomainError)) return { status: 500, body: { error: { code: 500, message: 'Internal Server Error' } } };
  const status = STATUS_OF_KIND[error.kind];
  const body: ErrorBody = { error: { code: status, message: error.message } };
  if (error.metadata) body.error.metadata = error.metadata;
  // docs/reference.md#oauth-errors: a per-address limit says when to retry.
  if (error instanceof TooManyRequestsError) return { status, body, headers: { 'Retry-After': String(error.retryAfterSeconds) } };
  if (error instanceof UnauthenticatedError) {
    return { status, body, headers: { 'WWW-Authenticate': authenticationChallenge(error.reason, error.scheme, options.resourceMetadataUrl) } };
  }
  return { status, body };
}

/**
 * RFC 6750 §3.1 error codes: a request with no credential gets a challenge without one; a
 * malformed Authorization header (another scheme, two headers) is `invalid_request`; a
 * credential that was read and refused (an unknown, disabled or expired key, a token that
 * fails verification) is `invalid_token`.
 */
const CHALLENGE_ERROR: Readonly<Record<AuthenticationFailureReason, string | null>> = {
  missing_credential: null,
  malformed_header: 'invalid_request',
  unknown_key: 'invalid_token',
  invalid_token: 'invalid_token',
  disabled_key: 'invalid_token',
  expired_key: 'invalid_token',
  invalid_dpop_proof: 'invalid_dpop_proof',
};

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3), with `resource_metadata` (RFC 9728
 * §5.1) so a client finds the authorization server from the refusal alone. A refused DPoP
 * request, or a DPoP-bound token sent as a bearer token, is challenged with the DPoP scheme and
 * the proof algorithms accepted (RFC 9449 §7.1). The body says what was wrong; the challenge
 * carries no description.
 */
export function authenticationChallenge(
  reason: AuthenticationFailureReason,
  scheme: AuthenticationScheme,
  resourceMetadataUrl: string | undefined,
): string {
  const error = CHALLENGE_ERROR[reason];
  const parameters = [
    ...(error ? [`error="${error}"`] : []),
    ...(scheme === 'DPoP' ? [`algs="${DPOP_SIGNING_ALGS.join(' ')}"`] : []),
    ...(resourceMetadataUrl ? [`resource_metadata="${resourceMetadataUrl}"`] : []),
  ];
  return parameters.length ? `${scheme} ${parameters.join(', ')}` : scheme;
}
