/**
 * Domain errors: what went wrong, in the domain's terms. Domain modules (accounts, catalog,
 * federation, signing) throw these and know nothing of HTTP; each protocol boundary maps
 * the kind to its own wire form once (lambdas/http/api-errors.ts for the common error body of docs/reference.md#the-common-error-body, the
 * operator CLI to exit codes).
 */
export type DomainErrorKind =
  | 'invalid_input'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'payment_required'
  | 'unavailable'
  | 'upstream_failed'
  | 'upstream_timeout';

/** Structured detail for the caller, e.g. `{ parameter: 'limit' }`. */
export type ErrorMetadata = Record<string, unknown> | null;

/** An error of one of the domain's kinds, with structured detail a protocol may show the caller. */
export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly metadata: ErrorMetadata = null,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input breaks a rule of the operation. */
export class InvalidInputError extends DomainError {
  constructor(message: string, metadata: ErrorMetadata = null) {
    super('invalid_input', message, metadata);
  }
}

/** Why a credential was refused: a metric dimension, never shown to the caller. */
export type AuthenticationFailureReason =
  | 'missing_credential'
  | 'malformed_header'
  | 'unknown_key'
  | 'invalid_token'
  | 'disabled_key'
  | 'expired_key'
  | 'invalid_dpop_proof';

/** The HTTP authentication scheme a refusal challenges with: DPoP for DPoP-bound tokens (RFC 9449 §7.1). */
export type AuthenticationScheme = 'Bearer' | 'DPoP';

/** No credential, or one that does not identify a caller (docs/reference.md#scopes-and-access). */
export class UnauthenticatedError extends DomainError {
  constructor(
    readonly reason: AuthenticationFailureReason,
    message: string,
    readonly scheme: AuthenticationScheme = 'Bearer',
  ) {
    super('unauthenticated', message);
  }
}

/** The caller is known but may not do this. */
export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** The resource does not exist, or the caller may not know it does: a 404. */
export class NotFoundError extends DomainError {
  constructor(message = 'Resource not found') {
    super('not_found', message);
  }
}

/** The operation clashes with existing state (a taken name, a changed version). */
export class ConflictError extends DomainError {
  constructor(message: string, metadata: ErrorMetadata = null) {
    super('conflict', message, metadata);
  }
}

/**
 * A name or place is held by a write that has not finished: one still running, or one whose
 * process stopped before it wrote what the hold stands for. Nothing tells the two apart before
 * the hold lapses (docs/operating.md, "Per-organization limits"), so the refusal says when that
 * is: `free_at` in the metadata, an ISO 8601 time rounded up to the second. A 409 (docs/reference.md#the-common-error-body).
 */
export class UnfinishedWriteError extends ConflictError {
  /** @param held what is held, as the start of a sentence: `The slug "team" is held`. */
  constructor(held: string, freeAt: Date) {
    const at = new Date(Math.ceil(freeAt.getTime() / 1000) * 1000).toISOString();
    super(`${held} by a write that has not finished: free again at ${at} unless that write completes`, { free_at: at });
  }
}

/** The request is larger than the operation takes. */
export class PayloadTooLargeError extends DomainError {
  constructor(message: string) {
    super('payload_too_large', message);
  }
}

/** The request body is not in the media type the operation reads (a JSON body sent as a form). */
export class UnsupportedMediaTypeError extends DomainError {
  constructor(message: string) {
    super('unsupported_media_type', message);
  }
}

/**
 * Too many requests from one address (docs/reference.md#oauth-errors, docs/reference.md#limits): the metadata, and the protocol's
 * `Retry-After`, say when to retry.
 */
export class TooManyRequestsError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('rate_limited', message, { retry_after_seconds: retryAfterSeconds });
  }
}

/**
 * A spending limit leaves no room for the request (docs/limits.md): a workspace budget, a
 * guardrail budget or the key's own limit, named in the message and the metadata with when it
 * resets. A 402, as the public API answers what a payment would fix.
 */
export class SpendingLimitError extends DomainError {
  constructor(message: string, metadata: ErrorMetadata) {
    super('payment_required', message, metadata);
  }
}

/** A dependency the operation needs is not available in this deployment. */
export class UnavailableError extends DomainError {
  constructor(message: string) {
    super('unavailable', message);
  }
}

/** A provider the request was sent to refused it, answered badly, or could not be reached. */
export class UpstreamError extends DomainError {
  constructor(kind: 'invalid_input' | 'rate_limited' | 'unavailable' | 'upstream_failed' | 'upstream_timeout', message: string) {
    super(kind, message);
  }
}

/** An input field that failed validation, named in the message and the metadata. */
export function invalidParameter(name: string, reason: string): InvalidInputError {
  return new InvalidInputError(`Invalid ${name}: ${reason}`, { parameter: name });
}
