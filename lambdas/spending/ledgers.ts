import type { SpendScope } from './limits';

/**
 * The ledgers of spending limits (docs/architecture.md, "Spending limits"): one per limit
 * and period. A ledger holds what it has `committed`: spend already settled, plus holds granted
 * to containers, each of which spends its hold on its own and tells the ledger nothing until the
 * hold lapses. A grant lands only while what is committed plus the grant stays within the limit,
 * so the limits hold however many containers spend at once.
 *
 * Holds are counted by when they were granted: every hold granted in one {@link HOLD_BUCKET_SECONDS}
 * bucket (by one writer epoch) is one amount, and what the holders spent under it is written to
 * spend items of that bucket. Once no request reserved under the bucket's holds can still be
 * running ({@link foldableAt}), the bucket's hold is replaced by what its spend items add up to.
 */

/** A ledger and the period it counts. */
export interface LedgerRef {
  ledger: string;
  period: string;
}

/** The holds granted in one bucket by one writer epoch. */
export interface HoldRef {
  bucket: number;
  /** `-` in AWS (any container); the process's start locally, so a restart frees the holds of the process before it. */
  epoch: string;
}

/** A ledger as read: what it has committed, what of that is settled spend, its holds by bucket, and the completions it started with in flight. */
export interface LedgerState {
  committed: string;
  settled: string;
  holds: Array<{ hold: HoldRef; amount: string }>;
  flight?: Flight;
}

/**
 * The completions of a ledger's scope that were running when the ledger started, let in without
 * it (lambdas/spending/in-flight.ts): counted in `committed` at their estimates until none of them
 * can still be running, then replaced by what they cost.
 */
export interface Flight {
  /** The first and last bucket of the scope's spend items that were read. */
  from: number;
  to: number;
  /** Their estimates: what the spend items' `flight` added up to. */
  amount: string;
  /** What the same items' `total` held of completions that had ended: in the usage the ledger started at. */
  ended: string;
}

/** Where a new ledger starts: what its scope spent in the period as usage recorded it, and what was in flight. */
export interface LedgerStart {
  spent: string;
  flight?: Flight;
}

/** One spend item's sums: the estimates of its completions still running, every completion's estimate or cost, and one ledger's sum. */
export interface SpendItemSums {
  hold: HoldRef;
  flight: string;
  total: string;
  ledger: string;
}

/** A hold asked of a ledger: how much, under which amount of the limit, in which bucket, with what the holder gives back. */
export interface Grant {
  ref: LedgerRef;
  /** The limit's amount, USD: the grant lands only while committed − giveBack + amount stays within it. */
  limitUsd: string;
  amount: string;
  hold: HoldRef;
  /** The unspent part of the holder's previous hold, given back in the same write. */
  giveBack?: { hold: HoldRef; amount: string };
  /**
   * Asked while the fleet may be meeting the ledger together (a limit just set, an amount just
   * lowered: lambdas/spending/herds.ts): through the holder's branch, where the store has them.
   */
  branched?: boolean;
}

/** Whether a grant landed, with the ledger as it then stands. */
export type GrantOutcome =
  /**
   * `before`: the ledger as the grant found it (undefined: the grant created it); both undefined
   * where the hold was taken from a branch (lambdas/aws/dynamo-ledger-branches.ts), the ledger's
   * item not written.
   */
  | { granted: true; before: LedgerState | undefined; after: LedgerState | undefined }
  /**
   * `state`: the ledger as it stands (undefined: it does not exist yet). `cap`: the limit's amount
   * as its last change wrote it on the ledger's item ({@link LedgerStore.grant}).
   */
  | { granted: false; state: LedgerState | undefined; cap?: string }
  /** The ledger's partition was past its throughput: nothing was written. */
  | { granted: false; busy: true };

/** What one request spent: its estimate written ahead, then the difference of its cost, before its completion is acknowledged. */
export interface SpendEntry {
  scope: SpendScope;
  hold: HoldRef;
  /** The writer's spend shard of the scope. */
  shard: number;
  /** USD by ledger and period (`spendAttribute`), and by {@link FLIGHT_ATTRIBUTE} and {@link TOTAL_ATTRIBUTE}. */
  amounts: ReadonlyMap<string, string>;
}

