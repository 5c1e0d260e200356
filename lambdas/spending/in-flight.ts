import { writerStopped } from '../clock';
import { HOLD_SECONDS, RUNNING_REQUEST_SECONDS, bucketOf, foldableAt, type Flight, type LedgerRef, type LedgerStart, type LedgerStore } from './ledgers';
import type { SpendScope } from './limits';
import { ZERO, compare, larger, minus, plus } from '../usd';

/**
 * Completions in flight when a limit starts to count their scope (docs/limits.md, "What holds").
 * Every completion with a cost writes its estimate ahead to each of its scopes' spend items, a
 * limited one beside its ledgers' sums and an unlimited one on its own, under `flight` and
 * `total`; once its usage is recorded, `flight` gives the estimate back and `total` takes its cost
 * in its place. A ledger that starts from what its scope spent reads the spend items of every
 * bucket a running completion may have written to, then the usage: it starts at that usage plus
 * the estimates still in flight ({@link startWithFlight}). Once none of those can still be
 * running, the estimates are replaced by what they cost ({@link settleFlight}).
 */

/**
 * The buckets a completion running at `at` may have written its estimate to: its hold was
 * granted at most {@link HOLD_SECONDS} before it began, and it began at most
 * {@link RUNNING_REQUEST_SECONDS} before `at`.
 */
export function flightRange(at: Date): { from: number; to: number } {
  return { from: bucketOf(new Date(at.getTime() - (HOLD_SECONDS + RUNNING_REQUEST_SECONDS) * 1000)), to: bucketOf(at) };
}

/**
 * Reads what the scope has in flight at `at`, then (never before: a completion recorded between
 * the two reads is counted twice, never missed) what it spent, with `spentBefore`.
 */
export async function startWithFlight(
  ledgers: Pick<LedgerStore, 'spendItems'>,
  scope: SpendScope,
  at: Date,
  spentBefore: () => Promise<string>,
  writersSince?: Date,
): Promise<LedgerStart> {
  const startAt = await readFlight(ledgers, scope, at, writersSince);
  return startAt(await spentBefore());
}

/**
 * What the scope has in flight at `at`, as the start of a ledger at what the scope spent, which
 * is to be read after this resolves. Locally, the items of a process that has stopped
 * (`writersSince`) hold no running completion.
 */
export async function readFlight(ledgers: Pick<LedgerStore, 'spendItems'>, scope: SpendScope, at: Date, writersSince?: Date): Promise<(spent: string) => LedgerStart> {
  const { from, to } = flightRange(at);
  const items = await ledgers.spendItems(scope, from, to);
  let amount = ZERO;
  let total = ZERO;
  for (const item of items) {
    total = plus(total, item.total);
    if (!writerStopped(item.hold.epoch, writersSince)) amount = plus(amount, item.flight);
  }
  if (compare(amount, ZERO) <= 0) return (spent) => ({ spent });
  const flight = { from, to, amount, ended: minus(total, amount) };
  return (spent) => ({ spent, flight });
}

/** Whether none of a flight's completions can still be running. */
export function flightLapsed(flight: Flight, now: number): boolean {
  return now >= foldableAt({ bucket: flight.to, epoch: '-' });
}

/**
 * Replaces a lapsed flight by what its completions cost: what the same spend items' `total` now
 * adds up to, less what had ended before the ledger started (in its usage) and less what
 * completions under the ledger's own holds spent there (its holds' folds count them). A completion
 * that died is counted at its estimate, as its `total` kept it. False when another writer settled it.
 */
export async function settleFlight(ledgers: Pick<LedgerStore, 'spendItems' | 'settleFlight'>, ref: LedgerRef, scope: SpendScope, flight: Flight): Promise<boolean> {
  const items = await ledgers.spendItems(scope, flight.from, flight.to, ref);
  const spent = minus(minus(plus(ZERO, ...items.map((item) => item.total)), flight.ended), plus(ZERO, ...items.map((item) => item.ledger)));
  return ledgers.settleFlight(ref, flight, larger(spent, ZERO));
}
