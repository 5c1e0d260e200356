/**
 * Benchmark of a limit changed under a fleet (`npm run bench`; docs/architecture.md, "Spending
 * limits"): containers, each its own spending gate, hold a key's daily limit on the embedded
 * DynamoDB; its amount is lowered through the management service; each container then admits one
 * request. Counted: what they ask of the ledger's items, with the change's record of whether the
 * holds out fit the new amount (`heldAtChange`) and, in the same run, without it (every container
 * asks the ledger again, as a lowered limit did before the record). Then a limit just set, which
 * every container asks for its first hold at once: the writes on the ledger's item and on its
 * branches (lambdas/aws/dynamo-ledger-branches.ts), and in the same run without branches.
 */
import { randomUUID } from 'node:crypto';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { DynamoLedgers } from '../lambdas/aws/dynamo-ledgers';
import { TABLE_SCHEMAS } from '../lambdas/aws/table-schemas';
import { keyLimitOf, type SpendingLimit } from '../lambdas/spending/limits';
import { periodAt } from '../lambdas/spending/periods';
import { SpendingGate } from '../lambdas/spending/spending-gate';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { startEmbeddedTables } from '../test/support/embedded-tables';
import { FixedClock } from '../test/support/fixed-clock';
import { interceptSend } from '../test/support/intercepted-client';