/** Where the ledgers and spend items are kept: the usage table in AWS (lambdas/aws/dynamo-ledgers.ts). */
export interface LedgerStore {
  /** How many spend shards each kind of scope has: {@link SPEND_SHARDS} in AWS; locally a few. */
  readonly spendShards: Readonly<Record<SpendScope['kind'], number>>;
  /**
   * One conditional write. A ledger that does not exist is created at `start` (what the scope spent
   * in the period before the limit began to count it, and what was in flight) when `start` is
   * given; without it, a grant on a missing ledger is refused with `state` undefined. A grant asked
   * under an amount above the item's `cap` (the amount a change of the limit wrote there in its
   * own transaction) is refused with the cap: the asker read the limit before the change.
   */
  grant(grant: Grant, start?: LedgerStart): Promise<GrantOutcome>;
  /** Creates the ledger at `start` unless it exists; false when it did. */
  seed(ref: LedgerRef, start: LedgerStart): Promise<boolean>;
  /** The ledger read eventually consistently: a refusal's recheck. */
  read(ref: LedgerRef): Promise<LedgerState | undefined>;
  /** Adds each amount (an estimate written ahead, a charge's difference from it) to its scope's spend item for the hold it was reserved under. */
  spend(entries: readonly SpendEntry[]): Promise<void>;
  /**
   * Replaces a lapsed hold (`amount`, as read) by what was spent under it, read from every spend
   * shard of `scope`; false when the hold had changed (another writer folded it).
   */
  fold(ref: LedgerRef, scope: SpendScope, hold: HoldRef, amount: string): Promise<boolean>;
  /** Every spend item of the scope in buckets `from` to `to`, read strongly consistently, with `ref`'s sum in each when given. */
  spendItems(scope: SpendScope, from: number, to: number, ref?: LedgerRef): Promise<SpendItemSums[]>;
  /** Replaces the ledger's flight (as read) by `spent`, what its completions cost; false when it had changed (another writer did). */
  settleFlight(ref: LedgerRef, flight: Flight, spent: string): Promise<boolean>;
}

/** Holds are counted in buckets of this many seconds of their grant. */
export const HOLD_BUCKET_SECONDS = 30;
/** A container spends a hold for this long after its grant, then asks for another. */
export const HOLD_SECONDS = 240;
/** The inference function's timeout (lib/modelgate.ts): no completion runs longer. */
export const INFERENCE_TIMEOUT_SECONDS = 300;
/** How long after a hold's last use a request reserved under it may still be running: the inference timeout and a margin. */
export const RUNNING_REQUEST_SECONDS = INFERENCE_TIMEOUT_SECONDS + 30;

/** When the holds of `hold`'s bucket may be folded: no request reserved under them can still be running. */
export function foldableAt(hold: HoldRef): number {
  return ((hold.bucket + 1) * HOLD_BUCKET_SECONDS + HOLD_SECONDS + RUNNING_REQUEST_SECONDS) * 1000;
}

/** The hold bucket an instant falls in. */
export function bucketOf(at: Date): number {
  return Math.floor(at.getTime() / 1000 / HOLD_BUCKET_SECONDS);
}

/** The partition-key prefix of every ledger item (`BUDGET#<ledger>`): what management may write to start one. */
export const LEDGER_PREFIX = 'BUDGET#';

/** The spend item attribute that adds up the estimates of its completions still running: written ahead, taken back once usage recorded the completion. */
export const FLIGHT_ATTRIBUTE = 'flight';
/** The spend item attribute that adds up what every completion of it spent: its estimate written ahead, then its cost. */
export const TOTAL_ATTRIBUTE = 'total';

/** The attribute a spend item counts a ledger's period in. */
export const spendAttribute = (ref: LedgerRef): string => `${ref.ledger}|${ref.period}`;

/**
 * How many spend shards a scope's writers spread over: a key takes 10,000 completions a second, a
 * workspace 100,000 (its own limited keys' 50,000 and as many more of an organization's traffic in
 * it), each completion two writes (its estimate written ahead, then its charge), limited or not.
 */
export const SPEND_SHARDS: Readonly<Record<SpendScope['kind'], number>> = { key: 64, workspace: 512 };

/** Whether two refs name the same bucket of the same writer epoch. */
export const sameHold = (a: HoldRef, b: HoldRef): boolean => a.bucket === b.bucket && a.epoch === b.epoch;
