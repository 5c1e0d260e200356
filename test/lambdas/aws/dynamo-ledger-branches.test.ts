import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoLedgers } from '../../../lambdas/aws/dynamo-ledgers';
import { branchKey, ledgerKey } from '../../../lambdas/aws/dynamo-ledger-keys';
import { LedgerBranches, roomAttribute } from '../../../lambdas/aws/dynamo-ledger-branches';
import { DynamoItems } from '../../../lambdas/aws/dynamo-items';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { SpendingLimitError } from '../../../lambdas/errors';
import { HOLD_BUCKET_SECONDS, bucketOf, foldableAt, type LedgerRef } from '../../../lambdas/spending/ledgers';
import type { SpendingLimit } from '../../../lambdas/spending/limits';
import { SpendingGate } from '../../../lambdas/spending/spending-gate';
import { BRANCHED_SECONDS } from '../../../lambdas/spending/herds';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { FixedClock } from '../../support/fixed-clock';
import { interceptSend } from '../../support/intercepted-client';
import { HERD_BRANCH_WRITES, HERD_REFILLS } from '../../support/scale-scenarios';

const TABLE = TABLE_SCHEMAS.usage.localName;
const ESTIMATE = '0.001';
let sequence = 0;

/** A key's limit set at `since`: young (asked through branches) for ten minutes after it. */
function keyLimit(amountUsd: string, since: Date): SpendingLimit {
  const hash = `branched${++sequence}`;
  return {
    kind: 'key_limit',
    id: hash,
    ledger: `K#${hash}#2026-01-01T00:00:00.000Z`,
    scope: { kind: 'key', organizationId: 'org-1', keyHash: hash },
    window: 'all',
    interval: 'lifetime',
    amountUsd,
    since: since.toISOString(),
    scopeCreatedAt: '2026-01-01T00:00:00.000Z',
    description: "the key's limit",
  };
}

/**
 * Ledgers in two tiers (docs/architecture.md, "Spending limits"): a fleet whose containers all
 * ask a new ledger for their first holds at once takes them from the ledger's branches, and the
 * ledger's own item takes a few refills; the limit holds as it does on one item.
 */
