import { systemClock, systemRandom, writerEpoch, writerStopped, type Clock, type Random } from '../clock';
import { UnavailableError } from '../errors';
import { BUSY_MEMORY_SECONDS, busyLedger, refusal } from './refusal';
import { HOLD_SECONDS, bucketOf, foldableAt, sameHold, type LedgerStore, type HoldRef, type LedgerRef, type LedgerStart, type LedgerState } from './ledgers';
import { flightLapsed, settleFlight, startWithFlight } from './in-flight';
import { HERD_HOLD_JITTER, HerdMemory } from './herds';
import { startsFromSpend, type SpendingLimit, type SpendScope } from './limits';
import { grantedWithin, refKey, roomIn, scopeKey, spendEntries, type GrantAsk, type Hold, type HoldSet, type Refusal, type ScopeHolds } from './holds';
import { NOTHING_RESERVED, setAside, type Reservation } from './reservation';
import { periodAt, type SpendWindow } from './periods';
import { ZERO, atMost, compare, larger, minus, plus, smaller, times } from '../usd';

/**
 * What a scope spent in a window's current period as usage records it: the start of a ledger for
 * a limit that began to count the scope during the period.
 */
export type SpendBefore = (scope: SpendScope, window: SpendWindow, at: Date) => Promise<string>;

/** What the gate works with: the ledgers, what usage says a scope spent before its ledger began, and the clock and randomness tests pin. */
export interface SpendingGateDeps {
  ledgers: LedgerStore;
  spendBefore: SpendBefore;
  clock?: Clock;
  /** Chooses this container's spend shards. */
  random?: Random;
  /**
   * Locally, the process's start: its holds are counted apart from those of earlier processes,
   * which no longer run, so a restart frees what they held at once. Absent in AWS, where any
   * container may still be running a request until the holds lapse.
   */
  writersSince?: Date;
}

/** How often one request may find the room it was granted taken by the container's other requests. */
const MAX_ROUNDS = 1000;
/**
 * A refusal is remembered this long, and up to {@link REFUSAL_SPREAD_SECONDS} more at random,
 * before the ledger is read again. A changed limit is not remembered against.
 */
export const REFUSAL_MEMORY_SECONDS = 30;
/** So a fleet refused together reads the ledger again spread over a minute: 100,000 containers, about 830 read units a second. */
export const REFUSAL_SPREAD_SECONDS = 60;
/**
 * How long before a window resets a container takes its first hold of the next period, each at
 * a moment of its own in that time, so the fleet's first grants of a period spread over it
 * rather than landing together at the reset: as long as a hold lasts, so the period's grants
 * come at the rate of the fleet's renewals (100,000 containers: about 420 a second).
 */
export const AHEAD_OF_RESET_SECONDS = HOLD_SECONDS;
/** A hold's first size, in requests' estimates; later ones follow what the previous hold used. */
const FIRST_HOLD_ESTIMATES = '4';
/** No hold is larger than this share of what the ledger had left, so containers share the room. */
const ROOM_SHARE = '0.125';
/** A renewed hold is this many times what the previous one used. */
const GROWTH = '1.5';

/**
 * Reservations against spending limits (docs/limits.md, "Glossary"; docs/architecture.md,
 * "Spending limits"). A request is let in only when its estimate fits what this container holds
 * of every limit's ledger, after what its requests in flight have reserved; the container asks a
 * ledger for a hold only when it runs short, so most requests read nothing and meet no condition
 * before they start. Its estimate is written ahead to its scopes' spend items, then its cost in
 * its place ({@link Reservation}).
 *
 * A ledger grants a hold only while everything committed stays within the limit, so no mix of
 * containers and requests in flight can spend beyond it: a request's cost can exceed its
 * reservation only by its estimate's error.
 */
export class SpendingGate {
  private readonly ledgers: LedgerStore;
  private readonly spendBefore: SpendBefore;
  private readonly clock: Clock;
  private readonly epoch: string;
  private readonly writersSince?: Date;
  private readonly shards: Readonly<Record<SpendScope['kind'], number>>;
  private readonly scopes = new Map<string, ScopeHolds>();
  private readonly refusals = new Map<string, Refusal>();
  /** Ledgers past their throughput, by ledger: until when they are left alone. */
  private readonly busy = new Map<string, number>();
  private readonly random: Random;
  /** Where in the {@link AHEAD_OF_RESET_SECONDS} before a reset this container takes its next period's holds. */
  private readonly aheadAt: number;
  /** Next periods' ledgers this container has asked ahead, by ledger and period. */
  private readonly ahead = new Set<string>();
  private readonly herds = new HerdMemory();

