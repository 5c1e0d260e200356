import { SpendingLimitError } from '../errors';
import type { BudgetLayer } from './layers';
import { periodAt } from './periods';
import { ZERO, compare } from '../usd';

/**
 * The 402 of a layer without room for a request: which layer, its cap, what is left, what the
 * request may cost and when the layer resets, in the message and the metadata alike.
 */
export function refusal(layer: BudgetLayer, at: Date, estimate: string, room: string): SpendingLimitError {
  const resetsAt = periodAt(layer.window, at).resetsAt?.toISOString() ?? null;
  const left = compare(room, ZERO) > 0 ? room : ZERO;
  const when = resetsAt ? `; it resets at ${resetsAt}` : '; it does not reset';
  return new SpendingLimitError(
    `Spending limit reached: ${layer.description} of ${layer.amountUsd} USD has ${left} USD left, and this request may cost up to ${estimate} USD${when}`,
    { layer: layer.kind, id: layer.id, interval: layer.interval, limit_usd: Number(layer.amountUsd), remaining_usd: Number(left), request_max_cost_usd: Number(estimate), resets_at: resetsAt },
  );
}

/**
 * The 402 of a request whose cost nothing bounds (a variable price) under a layer: a limit can
 * hold only what can be estimated, so such a request is refused under any limit, saying why.
 */
export function unboundedRefusal(layer: BudgetLayer, reason: string): SpendingLimitError {
  return new SpendingLimitError(`Spending limit in force: ${layer.description} admits only requests whose cost can be bounded, and ${reason}`, {
    layer: layer.kind,
    id: layer.id,
    interval: layer.interval,
    limit_usd: Number(layer.amountUsd),
    reason: 'cost_not_bounded',
  });
}
