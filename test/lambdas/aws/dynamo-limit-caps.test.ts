import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { DynamoLedgers } from '../../../lambdas/aws/dynamo-ledgers';
import { ledgerKey } from '../../../lambdas/aws/dynamo-ledger-keys';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { SpendingLimitError } from '../../../lambdas/errors';
import { keyLimitOf, workspaceLimits, type SpendingLimit } from '../../../lambdas/spending/limits';
import { periodAt } from '../../../lambdas/spending/periods';
import { bucketOf } from '../../../lambdas/spending/ledgers';
import { REFUSAL_MEMORY_SECONDS, REFUSAL_SPREAD_SECONDS, SpendingGate } from '../../../lambdas/spending/spending-gate';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { FixedClock } from '../../support/fixed-clock';
import { interceptSend } from '../../support/intercepted-client';

const USAGE = TABLE_SCHEMAS.usage.localName;
const CONTAINERS = 20;
const ESTIMATE = '0.001';

/**
 * A limit's amount changed while a fleet of containers holds its ledger (docs/architecture.md,
 * "Spending limits"): the change caps the ledger's items in its own transaction and records
 * whether the holds out fit the new amount, so containers keep holds that fit and do not all ask
 * the ledger again at once; no grant asked under the amount before lands after the change.
 */
