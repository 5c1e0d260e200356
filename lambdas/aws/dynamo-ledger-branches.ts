import { randomUUID } from 'node:crypto';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { foldableAt, type Grant, type GrantOutcome, type HoldRef, type LedgerRef, type LedgerStart } from '../spending/ledgers';
import { ZERO, atMost, compare, larger, minus, negate, plus, smaller, times } from '../usd';
import { isThrottling, isTransactionConflict, type DynamoItems } from './dynamo-items';
import { branchKey, bucketAttribute, bucketOfAttribute, holdAttribute, ledgerKey } from './dynamo-ledger-keys';
import { decimal } from './dynamo-usage-store';

/**
 * Ledgers in two tiers (docs/architecture.md, "Spending limits", "Branches"): a container takes
 * its holds from one of its ledger's **branches**, `BUDGET#<ledger>#<branch>` / `<period>`, with
 * one conditional `ADD` on the branch's room of the hold's bucket (`room:<bucket>:<epoch>`), so a
 * fleet asking a ledger at once (a limit just set, its amount lowered) spreads over the branches.
 * A branch short of room is refilled by one container at a time (a claim on its item): that
 * container asks the ledger for its own hold and a **chunk** more as one hold of the same bucket,
 * then adds the chunk to the branch's room. The ledger's hold of the bucket so counts what the
 * branch hands out of it, its holders write their spend to the bucket's spend items, and the
 * bucket's fold is unchanged; what a branch kept of a bucket goes back with its next claim.
 */

/** How many branches each ledger has in AWS: a budget just set on a workspace at 50,000 completions a second takes 125 first holds a second on each. */
export const LEDGER_BRANCHES = 400;
/** A branch's first chunk of a bucket, in holds of the grant that refills it; the next ones are larger ({@link LedgerBranches.refill}). */
const FIRST_CHUNK_HOLDS = '4';
/** A container finding its branch refilled by another reads it again after this long (at most, at random). */
const REFILL_WAIT_MS = 50;
/**
 * A claim to refill a branch that was not released (its container gone) is taken over after this
 * long; a container that waited twice as long on refills of others asks the ledger for its hold alone.
 */
const REFILL_CLAIM_MS = 2000;
/** Branch items outlive their holds' fold by a day, as spend items do. */
const BRANCH_KEPT_SECONDS = 24 * 3600;
/** When a branch item written for a hold's bucket expires (DynamoDB's TTL, `expiresAt`). */
const expiresAt = (hold: HoldRef): number => Math.ceil(foldableAt(hold) / 1000) + BRANCH_KEPT_SECONDS;

/** A grant straight on the ledger's item, `maxCommitted` (when given) tightening its condition: what the store does without branches. */
export type DirectGrant = (grant: Grant, start: LedgerStart | undefined, maxCommitted?: string) => Promise<GrantOutcome>;

