import { DomainError, type DomainErrorKind, type ErrorMetadata } from '../errors';

/**
 * The HTTP boundary of every non-OAuth route (SPEC 7.1). One serializer,
 * {@link toErrorBody}, turns any thrown value into the `{error: {code, message, metadata}}`
 * body: domain errors by their kind, {@link ApiError} (the few errors that only exist in
 * HTTP: an unreadable body, a per-address rate limit) by its status; anything else becomes a
 * 500 without detail.
 */
export type { ErrorMetadata } from '../errors';

/** SPEC 7.1 status of each domain error kind. */
export const STATUS_OF_KIND: Readonly<Record<DomainErrorKind, number>> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  unavailable: 503,
  upstream_failed: 502,
  upstream_timeout: 504,
};

/** An error of the HTTP layer itself (request body parsing), with its status. */
export class ApiError extends Error {
  /** Only client errors carry their message to the caller. */
  get expose(): boolean {
    return this.status < 500;
  }

  constructor(
    readonly status: number,
    message: string,
    readonly metadata: ErrorMetadata = null,
    /** Headers the answer carries, e.g. `Retry-After`. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, metadata: ErrorMetadata = null) {
    super(400, message, metadata);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, message);
  }
}

/** Too many requests from one address (SPEC 7.2, 8); `Retry-After` and the metadata say when to retry. */
export class TooManyRequestsError extends ApiError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, message, { retry_after_seconds: retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  }
}

export interface ErrorBody {
  error: { code: number; message: string; metadata?: ErrorMetadata };
}

export function toErrorBody(error: unknown): { status: number; body: ErrorBody; headers?: Readonly<Record<string, string>> } {
  const known =
    error instanceof DomainError
      ? { status: STATUS_OF_KIND[error.kind], message: error.message, metadata: error.metadata }
      : error instanceof ApiError && error.expose
        ? { status: error.status, message: error.message, metadata: error.metadata }
        : undefined;
  if (!known) return { status: 500, body: { error: { code: 500, message: 'Internal Server Error' } } };
  const body: ErrorBody = { error: { code: known.status, message: known.message } };
  if (known.metadata) body.error.metadata = known.metadata;
  const headers = error instanceof ApiError && Object.keys(error.headers).length > 0 ? error.headers : undefined;
  return headers ? { status: known.status, body, headers } : { status: known.status, body };
}