describe("a ledger's branches", () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  const writes = new Map<string, number>();
  let counted: Awaited<ReturnType<typeof startEmbeddedTables>>['documentClient'];
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    counted = interceptSend(tables.documentClient, async (command, send) => {
      const pk = (command.input.Key as { pk?: string } | undefined)?.pk;
      if (command.constructor.name === 'UpdateCommand' && pk?.startsWith('BUDGET#')) writes.set(pk, (writes.get(pk) ?? 0) + 1);
      return send();
    });
  });
  afterAll(() => tables.stop());

  const ledgerOf = (limit: SpendingLimit): LedgerRef => ({ ledger: limit.ledger, period: 'all' });
  /** `containers` containers, each with its own gate and its own branch of `branches` (none: every grant on the ledger's item). */
  const fleet = (containers: number, branches: number, clock: FixedClock) =>
    Array.from({ length: containers }, (_, i) => {
      const draw = () => (i + 0.5) / containers;
      return new SpendingGate({ ledgers: new DynamoLedgers(counted, TABLE, { branches, random: draw }), spendBefore: async () => '0', clock, random: draw });
    });
  const writesOn = (limit: SpendingLimit) => {
    const pk = ledgerKey(ledgerOf(limit)).pk;
    return { ledger: writes.get(pk) ?? 0, branches: [...writes].filter(([key]) => key.startsWith(`${pk}#`)).map(([, count]) => count) };
  };
  const seed = (limit: SpendingLimit) => new DynamoLedgers(tables.documentClient, TABLE).seed(ledgerOf(limit), { spent: '0' });
  const itemOf = async (key: { pk: string; sk: string }) => (await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: key }))).Item;

  it("takes a fleet's first holds at once from the branches: the ledger's item takes a few refills, not a write a container", async () => {
    const clock = new FixedClock();
    const containers = 48;
    const [branched, alone] = [keyLimit('1', clock.now()), keyLimit('1', clock.now())];
    for (const [limit, branches] of [[branched, 4], [alone, 0]] as const) {
      const gates = fleet(containers, branches, clock);
      // The ledger started, as management seeds it when a limit is set.
      await seed(limit);
      const reservations = await Promise.all(gates.map((gate) => gate.reserve([limit], ESTIMATE, clock.now())));
      await Promise.all(reservations.map((reservation) => reservation.charge(ESTIMATE)));
    }
    const [withBranches, without] = [writesOn(branched), writesOn(alone)];
    expect(without.ledger).toBeGreaterThanOrEqual(containers);
    // Each branch refills a few times (chunks doubling from four holds), one container at a time.
    expect(withBranches.branches).toHaveLength(4);
    expect(withBranches.ledger).toBeLessThanOrEqual(6 * 4);
    expect(withBranches.ledger * 5).toBeLessThan(without.ledger);
    const ledger = (await new DynamoLedgers(tables.documentClient, TABLE).read(ledgerOf(branched)))!;
    expect(Number(ledger.committed)).toBeLessThanOrEqual(1);
  });

  it('costs a branch about one write a container when the fleet arrives over a moment rather than at one instant', async () => {
    const clock = new FixedClock();
    const containers = 64;
    // Room for each branch's second chunk to take what is left of its containers.
    const limit = keyLimit('100', clock.now());
    const gates = fleet(containers, 4, clock);
    await seed(limit);
    await Promise.all(
      gates.map(async (gate, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 4));
        await (await gate.reserve([limit], ESTIMATE, clock.now())).charge(ESTIMATE);
      }),
    );
    const { ledger, branches } = writesOn(limit);
    const perContainer = branches.reduce((sum, count) => sum + count, 0) / containers;
    expect(perContainer).toBeLessThanOrEqual(HERD_BRANCH_WRITES);
    // Two refills a branch: four holds, then half its share of what the ledger had left.
    expect(ledger).toBeLessThanOrEqual(HERD_REFILLS * 4);
  });

  it('is asked through branches only while its limit is young, or after its amount was lowered under the holds out or it refused', async () => {
    const clock = new FixedClock();
    const [gate] = fleet(1, 4, clock);
    const admit = async (limit: SpendingLimit) => (await gate!.reserve([limit], ESTIMATE, clock.now())).charge(ESTIMATE);
    const branchWrites = (limit: SpendingLimit) => writesOn(limit).branches.reduce((sum, count) => sum + count, 0);
    // Set an hour ago: on the ledger's item alone.
    const settled = keyLimit('1', new Date(clock.now().getTime() - 3600_000));
    await admit(settled);
    expect(branchWrites(settled)).toBe(0);
    expect(writesOn(settled).ledger).toBeGreaterThan(0);
    // Lowered under the hold this container has: every container holding it asks again, so through a branch.
    await admit({ ...settled, amountUsd: '0.5' });
    expect(branchWrites(settled)).toBeGreaterThan(0);
    // Set now: through a branch, until it is no longer young.
    const young = keyLimit('1', clock.now());
    await admit(young);
    const taken = branchWrites(young);
    expect(taken).toBeGreaterThan(0);
    clock.advance(BRANCHED_SECONDS * 1000);
    await admit(young);
    expect(branchWrites(young)).toBe(taken);
    // Refused: the fleet refused together asks together once there is room (here, a raise).
    const tight = keyLimit('0.0015', new Date(clock.now().getTime() - 3600_000));
    await admit(tight);
    await expect(admit(tight)).rejects.toThrow(SpendingLimitError);
    expect(branchWrites(tight)).toBe(0);
    await admit({ ...tight, amountUsd: '1' });
    expect(branchWrites(tight)).toBeGreaterThan(0);
  });

  it('never lets a fleet on branches overrun a limit, however the room is spread over them', async () => {
    const clock = new FixedClock();
    const limit = keyLimit('0.05', clock.now());
    const gates = fleet(8, 4, clock);
    let next = 0;
    let admitted = 0;
    const worker = async (w: number) => {
      while (next < 200) {
        const i = next++;
        try {
          const reservation = await gates[(i + w) % gates.length]!.reserve([limit], ESTIMATE, clock.now());
          admitted++;
          await new Promise((resolve) => setImmediate(resolve));
          await reservation.charge(ESTIMATE);
        } catch (error) {
          if (!(error instanceof SpendingLimitError)) throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: 64 }, (_, w) => worker(w)));
    expect(admitted).toBeLessThanOrEqual(50);
    // Room left in branches and holds at the refusals: at most half of what was left when each took it.
    expect(admitted).toBeGreaterThanOrEqual(25);
    const ledger = (await new DynamoLedgers(tables.documentClient, TABLE).read(ledgerOf(limit)))!;
    expect(Number(ledger.committed)).toBeLessThanOrEqual(0.05);
  });

  it('hands out room granted under an amount only to holds asked under it or a higher one', async () => {
    const clock = new FixedClock();
    const limit = keyLimit('1', clock.now());
    const hold = { bucket: bucketOf(clock.now()), epoch: '-' };
    const ledgers = new DynamoLedgers(counted, TABLE, { branches: 1 });
    const ask = (limitUsd: string) => ledgers.grant({ ref: ledgerOf(limit), limitUsd, amount: ESTIMATE, hold, branched: true }, { spent: '0' });
    await expect(ask('1')).resolves.toMatchObject({ granted: true });
    const branch = branchKey(ledgerOf(limit), 0);
    expect((await itemOf(branch))?.[roomAttribute(hold)]).toBe(0.004);
    const before = writesOn(limit).ledger;
    // A raise: the room granted under 1 fits 2, and the ledger's item is not written.
    await expect(ask('2')).resolves.toMatchObject({ granted: true, before: undefined });
    expect(writesOn(limit).ledger).toBe(before);
    // A lowered amount: the room granted under 1 is not handed out under 0.5; the ledger is asked, and the branch's room is what it granted under 0.5.
    await expect(ask('0.5')).resolves.toMatchObject({ granted: true });
    expect(writesOn(limit).ledger).toBeGreaterThan(before);
    const committed = Number((await ledgers.read(ledgerOf(limit)))!.committed);
    // The ledger committed the first refill (0.005), this hold and its chunk: the branch's room is that chunk alone.
    expect(await itemOf(branch)).toMatchObject({ under: 0.5, [roomAttribute(hold)]: expect.closeTo(committed - 0.006, 9) });
    expect(committed).toBeLessThanOrEqual(0.5);
  });

  it('gives what a branch did not hand out of a bucket back to the ledger at its first refill of the next', async () => {
    const clock = new FixedClock();
    const limit = keyLimit('1', clock.now());
    const ledgers = new DynamoLedgers(counted, TABLE, { branches: 1 });
    const first = { bucket: bucketOf(clock.now()), epoch: '-' };
    const ask = (hold: typeof first) => ledgers.grant({ ref: ledgerOf(limit), limitUsd: '1', amount: ESTIMATE, hold, branched: true }, { spent: '0' });
    await ask(first);
    // The hold and a chunk of four: the branch keeps 0.004 of the first bucket.
    expect((await ledgers.read(ledgerOf(limit)))!.committed).toBe('0.005');
    await ask({ ...first, bucket: first.bucket + 1 });
    const ledger = (await ledgers.read(ledgerOf(limit)))!;
    expect(ledger.holds).toEqual(expect.arrayContaining([{ hold: first, amount: '0.001' }, { hold: { ...first, bucket: first.bucket + 1 }, amount: '0.005' }]));
    expect(ledger.committed).toBe('0.006');
    const second = { ...first, bucket: first.bucket + 1 };
    const branch = branchKey(ledgerOf(limit), 0);
    expect(Object.keys((await itemOf(branch))!).filter((name) => name.startsWith('room:'))).toEqual([roomAttribute(second)]);
    // A renewal taken from the branch leaves what its holder did not use of the first bucket on the branch, not the ledger's item.
    const before = writesOn(limit).ledger;
    await ledgers.grant({ ref: ledgerOf(limit), limitUsd: '1', amount: ESTIMATE, hold: second, giveBack: { hold: first, amount: '0.0004' }, branched: true });
    expect(writesOn(limit).ledger).toBe(before);
    expect(await itemOf(branch)).toMatchObject({ [roomAttribute(first)]: 0.0004, [roomAttribute(second)]: 0.003 });
    // The next bucket's refill gives both back to the ledger's holds of their buckets.
    await ask({ ...first, bucket: first.bucket + 2 });
    const after = (await ledgers.read(ledgerOf(limit)))!;
    expect(after.holds).toEqual(expect.arrayContaining([{ hold: first, amount: '0.0006' }, { hold: second, amount: '0.002' }]));
  });

  it("takes over a claim its container left, and asks the ledger alone after waiting out another container's refills", async () => {
    let now = Date.now();
    const limit = keyLimit('1', new Date(now));
    const ref = ledgerOf(limit);
    await seed(limit);
    const hold = { bucket: bucketOf(new Date(now)), epoch: '-' };
    const onLedger = new DynamoLedgers(counted, TABLE);
    // One branch, with a clock and waits of the test's own: each wait moves the clock on by a tenth of a second.
    const branches = new LedgerBranches(new DynamoItems(counted, TABLE), (grant, start) => onLedger.grant(grant, start), 1, {
      now: () => now,
      sleep: async () => {
        now += 100;
      },
    });
    const ask = () => branches.grant({ ref, limitUsd: '1', amount: ESTIMATE, hold, branched: true }, undefined);
    const claimOf = async (until: number) => tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: { ...branchKey(ref, 0), refillBy: 'a container gone', refillUntil: until } }));
    // A claim that lapsed: taken over, and the branch refilled.
    await claimOf(now - 1);
    await expect(ask()).resolves.toMatchObject({ granted: true });
    expect((await itemOf(branchKey(ref, 0)))?.[roomAttribute(hold)]).toBe(0.004);
    // A claim that stays (its container hung): waited on for twice its life, then the hold alone from the ledger.
    await claimOf(now + 3_600_000);
    const [before, started] = [writesOn(limit).ledger, now];
    await expect(ask()).resolves.toMatchObject({ granted: true });
    expect(now - started).toBeGreaterThanOrEqual(4000);
    expect(writesOn(limit).ledger).toBe(before + 1);
    expect((await itemOf(branchKey(ref, 0)))?.[roomAttribute(hold)]).toBeUndefined();
  });

  it("folds a bucket as before: what its branches' holders spent is counted, what the branches did not hand out lapses", async () => {
    const clock = new FixedClock();
    const limit = keyLimit('1', clock.now());
    const gates = fleet(6, 2, clock);
    for (const gate of gates) await (await gate.reserve([limit], ESTIMATE, clock.now())).charge('0.0004');
    const ledgers = new DynamoLedgers(tables.documentClient, TABLE);
    const held = (await ledgers.read(ledgerOf(limit)))!;
    expect(Number(held.committed)).toBeGreaterThan(6 * 0.001);
    clock.set(new Date(foldableAt({ bucket: bucketOf(clock.now()), epoch: '-' }) + HOLD_BUCKET_SECONDS * 1000));
    // The next bucket's first refill folds the lapsed one.
    await (await gates[0]!.reserve([limit], ESTIMATE, clock.now())).charge(ESTIMATE);
    const folded = (await ledgers.read(ledgerOf(limit)))!;
    expect(folded.settled).toBe('0.0024');
    expect(folded.holds).toHaveLength(1);
  });
});
