import { DomainError, TooManyRequestsError, type DomainErrorKind, type ErrorMetadata } from '../errors';

/**
 * The HTTP boundary of every non-OAuth route (SPEC 7.1). One serializer,
 * {@link toErrorBody}, turns any thrown value into the `{error: {code, message, metadata}}`
 * body: domain errors by their kind (an unreadable or oversized body included: the request
 * parser throws them too); anything else becomes a 500 without detail.
 */
export type { ErrorMetadata } from '../errors';

/** SPEC 7.1 status of each domain error kind. */
export const STATUS_OF_KIND: Readonly<Record<DomainErrorKind, number>> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  upstream_failed: 502,
  upstream_timeout: 504,
};

export interface ErrorBody {
  error: { code: number; message: string; metadata?: ErrorMetadata };
}

export function toErrorBody(error: unknown): { status: number; body: ErrorBody; headers?: Readonly<Record<string, string>> } {
  if (!(error instanceof DomainError)) return { status: 500, body: { error: { code: 500, message: 'Internal Server Error' } } };
  const status = STATUS_OF_KIND[error.kind];
  const body: ErrorBody = { error: { code: status, message: error.message } };
  if (error.metadata) body.error.metadata = error.metadata;
  // SPEC 7.2: a per-address limit says when to retry.
  if (error instanceof TooManyRequestsError) return { status, body, headers: { 'Retry-After': String(error.retryAfterSeconds) } };
  return { status, body };
}