  constructor(deps: SpendingGateDeps) {
    this.ledgers = deps.ledgers;
    this.spendBefore = deps.spendBefore;
    this.clock = deps.clock ?? systemClock;
    const random = deps.random ?? systemRandom;
    this.random = random;
    const { key, workspace } = deps.ledgers.spendShards;
    this.shards = { key: Math.min(key - 1, Math.floor(random() * key)), workspace: Math.min(workspace - 1, Math.floor(random() * workspace)) };
    this.aheadAt = random();
    this.writersSince = deps.writersSince;
    this.epoch = writerEpoch(deps.writersSince);
  }

  /**
   * Reserves `estimate` (USD) on every limit, in order, or refuses with the first limit that has
   * no room for it ({@link SpendingLimitError}). `at` dates the request: it picks each window's
   * period. `scopes`: every scope of the request (requestScopes, limits.ts), whose spend items
   * count it in flight whether a limit counts them or not (lambdas/spending/in-flight.ts).
   */
  async reserve(limits: readonly SpendingLimit[], estimate: string, at: Date, scopes: readonly SpendScope[] = []): Promise<Reservation> {
    // A request that costs nothing (a free model; a router's variable price counts as nothing, as in usage) fits any limit.
    if (compare(estimate, ZERO) <= 0) return NOTHING_RESERVED;
    if (limits.length === 0) return this.track(scopes, estimate);
    const wanted = limits.map((limit) => ({ limit, ref: { ledger: limit.ledger, period: periodAt(limit.window, at).id } }));
    const waiting = new Set<ScopeHolds>();
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const held = wanted.map(({ limit, ref }) => this.holdOf(limit, ref));
        const short = wanted.findIndex((_, i) => held[i] === undefined || !atMost(estimate, roomIn(held[i]!)));
        if (short < 0) {
          this.holdAhead(limits, estimate, at);
          const parts = wanted.map(({ limit }, i) => ({ scope: limit.scope, hold: held[i]!, ref: this.scopeHolds(limit.scope).current!.hold }));
          const alone = { scopes, hold: this.holdNow() };
          return setAside(parts, estimate, (change) => this.ledgers.spend(spendEntries(parts, change, this.shards, alone)));
        }
        // Limits in order: the first without room is asked for more, and refuses when its ledger has none.
        const { limit, ref } = wanted[short]!;
        const holds = this.scopeHolds(limit.scope);
        if (!waiting.has(holds)) {
          waiting.add(holds);
          holds.demand = plus(holds.demand, estimate);
        }
        await this.obtain(limit, ref, estimate, at);
      }
    } finally {
      for (const holds of waiting) holds.demand = minus(holds.demand, estimate);
    }
    throw new UnavailableError('Too many requests of this container competed for the same spending limit; retry the request');
  }

  /**
   * An unlimited request's estimate, counted in flight on its scopes' spend items (written ahead,
   * then its cost once its usage is recorded): no limit is asked, and a limit set while it runs
   * starts with it (lambdas/spending/in-flight.ts).
   */
  track(scopes: readonly SpendScope[], estimate: string): Reservation {
    if (scopes.length === 0 || compare(estimate, ZERO) <= 0) return NOTHING_RESERVED;
    const alone = { scopes, hold: this.holdNow() };
    return setAside([], estimate, (change) => this.ledgers.spend(spendEntries([], change, this.shards, alone)));
  }

  /** The bucket and writer epoch of now: where a scope no hold counts writes its spend. */
  private holdNow(): HoldRef {
    return { bucket: bucketOf(this.clock.now()), epoch: this.epoch };
  }

  /**
   * In the last {@link AHEAD_OF_RESET_SECONDS} of a window's period, at this container's moment,
   * asks each limit's ledger of the next period for a hold, in the background: at the reset its
   * requests find room already held, and the fleet's grants of the new period have been spread.
   */
  private holdAhead(limits: readonly SpendingLimit[], estimate: string, at: Date): void {
    const now = this.clock.now().getTime();
    for (const limit of limits) {
      const resetsAt = periodAt(limit.window, at).resetsAt?.getTime();
      if (resetsAt === undefined || now >= resetsAt || now < resetsAt - AHEAD_OF_RESET_SECONDS * 1000 * (1 - this.aheadAt)) continue;
      const next = new Date(resetsAt);
      const ref: LedgerRef = { ledger: limit.ledger, period: periodAt(limit.window, next).id };
      const key = refKey(ref);
      if (this.ahead.has(key) || this.holdOf(limit, ref)) continue;
      if (this.ahead.size > 1000) this.ahead.clear();
      this.ahead.add(key);
      // A refusal or a failure ahead changes nothing: the reset asks again as it would have.
      void this.obtain(limit, ref, estimate, next).catch(() => undefined);
    }
  }

  /**
   * This container's current hold of the ledger, while its set is usable and it fits the limit's
   * amount: granted under it or a lower one (a raise sends no container back to the ledger until
   * it runs short), or under a higher one that the change found within the new amount, with every
   * other hold of the period (`heldAtChange`). A hold the change found no room for is given up and
   * the ledger remembered as refusing: the fleet reads it again spread over a minute, rather than
   * all asking it at once.
   */
  private holdOf(limit: SpendingLimit, ref: LedgerRef): Hold | undefined {
    const current = this.scopeHolds(limit.scope).current;
    const now = this.clock.now().getTime();
    if (!current || current.usableUntil <= now) return undefined;
    const key = refKey(ref);
    const hold = current.holds.get(key);
    if (!hold || grantedWithin(hold, limit.amountUsd)) return hold;
    const held = limit.heldAtChange;
    if (held?.periods.includes(ref.period) && held.fit) {
      hold.limitUsd = limit.amountUsd;
      return hold;
    }
    // Lowered under the hold: every container that held the ledger asks it again.
    this.herds.together(ref, now);
    if (!held?.periods.includes(ref.period)) return undefined;
    current.holds.delete(key);
    this.refusals.set(key, { until: this.refusalEnds(now), limitUsd: limit.amountUsd, room: ZERO });
    return undefined;
  }

  private scopeHolds(scope: SpendScope): ScopeHolds {
    const key = scopeKey(scope);
    let holds = this.scopes.get(key);
    if (!holds) this.scopes.set(key, (holds = { used: new Map(), demand: ZERO }));
    return holds;
  }

  /**
   * Gets this container room for `estimate` on the limit's ledger, one renewal per scope at a
   * time: a request that finds one running waits for it and checks again.
   */
  private async obtain(limit: SpendingLimit, ref: LedgerRef, estimate: string, at: Date): Promise<void> {
    const holds = this.scopeHolds(limit.scope);
    if (holds.renewing) {
      await holds.renewing.catch(() => undefined);
      return;
    }
    // Set before anything is awaited, and cleared as it settles: one renewal of the scope at a time.
    const renewal: Promise<void> = this.checkRemembered(limit, ref, estimate, at)
      .then(() => this.renew(holds, limit, ref, estimate, at))
      .finally(() => {
        if (holds.renewing === renewal) holds.renewing = undefined;
      });
    holds.renewing = renewal;
    await renewal;
  }

  /**
   * A new hold set of the scope in the current bucket, or more in the current one: the wanted
   * ledger first, then every other ledger this container held of the scope in the same period,
   * each giving back what it had left of its previous hold.
   */
  private async renew(holds: ScopeHolds, limit: SpendingLimit, ref: LedgerRef, estimate: string, at: Date): Promise<void> {
    const now = this.clock.now().getTime();
    const holdRef: HoldRef = { bucket: bucketOf(new Date(now)), epoch: this.epoch };
    const previous = holds.current;
    const sameSet = previous !== undefined && sameHold(previous.hold, holdRef) && previous.usableUntil > now;
    const branched = this.herds.branched(limit, ref, now);
    const life = HOLD_SECONDS * 1000 * (branched ? 1 - HERD_HOLD_JITTER * this.random() : 1);
    const into: HoldSet = sameSet ? previous : { hold: holdRef, usableUntil: now + life, holds: new Map() };
    const others = previous && !sameSet ? [...previous.holds.values()].filter((hold) => refKey(hold.ref) !== refKey(ref)) : [];
    const asked = { previous, into, holds, at };
    const granted = await this.grant({ ...asked, ref, window: limit.window, scope: limit.scope, limitUsd: limit.amountUsd, estimate, whenShort: { refuse: limit }, branched });
    if (!sameSet) {
      for (const hold of previous?.holds.values() ?? []) holds.used.set(refKey(hold.ref), plus(hold.charged, hold.reserved));
      // eslint-disable-next-line require-atomic-updates -- a scope's renewals run one at a time (obtain): nothing else set it meanwhile.
      holds.current = into;
    }
    if (!granted) return;
    // The scope's other ledgers of the same period follow into the new set, so a request's charge is one write per scope.
    await Promise.all(
      others.map(async (hold) => {
        if (hold.ref.period !== periodAt(hold.window, at).id) return;
        await this.grant({ ...asked, ref: hold.ref, window: hold.window, scope: hold.scope, limitUsd: hold.limitUsd, estimate: ZERO, whenShort: 'skip', branched }).catch(() => undefined);
      }),
    );
  }

  /**
   * One ledger's grant into `ask.into`: a hold sized from what the last one used, at least the
   * estimate and no more than a share of the room; when the ledger has less, the estimate alone;
   * lapsed holds folded when they are in the way. True when granted; when even the estimate does
   * not fit, `ask.whenShort` says whether to refuse or return false.
   */
  private async grant(ask: GrantAsk): Promise<boolean> {
    const { ref, limitUsd, estimate, previous, into, holds, at, scope, window } = ask;
    const refuse = ask.whenShort === 'skip' ? undefined : ask.whenShort.refuse;
    const key = refKey(ref);
    const before = previous?.holds.get(key);
    const now = this.clock.now().getTime();
    // What is left of the previous hold goes back in the same write, while it cannot have been folded.
    const giveBack =
      before && previous !== into && grantedWithin(before, limitUsd) && now < foldableAt(previous!.hold) - HOLD_SECONDS * 1000
        ? { hold: previous!.hold, amount: roomIn(before) }
        : undefined;
    const back = giveBack && compare(giveBack.amount, ZERO) > 0 ? giveBack : undefined;
    // What this request lacks: the estimate, less what the current hold still has when the grant adds to it.
    const current = previous === into ? into.holds.get(key) : undefined;
    const leftover = current && grantedWithin(current, limitUsd) ? roomIn(current) : ZERO;
    const need = compare(leftover, ZERO) > 0 ? minus(estimate, leftover) : estimate;
    let amount = larger(larger(need, holds.demand), times(holds.used.get(key) ?? times(estimate, FIRST_HOLD_ESTIMATES), GROWTH));
    let base: LedgerStart | undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      if (compare(amount, ZERO) <= 0) return false;
      const outcome = await this.ledgers.grant({ ref, limitUsd, amount, hold: into.hold, ...(back ? { giveBack: back } : {}), ...(ask.branched ? { branched: true } : {}) }, base);
      if ('busy' in outcome) {
        this.busy.set(key, now + BUSY_MEMORY_SECONDS * 1000 * (1 + this.random()));
        this.herds.together(ref, now);
        if (!refuse) return false;
        throw busyLedger();
      }
      if (outcome.granted) {
        if (back && before) before.granted = minus(before.granted, back.amount);
        const hold = into.holds.get(key);
        if (hold && grantedWithin(hold, limitUsd)) {
          hold.granted = plus(hold.granted, amount);
          hold.limitUsd = limitUsd;
        } else into.holds.set(key, { scope, ref, window, limitUsd, granted: amount, reserved: ZERO, charged: ZERO });
        this.refusals.delete(key);
        // The first grant of a bucket folds what has lapsed, so a ledger holds a few buckets at most.
        if (outcome.before && outcome.after && !outcome.before.holds.some((h) => sameHold(h.hold, into.hold))) await this.foldLapsed(ref, scope, outcome.after);
        return true;
      }
      // The limit was changed after this container read it: its amount is the ledger's cap.
      if (outcome.cap !== undefined && !atMost(limitUsd, outcome.cap)) return this.grant({ ...ask, limitUsd: outcome.cap });
      const state = outcome.state;
      if (!state) {
        if (base !== undefined || !refuse) return false;
        base = await this.startOf(refuse, at);
        continue;
      }
      const room = plus(minus(limitUsd, state.committed), back?.amount ?? ZERO);
      if (atMost(need, room)) {
        // Room for this request but not the hold asked (or taken meanwhile): what it needs and a share of the rest.
        amount = larger(need, smaller(amount, times(room, ROOM_SHARE)));
        continue;
      }
      if (await this.foldLapsed(ref, scope, state)) continue;
      if (!refuse) return false;
      const left = plus(room, leftover);
      this.refusals.set(key, { until: this.refusalEnds(now), limitUsd, room: left });
      this.herds.together(ref, now);
      throw refusal(refuse, at, estimate, left);
    }
    // Contended: the caller looks again.
    return false;
  }

  /** Folds every hold of the ledger that can no longer be spent under, and its flight once none of it can be running; true when one was. */
  private async foldLapsed(ref: LedgerRef, scope: SpendScope, state: LedgerState): Promise<boolean> {
    const now = this.clock.now().getTime();
    const lapsed = state.holds.filter(({ hold }) => this.lapsed(hold, now));
    const folded = await Promise.all([
      ...lapsed.map(({ hold, amount }) => this.ledgers.fold(ref, scope, hold, amount)),
      ...(state.flight && flightLapsed(state.flight, now) ? [settleFlight(this.ledgers, ref, scope, state.flight)] : []),
    ]);
    return folded.some(Boolean);
  }

  private lapsed(hold: HoldRef, now: number): boolean {
    if (now >= foldableAt(hold)) return true;
    // Locally, holds of a process that has stopped: its epoch is its start.
    return writerStopped(hold.epoch, this.writersSince);
  }

  /** When a refusal remembered at `now` ends: {@link REFUSAL_MEMORY_SECONDS}, and up to {@link REFUSAL_SPREAD_SECONDS} more at random. */
  private refusalEnds(now: number): number {
    return now + (REFUSAL_MEMORY_SECONDS + REFUSAL_SPREAD_SECONDS * this.random()) * 1000;
  }

  /**
   * A remembered refusal stands for {@link REFUSAL_MEMORY_SECONDS} or more under the same amount of the limit, for requests
   * no smaller; then the ledger is read (eventually consistent, half a read unit) before it is
   * asked again, so a key past its limit costs each container one read per interval, not a write
   * per request.
   */
  private async checkRemembered(limit: SpendingLimit, ref: LedgerRef, estimate: string, at: Date): Promise<void> {
    const key = refKey(ref);
    const now = this.clock.now().getTime();
    const busyUntil = this.busy.get(key);
    if (busyUntil !== undefined && busyUntil > now) throw busyLedger();
    this.busy.delete(key);
    const remembered = this.refusals.get(key);
    if (!remembered) return;
    if (remembered.limitUsd !== limit.amountUsd) {
      this.refusals.delete(key);
      return;
    }
    if (remembered.until > now) {
      if (!atMost(estimate, remembered.room)) throw refusal(limit, at, estimate, remembered.room);
      return;
    }
    const state = await this.ledgers.read(ref);
    const room = state ? minus(limit.amountUsd, state.committed) : limit.amountUsd;
    if (atMost(estimate, room) || !state || state.holds.some(({ hold }) => this.lapsed(hold, now)) || (state.flight && flightLapsed(state.flight, now))) {
      this.refusals.delete(key);
      return;
    }
    this.refusals.set(key, { until: this.refusalEnds(now), limitUsd: limit.amountUsd, room });
    this.herds.together(ref, now);
    throw refusal(limit, at, estimate, room);
  }

  /**
   * Where a new ledger starts: nothing, when the limit has counted the scope since the period
   * began (or since the scope itself began); else what the scope has spent in the period so far,
   * and what it has in flight.
   */
  private async startOf(limit: SpendingLimit, at: Date): Promise<LedgerStart> {
    if (!startsFromSpend(limit, at)) return { spent: ZERO };
    return startWithFlight(this.ledgers, limit.scope, this.clock.now(), () => this.spendBefore(limit.scope, limit.window, at), this.writersSince);
  }
}