describe('a limit changed while containers hold its ledger', () => {
  const clock = new FixedClock(new Date('2026-11-18T12:00:00Z'));
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoAccountStore;
  let service: AccountsService;
  let ledgers: DynamoLedgers;
  const asked = { writes: 0, reads: 0 };
  const transactions: number[] = [];
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    // Management's store: the size of each transaction it writes, recorded.
    const management = interceptSend(tables.documentClient, async (command, send) => {
      if (command.constructor.name === 'TransactWriteCommand') transactions.push((command.input.TransactItems as unknown[]).length);
      return send();
    });
    store = new DynamoAccountStore(management, TABLE_SCHEMAS.keys.localName, { clock, ledgersTable: USAGE });
    service = new AccountsService({ store, clock, newId: randomUUID });
    // The containers' client: what they ask of ledger items, counted.
    const counted = interceptSend(tables.documentClient, async (command, send) => {
      if (String((command.input.Key as { pk?: string } | undefined)?.pk).startsWith('BUDGET#')) asked[command.constructor.name === 'GetCommand' ? 'reads' : 'writes']++;
      return send();
    });
    ledgers = new DynamoLedgers(counted, USAGE);
  });
  afterAll(() => tables.stop());

  const keyLimit = async (hash: string) => {
    const key = (await store.getRecords({ keyHash: hash })).key!;
    return keyLimitOf(key.hash, key.organizationId, key.limit!, key.createdAt);
  };
  const cap = async (limit: SpendingLimit, at = clock.now()) =>
    (await tables.documentClient.send(new GetCommand({ TableName: USAGE, Key: ledgerKey({ ledger: limit.ledger, period: periodAt(limit.window, at).id }) }))).Item?.cap;
  /** `CONTAINERS` containers, each its own gate, each admitting one request under `limit`: each then holds some of its ledger. */
  const fleet = async (limit: SpendingLimit) => {
    const gates = Array.from({ length: CONTAINERS }, (_, i) => new SpendingGate({ ledgers, spendBefore: async () => '0', clock, random: () => (i + 0.5) / CONTAINERS }));
    for (const gate of gates) await (await gate.reserve([limit], ESTIMATE, clock.now())).charge(ESTIMATE);
    return gates;
  };
  const keyWithLimit = async (limit: number) => {
    const { organization } = await service.createOrganization({ name: 'Caps', plan: 'enterprise' });
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'capped', limit, limitReset: 'daily' });
    return { organizationId: organization.id, hash: key.hash };
  };

  it('a lowered amount the holds out fit: no container asks the ledger again, and one that read the amount before is held to the new one', async () => {
    const { organizationId, hash } = await keyWithLimit(1);
    const before = await keyLimit(hash);
    const gates = await fleet(before);
    transactions.length = 0;
    await service.updateApiKey(organizationId, hash, { limit: 0.5 });
    // One transaction: the key, its 16 copies, today's and tomorrow's ledger items.
    expect(transactions).toEqual([19]);
    const after = await keyLimit(hash);
    const tomorrow = periodAt(after.window, new Date(clock.now().getTime() + 86_400_000)).id;
    expect(after.heldAtChange).toEqual({ periods: [periodAt(after.window, clock.now()).id, tomorrow], fit: true });
    expect(await cap(after)).toBe(0.5);

    const writes = asked.writes;
    for (const gate of gates) await (await gate.reserve([after], ESTIMATE, clock.now())).charge(ESTIMATE);
    expect(asked.writes).toBe(writes);

    // A container that read the key before the change asks under 1: the ledger answers with its
    // cap, and the grant is asked again under 0.5, which has no room for 0.45 on top of the holds.
    const late = new SpendingGate({ ledgers, spendBefore: async () => '0', clock });
    await expect(late.reserve([before], '0.45', clock.now())).rejects.toThrow(SpendingLimitError);
    const state = await ledgers.read({ ledger: after.ledger, period: periodAt(after.window, clock.now()).id });
    // Under 1 there was room for it: the cap is what refused it, on the ledger's own condition.
    expect(Number(state!.committed) + 0.45).toBeLessThan(1);
    expect(Number(state!.committed)).toBeLessThanOrEqual(0.5);
    const ref = { ledger: after.ledger, period: periodAt(after.window, clock.now()).id };
    await expect(ledgers.grant({ ref, limitUsd: '1', amount: '0.45', hold: { bucket: bucketOf(clock.now()), epoch: '-' } })).resolves.toMatchObject({ granted: false, cap: '0.5' });
  });

  it('an amount lowered below what the ledger has committed: every container gives its hold up and refuses from memory, then reads the ledger in its own time, writing nothing', async () => {
    const { organizationId, hash } = await keyWithLimit(1);
    const gates = await fleet(await keyLimit(hash));
    const committed = Number((await ledgers.read({ ledger: (await keyLimit(hash)).ledger, period: periodAt('day', clock.now()).id }))!.committed);
    const lowered = committed / 2;
    await service.updateApiKey(organizationId, hash, { limit: Number(lowered.toFixed(6)) });
    const after = await keyLimit(hash);
    expect(after.heldAtChange?.fit).toBe(false);
    expect(await cap(after)).toBe(Number(lowered.toFixed(6)));

    const { writes, reads } = asked;
    const refused = await Promise.allSettled(gates.map((gate) => gate.reserve([after], ESTIMATE, clock.now())));
    expect(refused.every((answer) => answer.status === 'rejected' && answer.reason instanceof SpendingLimitError)).toBe(true);
    expect(asked).toEqual({ writes, reads });
    // Once its memory has passed, each container reads the ledger (half a read unit) and, finding no room, refuses again: no write.
    clock.advance((REFUSAL_MEMORY_SECONDS + REFUSAL_SPREAD_SECONDS) * 1000 + 1);
    await Promise.allSettled(gates.map((gate) => gate.reserve([after], ESTIMATE, clock.now())));
    expect(asked).toEqual({ writes, reads: reads + CONTAINERS });
  });

  it("a workspace budget lowered: its holds kept when they fit, as a key's are", async () => {
    const { organization, workspace } = await service.createOrganization({ name: 'Budgets', plan: 'enterprise' });
    await service.putWorkspaceBudget(organization.id, workspace.slug, 'monthly', { limitUsd: 10 });
    const budgetOf = async () => workspaceLimits((await store.getWorkspace(organization.id, workspace.id))!)[0]!;
    const gates = await fleet(await budgetOf());
    await service.putWorkspaceBudget(organization.id, workspace.slug, 'monthly', { limitUsd: 5 });
    const after = await budgetOf();
    expect(after.heldAtChange).toMatchObject({ fit: true });
    expect(await cap(after)).toBe(5);
    const writes = asked.writes;
    for (const gate of gates) await (await gate.reserve([after], ESTIMATE, clock.now())).charge(ESTIMATE);
    expect(asked.writes).toBe(writes);
  });

  it('keeps what the last change of the amount found across changes of anything else, and drops it with a new window', async () => {
    const { organizationId, hash } = await keyWithLimit(1);
    await fleet(await keyLimit(hash));
    await service.updateApiKey(organizationId, hash, { limit: 0.8 });
    const found = (await keyLimit(hash)).heldAtChange;
    expect(found?.fit).toBe(true);
    await service.updateApiKey(organizationId, hash, { name: 'renamed', limit: 0.8 });
    expect((await keyLimit(hash)).heldAtChange).toEqual(found);
    clock.advance(1000);
    await service.updateApiKey(organizationId, hash, { limitReset: 'monthly' });
    expect((await keyLimit(hash)).heldAtChange).toBeUndefined();
  });

  it("retries a grant that meets a change's transaction on the ledger's item, rather than failing the request", async () => {
    let conflicts = 0;
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (command.constructor.name === 'UpdateCommand' && conflicts++ === 0) {
        throw Object.assign(new Error('Transaction is ongoing for the item'), { name: 'TransactionConflictException' });
      }
      return send();
    });
    const { hash } = await keyWithLimit(1);
    const gate = new SpendingGate({ ledgers: new DynamoLedgers(client, USAGE), spendBefore: async () => '0', clock });
    await expect(gate.reserve([await keyLimit(hash)], ESTIMATE, clock.now())).resolves.toBeDefined();
    expect(conflicts).toBeGreaterThan(1);
  });
});
