import { DynamoLedgers } from '../../../lambdas/aws/dynamo-ledgers';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { SpendingGate, REFUSAL_MEMORY_SECONDS, REFUSAL_SPREAD_SECONDS, type SpendBefore } from '../../../lambdas/spending/spending-gate';
import { BUSY_MEMORY_SECONDS } from '../../../lambdas/spending/refusal';
import type { Reservation } from '../../../lambdas/spending/reservation';
import { HOLD_BUCKET_SECONDS, HOLD_SECONDS, RUNNING_REQUEST_SECONDS } from '../../../lambdas/spending/ledgers';
import type { SpendingLimit, SpendScope } from '../../../lambdas/spending/limits';
import { periodAt, type SpendWindow } from '../../../lambdas/spending/periods';
import { SpendingLimitError, TooManyRequestsError } from '../../../lambdas/errors';
import { interceptSend } from '../../support/intercepted-client';
import { eventually } from '../../support/eventually';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { FixedClock } from '../../support/fixed-clock';

const TABLE = TABLE_SCHEMAS.usage.localName;
const ORG = 'org-1';
let sequence = 0;

function keyLimit(amountUsd: string, window: SpendWindow = 'all', overrides: Partial<SpendingLimit> = {}): SpendingLimit {
  const hash = `key${++sequence}`;
  const scope: SpendScope = { kind: 'key', organizationId: ORG, keyHash: hash };
  return {
    kind: 'key_limit',
    id: hash,
    ledger: `K#${hash}#2026-01-01T00:00:00.000Z`,
    scope,
    window,
    interval: window === 'all' ? 'lifetime' : window === 'day' ? 'daily' : window === 'week' ? 'weekly' : 'monthly',
    amountUsd,
    since: '2026-01-01T00:00:00.000Z',
    scopeCreatedAt: '2026-01-01T00:00:00.000Z',
    description: "the key's limit",
    ...overrides,
  };
}

const nothingBefore: SpendBefore = async () => '0';

