import type { OpenCompletion, OpenCompletions } from '../spending/open-completions';
import type { CostBound } from '../spending/estimate';
import { unboundedRefusal } from '../spending/refusal';
import type { Reservation } from '../spending/reservation';
import type { SpendingGate } from '../spending/spending-gate';
import { requestScopes, type SpendingLimit } from '../spending/limits';
import { UnavailableError } from '../errors';
import { ZERO, compare } from '../usd';
import { openCompletion } from './open-completion';

/**
 * What a completion holds from its admission to its end (docs/limits.md, "Leaving early and
 * failures"): its reservation on its limits, and its open completion, which the rollup records
 * should its function die before it ends.
 */

/** Where unexpected errors go: names and messages only, never a request body or header. */
export interface ErrorLogger {
  error(message: string, fields: Record<string, unknown>): void;
}

/** Which invocation a logged failure belongs to. */
type Context = { awsRequestId: string };

/** What a request asks of its hold: the bound of its cost, what its open completion is made of (open-completion.ts), and where failures go. */
export interface HoldAsk {
  bound: CostBound;
  asked: Omit<Parameters<typeof openCompletion>[0], 'estimate'>;
  deps: HoldingDeps;
  context: Context | undefined;
}

/** What holding a completion uses: the spending gate, where completions are kept open, the log. */
export interface HoldingDeps {
  spending: Pick<SpendingGate, 'reserve' | 'track'>;
  openCompletions: OpenCompletions;
  logger: ErrorLogger;
}

/** What went wrong with a usage write, by name and message: never the request. */
export function logFailure(deps: Pick<HoldingDeps, 'logger'>, context: Context | undefined, message: string, error: Error): void {
  deps.logger.error(message, { requestId: context?.awsRequestId, error: error.name, detail: error.message });
}

/** A request's reservation (nothing reserved without a limit), and its open completion when it has one. */
export interface Held {
  reservation: Reservation;
  opened: OpenCompletion | undefined;
  /** An unlimited request's put, beside its provider's call: whether the completion was kept open. No byte of the answer is relayed before it settles. */
  opening?: Promise<boolean>;
}

/** What a request holds once admitted: its reservation, written ahead beside its open completion ({@link reserveAhead}); without a limit, the open completion alone ({@link keepOpen}). */
export async function holdCompletion(limits: readonly SpendingLimit[], ask: HoldAsk): Promise<Held | undefined> {
  return limits.length > 0 ? reserveAhead(limits, ask) : keepOpen(ask);
}

/**
 * The request's reservation on its limits (a 402 from the first without room, or under a limit
 * for a cost nothing bounds), its estimate written ahead to every limit's spend items before a
 * provider is asked, and the completion kept open beside it: a function that dies before the
 * request ends leaves it charged, and recorded by the rollup (docs/limits.md, "Leaving early and
 * failures"). A failed write releases it, asks no provider and is a 503.
 */
async function reserveAhead(limits: readonly SpendingLimit[], { bound, asked, deps, context }: HoldAsk): Promise<Held> {
  if (!bound.bounded) throw unboundedRefusal(limits[0]!, bound.reason);
  const reservation = await deps.spending.reserve(limits, bound.cost, asked.at, requestScopes(asked.principal));
  // Nothing reserved (a request that costs nothing, so no endpoint is the bound's): nothing to charge, nothing to record should it die.
  if (compare(reservation.estimate, ZERO) <= 0 || !bound.endpoint) return { reservation, opened: undefined };
  const opened = openCompletion({ ...asked, estimate: { cost: reservation.estimate, promptCost: bound.promptCost, endpoint: bound.endpoint } });
  const written = await Promise.allSettled([reservation.writeAhead(), deps.openCompletions.open(opened)]);
  const failure = written.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure) {
    logFailure(deps, context, 'spend not written ahead', failure.reason as Error);
    await Promise.allSettled([reservation.release(), deps.openCompletions.close(opened)]);
    throw new UnavailableError('The request could not be counted against its spending limits, and no provider was asked; retry the request');
  }
  return { reservation, opened };
}

/**
 * An unlimited request's open completion, at the most it could cost on the endpoint whose bound
 * that is, put beside its provider's call (no limit waits for it; the answer's first byte does):
 * a function that dies after the put leaves it to the rollup, which records it so. Beside it, the
 * same estimate is written ahead to its scopes' spend items, so a limit set while it runs counts
 * it (lambdas/spending/in-flight.ts). A failed write is logged and the request goes on; a request
 * no bound covers, or that costs nothing, is kept open nowhere.
 */
function keepOpen({ bound, asked, deps, context }: HoldAsk): Held | undefined {
  if (!bound.bounded || !bound.endpoint || compare(bound.cost, ZERO) <= 0) return undefined;
  const opened = openCompletion({ ...asked, estimate: { cost: bound.cost, promptCost: bound.promptCost, endpoint: bound.endpoint } });
  const reservation = deps.spending.track(requestScopes(asked.principal), bound.cost);
  const put = deps.openCompletions.open(opened).then(
    () => true,
    (error: Error) => {
      logFailure(deps, context, 'open completion not kept', error);
      return false;
    },
  );
  const ahead = reservation.writeAhead().catch((error: Error) => logFailure(deps, context, 'spend in flight not written ahead', error));
  return { reservation, opened, opening: Promise.all([put, ahead]).then(([kept]) => kept) };
}

/**
 * A request at its end. Its reservation, when the request ended before its charge (a
 * charged one is left as it is): given back when no provider answered, else charged its estimate,
 * as written ahead. Its open completion is closed once its usage was recorded or no provider
 * answered, which the answer's end need not wait for (`closing`; a failure is logged);
 * else it is left for the rollup, which records it at its estimate, as its limits charged it.
 */
export async function settleHeld(
  held: Held,
  ended: { answered: boolean; counted: boolean },
  deps: Pick<HoldingDeps, 'openCompletions' | 'logger'>,
  context: Context | undefined,
): Promise<{ closing?: Promise<void> }> {
  await settleUncharged(held.reservation, ended.answered, deps, context);
  const { opened, opening } = held;
  if (!opened) return {};
  const leftOpen = ended.answered && !ended.counted;
  const settle = async (kept: boolean) => {
    if (kept && !leftOpen) await deps.openCompletions.close(opened).catch((error: Error) => logFailure(deps, context, 'open completion not closed', error));
  };
  // An unlimited request's put may still be on its way: the invocation waits for it, then closes what it put (or leaves it open).
  return { closing: opening ? opening.then(settle) : settle(true) };
}

/**
 * The charge written to each scope's spend items once the usage write has landed, in place of the
 * estimate written ahead: never before it, so what a new limit reads of the scope counts the
 * completion in flight or in usage (lambdas/spending/in-flight.ts). A failed write leaves the
 * estimate charged, which covers the cost: it is logged and the answer goes on.
 */
export async function chargeLimits(reservation: Reservation, cost: string, deps: Pick<HoldingDeps, 'logger'>, context: Context | undefined): Promise<void> {
  try {
    await reservation.charge(cost);
  } catch (error) {
    logFailure(deps, context, 'spend not recorded; its estimate stays charged', error as Error);
  }
}

/** A reservation its request left uncharged: released when no provider answered, else kept at its estimate, in flight (nothing more to write). */
async function settleUncharged(reservation: Reservation, answered: boolean, deps: Pick<HoldingDeps, 'logger'>, context: Context | undefined): Promise<void> {
  try {
    if (answered) reservation.keep();
    else await reservation.release();
  } catch (error) {
    logFailure(deps, context, 'spend written ahead not given back', error as Error);
  }
}
