import { SpendingLimitError, TooManyRequestsError } from '../errors';
import type { SpendingLimit } from './limits';
import { periodAt } from './periods';
import { ZERO, compare } from '../usd';

/**
 * The 402 of a limit without room for a request: which limit, its amount, what is left, what the
 * request may cost and when the limit resets, in the message and the metadata alike.
 */
export function refusal(limit: SpendingLimit, at: Date, estimate: string, room: string): SpendingLimitError {
  const resetsAt = periodAt(limit.window, at).resetsAt?.toISOString() ?? null;
  const left = compare(room, ZERO) > 0 ? room : ZERO;
  const when = resetsAt ? `; it resets at ${resetsAt}` : '; it does not reset';
  return new SpendingLimitError(
    `Spending limit reached: ${limit.description} of ${limit.amountUsd} USD has ${left} USD left, and this request may cost up to ${estimate} USD${when}`,
    { layer: limit.kind, id: limit.id, interval: limit.interval, limit_usd: Number(limit.amountUsd), remaining_usd: Number(left), request_max_cost_usd: Number(estimate), resets_at: resetsAt },
  );
}

/**
 * The 402 of a request whose cost nothing bounds (a variable price) under a limit: a limit can
 * hold only what can be estimated, so such a request is refused under any limit, saying why.
 */
export function unboundedRefusal(limit: SpendingLimit, reason: string): SpendingLimitError {
  return new SpendingLimitError(`Spending limit in force: ${limit.description} admits only requests whose cost can be bounded, and ${reason}`, {
    layer: limit.kind,
    id: limit.id,
    interval: limit.interval,
    limit_usd: Number(limit.amountUsd),
    reason: 'cost_not_bounded',
  });
}

/**
 * A ledger found past its throughput is left alone this long, and a little more at random, so
 * the containers that met it together do not come back together: their requests meanwhile are
 * answered 429 with this `Retry-After`, from memory.
 */
export const BUSY_MEMORY_SECONDS = 1;

/** The answer while a ledger is past its throughput: a retry shortly, never a server error. */
export function busyLedger(): TooManyRequestsError {
  return new TooManyRequestsError('Too many requests are checking this spending limit at once; retry shortly', BUSY_MEMORY_SECONDS);
}