/** Runs `count` requests, `concurrency` at a time, each over one of `gates`; returns how many were admitted. */
async function run(gates: SpendingGate[], limits: SpendingLimit[], count: number, concurrency: number, estimate: string, cost: string, at: () => Date) {
  let next = 0;
  let admitted = 0;
  const refusals: SpendingLimitError[] = [];
  const worker = async (w: number) => {
    while (next < count) {
      const i = next++;
      let reservation: Reservation;
      try {
        reservation = await gates[(i + w) % gates.length]!.reserve(limits, estimate, at());
      } catch (error) {
        if (!(error instanceof SpendingLimitError)) throw error;
        refusals.push(error);
        continue;
      }
      admitted++;
      await new Promise((resolve) => setImmediate(resolve));
      await reservation.charge(cost);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  return { admitted, refusals };
}

describe('the budget gate', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let ledgers: DynamoLedgers;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    ledgers = new DynamoLedgers(tables.documentClient, TABLE);
  });
  afterAll(() => tables.stop());

  const settled = async (limit: SpendingLimit, at: Date) => (await ledgers.read({ ledger: limit.ledger, period: periodAt(limit.window, at).id }))?.settled;
  const committed = async (limit: SpendingLimit, at: Date) => (await ledgers.read({ ledger: limit.ledger, period: periodAt(limit.window, at).id }))?.committed;

  it('admits exactly what fits at 64-way concurrency in one container, and never more', async () => {
    const clock = new FixedClock();
    const gate = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    const limit = keyLimit('0.05');
    const { admitted, refusals } = await run([gate], [limit], 200, 64, '0.001', '0.001', () => clock.now());
    expect(admitted).toBe(50);
    expect(refusals).toHaveLength(150);
    expect(refusals[0]!.metadata).toMatchObject({ layer: 'key_limit', limit_usd: 0.05 });
    expect(await committed(limit, clock.now())).toBe('0.05');
  });

  it('never lets containers together overrun a limit, and leaves at most one estimate per container unused', async () => {
    const clock = new FixedClock();
    const gates = Array.from({ length: 4 }, (_, i) => new SpendingGate({ ledgers, spendBefore: nothingBefore, clock, random: () => i / 4 }));
    const limit = keyLimit('0.05');
    const { admitted } = await run(gates, [limit], 200, 64, '0.001', '0.001', () => clock.now());
    expect(admitted).toBeLessThanOrEqual(50);
    expect(admitted).toBeGreaterThanOrEqual(50 - gates.length);
  });

  it('answers a herd on a throttled ledger with 429s from memory, one write per container, and admits again once it recovers', async () => {
    const clock = new FixedClock();
    let throttling = true;
    let updates = 0;
    // The ledger's partition past its throughput: DynamoDB's own error, after the SDK's retries.
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (command.constructor.name !== 'UpdateCommand') return send();
      updates++;
      if (!throttling) return send();
      throw Object.assign(new Error('The level of configured provisioned throughput for the table was exceeded'), { name: 'ProvisionedThroughputExceededException' });
    });
    const gate = new SpendingGate({ ledgers: new DynamoLedgers(client, TABLE), spendBefore: nothingBefore, clock, random: () => 0.5 });
    const limit = keyLimit('0.05');
    const answers = await Promise.allSettled(Array.from({ length: 64 }, () => gate.reserve([limit], '0.001', clock.now())));
    expect(answers.every((answer) => answer.status === 'rejected' && answer.reason instanceof TooManyRequestsError && answer.reason.retryAfterSeconds === BUSY_MEMORY_SECONDS)).toBe(true);
    expect(updates).toBe(1);
    await expect(gate.reserve([limit], '0.001', clock.now())).rejects.toThrow(TooManyRequestsError);
    expect(updates).toBe(1);
    throttling = false;
    clock.advance(BUSY_MEMORY_SECONDS * 1500 + 1);
    const reservation = await gate.reserve([limit], '0.001', clock.now());
    await reservation.charge('0.001');
    expect(updates).toBeGreaterThan(1);
  });

  it('keeps its holds across a raised cap: no container goes back to the ledger until it runs short', async () => {
    const clock = new FixedClock();
    let updates = 0;
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (command.constructor.name === 'UpdateCommand') updates++;
      return send();
    });
    const gate = new SpendingGate({ ledgers: new DynamoLedgers(client, TABLE), spendBefore: nothingBefore, clock });
    const limit = keyLimit('0.05');
    await (await gate.reserve([limit], '0.001', clock.now())).charge('0.001');
    const granted = updates;
    // The raise: the hold granted under 0.05 fits 0.10.
    const raised = { ...limit, amountUsd: '0.10' };
    for (let i = 0; i < 2; i++) (await gate.reserve([raised], '0.001', clock.now())).release();
    expect(updates).toBe(granted);
    // A lowered cap goes back to the ledger, whose condition holds the new cap.
    (await gate.reserve([{ ...limit, amountUsd: '0.02' }], '0.001', clock.now())).release();
    expect(updates).toBeGreaterThan(granted);
  });

  it("takes the next period's hold ahead of a daily reset, at the container's own moment, so the reset finds room held", async () => {
    const clock = new FixedClock(new Date('2026-11-21T23:55:00Z'));
    let updates = 0;
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (command.constructor.name === 'UpdateCommand') updates++;
      return send();
    });
    // This container's moment: halfway through the last four minutes, 23:58.
    const gate = new SpendingGate({ ledgers: new DynamoLedgers(client, TABLE), spendBefore: nothingBefore, clock, random: () => 0.5 });
    const limit = keyLimit('0.05', 'day');
    const reserveAndCharge = async () => (await gate.reserve([limit], '0.001', clock.now())).charge('0.001');
    await reserveAndCharge();
    clock.set('2026-11-21T23:57:50Z');
    await reserveAndCharge();
    expect(await committed(limit, new Date('2026-11-22T00:00:01Z'))).toBeUndefined();
    clock.set('2026-11-21T23:58:10Z');
    await reserveAndCharge();
    await eventually(async () => expect(await committed(limit, new Date('2026-11-22T00:00:01Z'))).toBeDefined());
    const before = updates;
    clock.set('2026-11-22T00:00:01Z');
    const reservation = await gate.reserve([limit], '0.001', clock.now());
    // Only the spend write: the new period's room was held already.
    await reservation.charge('0.001');
    expect(updates).toBe(before + 1);
  });

  it('starts a ledger near its cap at what the scope already spent, and refuses what does not fit on top of it', async () => {
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    // A daily limit set at 10:00 on a key that had spent 0.049 that morning.
    const limit = keyLimit('0.05', 'day', { since: '2026-11-21T10:00:00.000Z' });
    const spentBefore: SpendBefore = async () => '0.049';
    await expect(new SpendingGate({ ledgers, spendBefore: spentBefore, clock }).reserve([limit], '0.002', clock.now())).rejects.toThrow(SpendingLimitError);
    const reservation = await new SpendingGate({ ledgers, spendBefore: spentBefore, clock }).reserve([limit], '0.001', clock.now());
    await reservation.charge('0.001');
    expect(await committed(limit, clock.now())).toBe('0.05');
  });

  it("frees what a stopped container held once its holds lapse, charging what it spent", async () => {
    const clock = new FixedClock();
    const limit = keyLimit('0.01');
    const stopped = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    // Five requests reserve the whole limit; two end (0.0005 each), three are still running when the container stops.
    const admissions = await Promise.all(Array.from({ length: 5 }, () => stopped.reserve([limit], '0.002', clock.now())));
    await admissions[0]!.charge('0.0005');
    await admissions[1]!.charge('0.0005');
    const other = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    await expect(other.reserve([limit], '0.002', clock.now())).rejects.toThrow(SpendingLimitError);
    // Until no request admitted under the holds can be running, they stay committed.
    clock.advance((HOLD_SECONDS + RUNNING_REQUEST_SECONDS) * 1000);
    await expect(new SpendingGate({ ledgers, spendBefore: nothingBefore, clock }).reserve([limit], '0.002', clock.now())).rejects.toThrow(SpendingLimitError);
    clock.advance((HOLD_BUCKET_SECONDS + REFUSAL_MEMORY_SECONDS + REFUSAL_SPREAD_SECONDS) * 1000);
    const after = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    const { admitted } = await run([after], [limit], 20, 8, '0.002', '0.002', () => clock.now());
    expect(admitted).toBe(4);
    expect(await committed(limit, clock.now())).toBe('0.009');
  });

  it('charges a request that never ended its estimate written ahead, and one that ended its cost, when the holds are folded', async () => {
    const clock = new FixedClock();
    const limit = keyLimit('0.01');
    const dying = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    const [charged, released, died, diedToo] = await Promise.all(Array.from({ length: 4 }, () => dying.reserve([limit], '0.002', clock.now())));
    for (const reservation of [charged!, released!, died!, diedToo!]) await reservation.writeAhead();
    await charged!.charge('0.0005');
    // No provider answered: what was written ahead is taken back.
    await released!.release();
    // The other two never end: their function died after asking a provider.
    clock.advance((HOLD_SECONDS + RUNNING_REQUEST_SECONDS + HOLD_BUCKET_SECONDS + REFUSAL_MEMORY_SECONDS + REFUSAL_SPREAD_SECONDS) * 1000);
    const { admitted } = await run([new SpendingGate({ ledgers, spendBefore: nothingBefore, clock })], [limit], 20, 8, '0.001', '0.001', () => clock.now());
    // 0.0005 + 2 × 0.002 charged leave room for five requests of 0.001 (0.0005 of it unused).
    expect(admitted).toBe(5);
    expect(await settled(limit, clock.now())).toBe('0.0045');
  });

  it('keeps the estimate written ahead when the charge write fails, and never takes back a write-ahead that may have landed', async () => {
    const clock = new FixedClock();
    const limit = keyLimit('0.01');
    const failing = interceptSend(tables.documentClient, (command, send) => {
      const spendWrite = command.constructor.name === 'UpdateCommand' && String((command.input.Key as { pk?: string }).pk).startsWith('SPEND#');
      return failWrites && spendWrite ? Promise.reject(new Error('throttled')) : send();
    });
    let failWrites = false;
    const gate = new SpendingGate({ ledgers: new DynamoLedgers(failing, TABLE), spendBefore: nothingBefore, clock });
    const [cheap, unsure] = await Promise.all([gate.reserve([limit], '0.002', clock.now()), gate.reserve([limit], '0.002', clock.now())]);
    await cheap!.writeAhead();
    failWrites = true;
    await expect(cheap!.charge('0.0005')).rejects.toThrow('throttled');
    await expect(unsure!.writeAhead()).rejects.toThrow('throttled');
    failWrites = false;
    await unsure!.release();
    clock.advance((HOLD_SECONDS + RUNNING_REQUEST_SECONDS + HOLD_BUCKET_SECONDS + REFUSAL_MEMORY_SECONDS + REFUSAL_SPREAD_SECONDS) * 1000);
    // The next grant folds the lapsed holds.
    await new SpendingGate({ ledgers, spendBefore: nothingBefore, clock }).reserve([limit], '0.001', clock.now());
    // The failed charge leaves 0.002 charged; the write-ahead that failed wrote nothing, and its release took nothing back.
    expect(await settled(limit, clock.now())).toBe('0.002');
  });

  it('frees at once what an earlier local process held: its holds are apart, by its start', async () => {
    const clock = new FixedClock();
    const limit = keyLimit('0.01');
    const first = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock, writersSince: clock.now() });
    const running = await Promise.all(Array.from({ length: 5 }, () => first.reserve([limit], '0.002', clock.now())));
    await running[0]!.charge('0.001');
    clock.advance(5_000);
    const restarted = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock, writersSince: clock.now() });
    const { admitted } = await run([restarted], [limit], 20, 8, '0.001', '0.001', () => clock.now());
    expect(admitted).toBe(9);
    expect(await committed(limit, clock.now())).toBe('0.01');
  });

  it('counts each window from its UTC start: a day at midnight, a week on Monday, a month on the first', async () => {
    // Sunday 30 November 2026, ten seconds before midnight.
    const clock = new FixedClock(new Date('2026-11-29T23:59:50Z'));
    const gate = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    const daily = keyLimit('0.003', 'day');
    const weekly = keyLimit('0.003', 'week');
    const monthly = keyLimit('0.003', 'month');
    for (const limit of [daily, weekly, monthly]) {
      expect((await run([gate], [limit], 5, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(3);
    }
    clock.set('2026-11-30T00:00:01Z');
    expect((await run([gate], [daily], 5, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(3);
    expect((await run([gate], [weekly], 5, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(3);
    const refused = await run([gate], [monthly], 1, 1, '0.001', '0.001', () => clock.now());
    expect(refused.refusals[0]!.metadata).toMatchObject({ layer: 'key_limit', interval: 'monthly', resets_at: '2026-12-01T00:00:00.000Z' });
    clock.set('2026-12-01T00:00:00Z');
    expect((await run([gate], [monthly], 5, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(3);
    // Tuesday: the week still counts Monday's.
    clock.set('2026-12-01T12:00:00Z');
    expect((await run([gate], [weekly], 5, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(0);
  });

  it('refuses with the first limit reached, in order: workspace budget, guardrail budget, key limit', async () => {
    const clock = new FixedClock();
    const gate = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    const key = keyLimit('0.004');
    const guardrail: SpendingLimit = { ...keyLimit('0.003'), kind: 'guardrail_budget', id: 'g-1', scope: key.scope, description: 'the daily budget of guardrail "Team"' };
    const workspace: SpendingLimit = {
      ...keyLimit('0.002'),
      kind: 'workspace_budget',
      id: 'b-1',
      scope: { kind: 'workspace', organizationId: ORG, workspaceId: `ws${sequence}` },
      description: "the workspace's lifetime budget",
    };
    const limits = [workspace, guardrail, key];
    const first = await run([gate], limits, 4, 1, '0.001', '0.001', () => clock.now());
    expect(first.admitted).toBe(2);
    expect(first.refusals[0]!.metadata).toMatchObject({ layer: 'workspace_budget', id: 'b-1' });
    expect(first.refusals[0]!.message).toContain("the workspace's lifetime budget of 0.002 USD has 0 USD left");
    // Without the workspace budget the guardrail's refuses next, then the key's limit.
    const second = await run([gate], [guardrail, key], 4, 1, '0.001', '0.001', () => clock.now());
    expect(second.admitted).toBe(1);
    expect(second.refusals[0]!.metadata).toMatchObject({ layer: 'guardrail_budget', id: 'g-1' });
    const third = await run([gate], [key], 4, 1, '0.001', '0.001', () => clock.now());
    expect(third.admitted).toBe(1);
    expect(third.refusals[0]!.metadata).toMatchObject({ layer: 'key_limit' });
  });

  it('starts a limit set during its period from what the scope had already spent in it', async () => {
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const asked: Array<[SpendScope, SpendWindow]> = [];
    const spendBefore: SpendBefore = async (scope, window) => {
      asked.push([scope, window]);
      return '0.003';
    };
    const gate = new SpendingGate({ ledgers, spendBefore, clock });
    const limit = keyLimit('0.005', 'day', { since: '2026-11-21T11:00:00.000Z', scopeCreatedAt: '2026-01-01T00:00:00.000Z' });
    expect((await run([gate], [limit], 5, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(2);
    expect(asked).toEqual([[limit.scope, 'day']]);
    // The next day the limit has counted since its start: nothing is read.
    clock.set('2026-11-22T00:00:00Z');
    expect((await run([gate], [limit], 6, 1, '0.001', '0.001', () => clock.now())).admitted).toBe(5);
    expect(asked).toHaveLength(1);
  });

  it('starts a limit set while completions without it run at their estimates, then counts what they cost once none can be running', async () => {
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const limit = keyLimit('0.01', 'day', { since: '2026-11-21T11:59:00.000Z' });
    // Before the limit: one completion ended (0.0005, in usage), two run, one died; each counted in flight at 0.002.
    const unlimited = new SpendingGate({ ledgers, spendBefore: nothingBefore, clock });
    const [ended, slow, quick, died] = Array.from({ length: 4 }, () => unlimited.track([limit.scope], '0.002'));
    await Promise.all([ended, slow, quick, died].map((completion) => completion!.writeAhead()));
    await ended!.charge('0.0005');
    const spentBefore: SpendBefore = async () => '0.0005';
    // Set now: what was spent and the three still in flight at their estimates, 0.0065; room for one more.
    const gate = new SpendingGate({ ledgers, spendBefore: spentBefore, clock });
    expect((await run([gate], [limit], 3, 1, '0.002', '0.002', () => clock.now())).admitted).toBe(1);
    expect(await committed(limit, clock.now())).toBe('0.0085');
    await slow!.charge('0.0005');
    await quick!.charge('0.001');
    // Until none of them can be running, their estimates stay committed.
    clock.advance(60_000);
    await expect(new SpendingGate({ ledgers, spendBefore: spentBefore, clock }).reserve([limit], '0.002', clock.now())).rejects.toThrow(SpendingLimitError);
    clock.advance((HOLD_BUCKET_SECONDS + HOLD_SECONDS + RUNNING_REQUEST_SECONDS + REFUSAL_MEMORY_SECONDS + REFUSAL_SPREAD_SECONDS) * 1000);
    // Then what they cost: 0.0005 and 0.001, and the one that died its estimate, 0.002; with the usage and the 0.002 admitted, 0.006.
    const after = new SpendingGate({ ledgers, spendBefore: spentBefore, clock });
    expect((await run([after], [limit], 3, 1, '0.002', '0.002', () => clock.now())).admitted).toBe(2);
    expect(await committed(limit, clock.now())).toBe('0.01');
    // Settled: the usage, the flight at what it cost (0.0035), the first hold's 0.002.
    expect(await settled(limit, clock.now())).toBe('0.006');
  });
});
