/**
 * The error hierarchy of every non-OAuth route (SPEC 7.1). One serializer,
 * {@link toErrorResponse}, turns any thrown value into the `{error: {code, message, metadata}}`
 * body; anything that is not an {@link ApiError} becomes a 500 without detail.
 */
export type ErrorMetadata = Record<string, unknown> | null;

export class ApiError extends Error {
  /** Only client errors carry their message to the caller. */
  get expose(): boolean {
    return this.status < 500;
  }

  constructor(
    readonly status: number,
    message: string,
    readonly metadata: ErrorMetadata = null,
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

export class UnauthorizedError extends ApiError {
  constructor(message: string) {
    super(401, message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Resource not found') {
    super(404, message);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, message);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, message);
  }
}

/**
 * A failure of a service the gateway depends on (502 bad upstream answer, 503 nothing to
 * route to, 504 upstream timeout): the caller may retry, so the message is shown.
 */
export class UpstreamError extends ApiError {
  override get expose(): boolean {
    return true;
  }

  constructor(status: 502 | 503 | 504, message: string) {
    super(status, message);
  }
}

/** A request field that failed validation: 400 naming the field. */
export function invalidParameter(name: string, reason: string): BadRequestError {
  return new BadRequestError(`Invalid ${name}: ${reason}`, { parameter: name });
}

export interface ErrorBody {
  error: { code: number; message: string; metadata?: ErrorMetadata };
}

export function toErrorBody(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof ApiError && error.expose) {
    const body: ErrorBody = { error: { code: error.status, message: error.message } };
    if (error.metadata) body.error.metadata = error.metadata;
    return { status: error.status, body };
  }
  return { status: 500, body: { error: { code: 500, message: 'Internal Server Error' } } };
}