const CONTAINERS = 200;
const ESTIMATE = '0.001';
const USAGE = TABLE_SCHEMAS.usage.localName;

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const tables = await startEmbeddedTables();
  const clock = new FixedClock(new Date('2026-11-18T12:00:00Z'));
  const asked = { writes: 0, reads: 0 };
  const writesOn = new Map<string, number>();
  const counted = interceptSend(tables.documentClient, async (command, send) => {
    const pk = String((command.input.Key as { pk?: string } | undefined)?.pk);
    if (pk.startsWith('BUDGET#')) asked[command.constructor.name === 'GetCommand' ? 'reads' : 'writes']++;
    if (pk.startsWith('BUDGET#') && command.constructor.name !== 'GetCommand') writesOn.set(pk, (writesOn.get(pk) ?? 0) + 1);
    return send();
  });
  const ledgers = new DynamoLedgers(counted, USAGE);
  const store = new DynamoAccountStore(tables.documentClient, TABLE_SCHEMAS.keys.localName, { clock, ledgersTable: USAGE });
  const service = new AccountsService({ store, clock, newId: randomUUID });
  const { organization } = await service.createOrganization({ name: 'Fleet', plan: 'enterprise' });
  const limitOf = async (hash: string) => {
    const key = (await store.getApiKey(hash))!;
    return keyLimitOf(key.hash, key.organizationId, key.limit!, key.createdAt);
  };
  /** A key of limit 10 held by the fleet, lowered to `fraction` of what its ledger committed: what the fleet's next requests ask of the ledger. */
  const lowered = async (fraction: number, recorded: boolean) => {
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'fleet', limit: 10, limitReset: 'daily' });
    const before = await limitOf(key.hash);
    const gates = Array.from({ length: CONTAINERS }, (_, i) => new SpendingGate({ ledgers, spendBefore: async () => '0', clock, random: () => (i + 0.5) / CONTAINERS }));
    for (const gate of gates) await (await gate.reserve([before], ESTIMATE, clock.now())).charge(ESTIMATE);
    const committed = Number((await ledgers.read({ ledger: before.ledger, period: periodAt(before.window, clock.now()).id }))!.committed);
    await service.updateApiKey(organization.id, key.hash, { limit: Number((committed * fraction).toFixed(6)) });
    const after = await limitOf(key.hash);
    const { heldAtChange: _, ...unrecorded } = after;
    const limit: SpendingLimit = recorded ? after : unrecorded;
    const from = { ...asked };
    const admitted = await Promise.allSettled(gates.map(async (gate) => (await gate.reserve([limit], ESTIMATE, clock.now())).charge(ESTIMATE)));
    return { fit: after.heldAtChange?.fit, writes: asked.writes - from.writes, reads: asked.reads - from.reads, admitted: admitted.filter((answer) => answer.status === 'fulfilled').length };
  };
  /** A key's limit of $10 just set (its ledger seeded, as management does) and the fleet's first holds at once, through `branches` branches (none: on the ledger's item). */
  const herd = async (branches: number) => {
    const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'herd', limit: 10, limitReset: 'daily' });
    const limit = { ...(await limitOf(key.hash)), since: clock.now().toISOString() };
    const ref = { ledger: limit.ledger, period: periodAt(limit.window, clock.now()).id };
    await new DynamoLedgers(tables.documentClient, USAGE).seed(ref, { spent: '0' });
    const gates = Array.from({ length: CONTAINERS }, (_, i) => {
      const draw = () => (i + 0.5) / CONTAINERS;
      return new SpendingGate({ ledgers: new DynamoLedgers(counted, USAGE, { branches, random: draw }), spendBefore: async () => '0', clock, random: draw });
    });
    const started = performance.now();
    await Promise.all(gates.map(async (gate) => (await gate.reserve([limit], ESTIMATE, clock.now())).charge(ESTIMATE)));
    const ms = performance.now() - started;
    const pk = `BUDGET#${limit.ledger}`;
    const onBranches = [...writesOn].filter(([name]) => name.startsWith(`${pk}#`)).map(([, count]) => count);
    const committed = (await ledgers.read(ref))!.committed;
    return { ledger: writesOn.get(pk) ?? 0, branchWrites: onBranches.reduce((sum, count) => sum + count, 0), busiestBranch: Math.max(0, ...onBranches), committed, ms };
  };
  try {
    console.log(`A key's limit just set while ${CONTAINERS} containers serve it: their first holds, all at once`);
    console.log(`${'through'.padEnd(40)} ${'ledger writes'.padStart(13)} ${'branch writes'.padStart(13)} ${'a container'.padStart(11)} ${'busiest branch'.padStart(14)} ${'committed'.padStart(9)} ${'ms'.padStart(6)}`);
    const alone = await herd(0);
    for (const branches of [0, 16]) {
      const row = branches === 0 ? alone : await herd(branches);
      const name = branches === 0 ? "the ledger's item" : `${branches} branches (ledger writes ${(row.ledger / alone.ledger).toFixed(2)}x)`;
      console.log(`${name.padEnd(40)} ${String(row.ledger).padStart(13)} ${String(row.branchWrites).padStart(13)} ${(row.branchWrites / CONTAINERS).toFixed(2).padStart(11)} ${String(row.busiestBranch).padStart(14)} ${row.committed.padStart(9)} ${row.ms.toFixed(0).padStart(6)}`);
    }
    console.log('');
    console.log(`A key's daily limit lowered while ${CONTAINERS} containers hold its ledger: what their next requests ask of the ledger`);
    console.log(`${'lowered to'.padEnd(40)} ${'holds fit'.padStart(9)} ${'ledger writes'.padStart(13)} ${'reads'.padStart(6)} ${'admitted'.padStart(8)} ${'without the record: writes'.padStart(27)} ${'ratio'.padStart(7)}`);
    for (const [name, fraction] of [
      ['twice what the ledger committed', 2],
      ['half what the ledger committed', 0.5],
    ] as const) {
      const row = await lowered(fraction, true);
      const before = await lowered(fraction, false);
      const ratio = before.writes === 0 ? '-' : `${(row.writes / before.writes).toFixed(2)}x`;
      console.log(`${name.padEnd(40)} ${String(row.fit).padStart(9)} ${String(row.writes).padStart(13)} ${String(row.reads).padStart(6)} ${String(row.admitted).padStart(8)} ${String(before.writes).padStart(27)} ${ratio.padStart(7)}`);
    }
  } finally {
    await tables.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