/** A container's branch of every ledger, and what it does there; `count` branches a ledger. */
export class LedgerBranches {
  private readonly branch: number;
  private readonly me = randomUUID();
  private readonly random: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly items: DynamoItems,
    private readonly direct: DirectGrant,
    private readonly count: number,
    options: { random?: () => number; sleep?: (ms: number) => Promise<void>; now?: () => number } = {},
  ) {
    const random = options.random ?? Math.random;
    this.branch = Math.min(count - 1, Math.floor(random() * count));
    this.random = random;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = options.now ?? Date.now;
  }

  /**
   * The grant from this container's branch: taken from its room when it has enough, else the
   * branch refilled (by this container, or by the one refilling it meanwhile), else, after
   * twice {@link REFILL_CLAIM_MS} of refills by others, asked of the ledger alone. A refusal is the ledger's.
   */
  async grant(grant: Grant, start: LedgerStart | undefined): Promise<GrantOutcome> {
    const key = branchKey(grant.ref, this.branch);
    const deadline = this.now() + 2 * REFILL_CLAIM_MS;
    // Read first (half a read unit, beside the item's writes): a branch without room costs a fleet no failed writes.
    let branch = await this.items.getItem(key, { consistent: false });
    for (;;) {
      if (hasRoom(branch, grant)) {
        const taken = await this.take(key, grant);
        if (taken === TAKEN) return TAKEN_FROM_BRANCH;
        branch = taken;
        continue;
      }
      const leftovers = await this.claim(key, branch, grant);
      if (leftovers) {
        await Promise.all(leftovers.map((left) => this.giveBack(grant.ref, left)));
        return this.refill(key, branch, grant, start);
      }
      if (this.now() >= deadline) return this.direct(grant, start);
      await this.sleep(REFILL_WAIT_MS * (0.5 + this.random() / 2));
      branch = await this.items.getItem(key, { consistent: false });
    }
  }

  /**
   * Takes the grant from the branch's room of its bucket; the branch as it was when it had too
   * little. What the holder gives back of its previous hold goes, in the same write, to the
   * branch's room of that hold's bucket, which no container takes from: the branch's next claim
   * gives it back to the ledger with the rest of that bucket's room, so a fleet renewing through
   * its branches writes nothing on the ledger's item for it.
   */
  private async take(key: BranchKey, grant: Grant): Promise<typeof TAKEN | Record<string, unknown> | undefined> {
    const room = roomAttribute(grant.hold);
    const back = grant.giveBack && compare(grant.giveBack.amount, ZERO) > 0 && roomAttribute(grant.giveBack.hold) !== room ? grant.giveBack : undefined;
    const answer = await this.items.write({
      Update: {
        Key: key,
        UpdateExpression: back ? 'ADD #room :taken, #back :back' : 'ADD #room :taken',
        ConditionExpression: '#room >= :amount AND #under <= :limit',
        ExpressionAttributeNames: { '#room': room, '#under': UNDER, ...(back ? { '#back': roomAttribute(back.hold) } : {}) },
        ExpressionAttributeValues: {
          ':taken': NumberValue.from(negate(grant.amount)),
          ':amount': NumberValue.from(grant.amount),
          ':limit': NumberValue.from(grant.limitUsd),
          ...(back ? { ':back': NumberValue.from(back.amount) } : {}),
        },
      },
    });
    return answer.written ? TAKEN : answer.item;
  }

  /**
   * Claims the branch's refill unless another container holds a claim still fresh, taking in
   * the same write what the branch has left of its older buckets (no container takes from them):
   * given back to the ledger's holds of those buckets, on condition that they still have it, so
   * what a branch did not hand out of a bucket does not wait for the bucket's fold. Undefined when
   * not claimed.
   */
  private async claim(key: BranchKey, branch: Record<string, unknown> | undefined, grant: Grant): Promise<Array<{ hold: HoldRef; amount: string }> | undefined> {
    const now = this.now();
    if (branch?.refillBy !== undefined && branch.refillBy !== this.me && Number(branch.refillUntil ?? 0) >= now) return undefined;
    const current = roomAttribute(grant.hold);
    const older = Object.keys(branch ?? {}).filter((name) => name.startsWith(ROOM_PREFIX) && name !== current);
    const names = Object.fromEntries(older.map((name, i) => [`#o${i}`, name]));
    const answer = await this.items.write({
      Update: {
        Key: key,
        UpdateExpression: `SET refillBy = :me, refillUntil = :until, expiresAt = :expires${older.length > 0 ? ` REMOVE ${Object.keys(names).join(', ')}` : ''}`,
        ConditionExpression: 'attribute_not_exists(refillUntil) OR refillUntil < :now OR refillBy = :me',
        ...(older.length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: { ':me': this.me, ':until': now + REFILL_CLAIM_MS, ':now': now, ':expires': expiresAt(grant.hold) },
        ReturnValues: 'UPDATED_OLD',
      },
    });
    if (!answer.written) return undefined;
    return Object.entries(answer.item ?? {}).flatMap(([name, value]) => {
      const hold = bucketOfAttribute(ROOM_PREFIX, name);
      return hold && name !== current && compare(decimal(value), ZERO) > 0 ? [{ hold, amount: decimal(value) }] : [];
    });
  }

  /**
   * The container's hold and a chunk more, as one grant on the ledger: the chunk the branch
   * recorded for the bucket (four holds at first; then twice the last, or half an even share of
   * what the ledger had left when that is more), and never above that share (half of what is
   * left, over the branches), so the branches together hold no more than half of what was left
   * when they took it. With no room for a chunk, the hold alone.
   */
  private async refill(key: BranchKey, branch: Record<string, unknown> | undefined, grant: Grant, start: LedgerStart | undefined): Promise<GrantOutcome> {
    const last = branch?.[chunkAttribute(grant.hold)];
    let chunk = last === undefined ? times(grant.amount, FIRST_CHUNK_HOLDS) : decimal(last);
    const back = grant.giveBack?.amount ?? ZERO;
    const share = String(1 / (2 * this.count));
    // Released by the fill; kept where the ledger is not started and was asked without its start, for this container to come back with it.
    let keepClaim = false;
    try {
      for (let attempt = 0; attempt < 2 && compare(chunk, ZERO) > 0; attempt++) {
        const total = plus(grant.amount, chunk);
        const maxCommitted = smaller(plus(minus(grant.limitUsd, total), back), plus(minus(grant.limitUsd, times(chunk, String(2 * this.count))), back));
        const outcome = await this.direct({ ...grant, amount: total }, start, maxCommitted);
        if (outcome.granted) {
          // The bucket's next chunk: twice this one, or half the share of what the ledger has left when that is more (other branches take meanwhile).
          const left = outcome.after ? times(minus(grant.limitUsd, outcome.after.committed), times(share, '0.5')) : ZERO;
          keepClaim = true;
          await this.fill(key, branch, grant, chunk, larger(times(chunk, '2'), left));
          return outcome;
        }
        if (!('state' in outcome) || outcome.state === undefined || outcome.cap !== undefined) {
          keepClaim = 'state' in outcome && outcome.state === undefined && start === undefined;
          return outcome;
        }
        const room = plus(minus(grant.limitUsd, outcome.state.committed), back);
        if (!atMost(grant.amount, room)) return outcome;
        chunk = smaller(chunk, times(minus(room, grant.amount), share));
      }
      return await this.direct(grant, start);
    } finally {
      if (!keepClaim) await this.release(key);
    }
  }

  /**
   * Adds the chunk to the branch's room of the bucket, recording the amount of the limit it was
   * granted under (`under`): a take asked under a lower amount finds none of it, and room granted
   * under a higher amount is dropped (it lapses with its bucket) before a lower one's is added.
   * The older buckets' chunks go (their room went with the claim).
   */
  private async fill(key: BranchKey, branch: Record<string, unknown> | undefined, grant: Grant, chunk: string, next: string): Promise<void> {
    const room = roomAttribute(grant.hold);
    const chunkName = chunkAttribute(grant.hold);
    const stale = Object.keys(branch ?? {}).filter((name) => name.startsWith(CHUNK_PREFIX) && name !== chunkName);
    const names: Record<string, string> = { '#room': room, '#chunk': chunkName, '#under': UNDER };
    stale.forEach((name, i) => (names[`#s${i}`] = name));
    const remove = ['refillBy', 'refillUntil', ...stale.map((_, i) => `#s${i}`)].join(', ');
    const values = { ':chunk': NumberValue.from(chunk), ':next': NumberValue.from(next), ':limit': NumberValue.from(grant.limitUsd), ':expires': expiresAt(grant.hold) };
    const set = 'SET #under = :limit, #chunk = :next, expiresAt = :expires';
    try {
      const added = await this.items.write({
        Update: { Key: key, UpdateExpression: `ADD #room :chunk ${set} REMOVE ${remove}`, ConditionExpression: 'attribute_not_exists(#under) OR #under <= :limit', ExpressionAttributeNames: names, ExpressionAttributeValues: values },
      });
      if (!added.written) {
        await this.items.write({ Update: { Key: key, UpdateExpression: `${set}, #room = :chunk REMOVE ${remove}`, ExpressionAttributeNames: names, ExpressionAttributeValues: values } });
      }
    } catch (error) {
      // The chunk is held on the ledger whether or not it reached the branch: unfilled, it lapses with its bucket.
      if (!isThrottling(error)) throw error;
    }
  }

  /** Lets the branch's next short container refill it, when this one's claim still stands. */
  private async release(key: BranchKey): Promise<void> {
    await this.items
      .write({ Update: { Key: key, UpdateExpression: 'REMOVE refillBy, refillUntil', ConditionExpression: 'refillBy = :me', ExpressionAttributeValues: { ':me': this.me } } })
      .catch((error: unknown) => {
        if (!isThrottling(error)) throw error;
      });
  }

  /**
   * Room a branch kept of an older bucket's hold, given back to the ledger's hold of that bucket
   * on condition that it still has it (it has not been folded). A give-back that fails leaves that
   * room to lapse with its bucket.
   */
  private async giveBack(ref: LedgerRef, left: { hold: HoldRef; amount: string }): Promise<void> {
    if (compare(left.amount, ZERO) <= 0) return;
    try {
      await this.items.write({
        Update: {
          Key: ledgerKey(ref),
          UpdateExpression: 'ADD committed :taken, #back :taken',
          ConditionExpression: '#back >= :amount',
          ExpressionAttributeNames: { '#back': holdAttribute(left.hold) },
          ExpressionAttributeValues: { ':taken': NumberValue.from(negate(left.amount)), ':amount': NumberValue.from(left.amount) },
        },
      });
    } catch (error) {
      if (!isThrottling(error) && !isTransactionConflict(error)) throw error;
    }
  }
}

type BranchKey = { pk: string; sk: string };

const TAKEN = Symbol('taken');
/** A grant taken from the branch: the ledger's item is not written, nor read. */
const TAKEN_FROM_BRANCH: GrantOutcome = { granted: true, before: undefined, after: undefined };

/** Whether the branch as read has room for the grant, granted under its amount or a lower one. */
function hasRoom(branch: Record<string, unknown> | undefined, grant: Grant): boolean {
  const room = branch?.[roomAttribute(grant.hold)];
  const under = branch?.[UNDER];
  return room !== undefined && under !== undefined && atMost(grant.amount, decimal(room)) && atMost(decimal(under), grant.limitUsd);
}

const UNDER = 'under';
const ROOM_PREFIX = 'room:';
const CHUNK_PREFIX = 'chunk:';

/** The branch attribute of the room it has left to hand out of one bucket's hold. */
export const roomAttribute = (hold: HoldRef): string => bucketAttribute(ROOM_PREFIX, hold);

/** The branch attribute of the next chunk it takes of one bucket. */
const chunkAttribute = (hold: HoldRef): string => bucketAttribute(CHUNK_PREFIX, hold);
