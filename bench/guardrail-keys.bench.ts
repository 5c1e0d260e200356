/**
 * Benchmark of a guardrail's key list (`npm run bench`; docs/architecture.md, "Data layout"): an
 * organization of many keys, a guardrail on a few of them, on the embedded DynamoDB. A page of
 * the guardrail's keys and the guardrail's delete, read from the guardrail index, against the
 * same calls on the organization before it was indexed (every key read, as an earlier release
 * did), in the same run: the items and bytes read, and the time.
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../lambdas/aws/table-schemas';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { startEmbeddedTables } from '../test/support/embedded-tables';
import { guardrailInput } from '../test/support/accounts';
import { interceptSend } from '../test/support/intercepted-client';

const KEYS = 5000;
const ASSIGNED = 50;
const TABLE = TABLE_SCHEMAS.keys.localName;

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const tables = await startEmbeddedTables();
  const read = { items: 0, bytes: 0 };
  const counted = interceptSend(tables.documentClient, async (command, send) => {
    const answer = (await send()) as { Items?: unknown[]; Responses?: Record<string, unknown[]>; Item?: unknown };
    const items = [...(answer.Items ?? []), ...Object.values(answer.Responses ?? {}).flat(), ...(answer.Item ? [answer.Item] : [])];
    read.items += items.length;
    read.bytes += items.reduce<number>((sum, item) => sum + JSON.stringify(item).length, 0);
    return answer;
  });
  const service = new AccountsService({ store: new DynamoAccountStore(tables.documentClient, TABLE), newId: randomUUID });
  const measured = new AccountsService({ store: new DynamoAccountStore(counted, TABLE), newId: randomUUID });
  /** An organization of KEYS keys (written as their creates leave them), a guardrail on ASSIGNED of them; indexed or as an earlier release left it. */
  const organizationOf = async (indexed: boolean) => {
    const { organization, workspace } = await service.createOrganization({ name: 'Many keys', plan: 'enterprise' });
    const items = Array.from({ length: KEYS }, (_, i) => {
      const hash = randomUUID().replaceAll('-', '').padEnd(64, '0');
      const createdAt = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      return { pk: `APIKEY#${hash}`, sk: 'APIKEY', gsi1pk: `ORG#${organization.id}#APIKEYS`, gsi1sk: `${createdAt}#${hash}`, hash, organizationId: organization.id, kind: 'workspace', workspaceId: workspace.id, name: `key ${i} of the organization`, guardrailIds: [], createdAt, revision: 1 };
    });
    for (let start = 0; start < items.length; start += 25) {
      await tables.documentClient.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })) } }));
    }
    const guardrail = await service.createGuardrail(organization.id, guardrailInput({ name: 'on a few' }));
    await service.assignGuardrailToKeys(organization.id, guardrail.id, items.filter((_, i) => i % (KEYS / ASSIGNED) === 0).map((item) => item.hash));
    if (!indexed) await tables.documentClient.send(new DeleteCommand({ TableName: TABLE, Key: { pk: `ORG#${organization.id}#GUARDRAILKEYS`, sk: 'INDEXED' } }));
    return { organizationId: organization.id, guardrailId: guardrail.id };
  };
  const measure = async (call: () => Promise<unknown>) => {
    const from = { ...read };
    const started = performance.now();
    await call();
    return { ms: performance.now() - started, items: read.items - from.items, bytes: read.bytes - from.bytes };
  };
  try {
    const indexed = await organizationOf(true);
    const earlier = await organizationOf(false);
    console.log(`A guardrail on ${ASSIGNED} of an organization's ${KEYS} keys: what a call reads, from the guardrail index and, in the same run, from every key (an organization not yet indexed)`);
    console.log(`${'call'.padEnd(34)} ${'items'.padStart(6)} ${'KB'.padStart(7)} ${'ms'.padStart(7)} ${'every key: items'.padStart(17)} ${'KB'.padStart(7)} ${'ms'.padStart(7)} ${'bytes'.padStart(7)} ${'time'.padStart(7)}`);
    for (const [name, call] of [
      ['a page of 10 of its keys', (o: typeof indexed) => measured.listKeyAssignments(o.organizationId, o.guardrailId, { offset: 20, limit: 10 })],
      ['its delete, detaching its keys', (o: typeof indexed) => measured.deleteGuardrail(o.organizationId, o.guardrailId)],
    ] as const) {
      const row = await measure(() => call(indexed));
      const before = await measure(() => call(earlier));
      const kb = (bytes: number) => (bytes / 1024).toFixed(1);
      console.log(
        `${name.padEnd(34)} ${String(row.items).padStart(6)} ${kb(row.bytes).padStart(7)} ${row.ms.toFixed(0).padStart(7)} ${String(before.items).padStart(17)} ${kb(before.bytes).padStart(7)} ${before.ms.toFixed(0).padStart(7)} ${`${(row.bytes / before.bytes).toFixed(3)}x`.padStart(7)} ${`${(row.ms / before.ms).toFixed(2)}x`.padStart(7)}`,
      );
    }
  } finally {
    await tables.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
