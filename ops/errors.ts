import { DomainError } from '../lambdas/errors';

/** Bad usage: unknown command, missing or invalid arguments. Exit code 2, with the usage. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The operation could not be done (unreachable target, rejected import). Exit code 1. */
export class OperationError extends Error {
  readonly exitCode = 1;
  constructor(
    message: string,
    /** Further lines printed under the message, e.g. one per rejected model. */
    readonly details: readonly string[] = [],
  ) {
    super(message);
    this.name = 'OperationError';
  }
}

/** Exit status of a command that did its work. */
export const EXIT_OK = 0;
/** Exit status of an {@link OperationError}. */
export const EXIT_FAILED = 1;
/** Exit status of a {@link UsageError}. */
export const EXIT_USAGE = 2;

/**
 * The one place where errors from the accounts service become CLI errors: invalid input is
 * a bad argument (exit 2), with the API's field name replaced by the command's flag
 * (`Invalid expires_at: ...` → `Invalid --expires: ...`); not found and conflicts are
 * failures (exit 1).
 */
export function translateServiceError(error: unknown, flags: Readonly<Record<string, string>> = {}): unknown {
  if (!(error instanceof DomainError)) return error;
  if (error.kind !== 'invalid_input') return new OperationError(error.message);
  const parameter = error.metadata?.parameter;
  const flag = typeof parameter === 'string' ? flags[parameter] : undefined;
  const prefix = `Invalid ${String(parameter)}:`;
  return new UsageError(flag && error.message.startsWith(prefix) ? `Invalid ${flag}:${error.message.slice(prefix.length)}` : error.message);
}
