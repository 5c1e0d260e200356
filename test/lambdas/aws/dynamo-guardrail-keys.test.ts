import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { GuardrailKeyIndex } from '../../../lambdas/aws/dynamo-guardrail-keys';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { guardrailInput } from '../../support/accounts';
import { useAccountStoreTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

const table = TABLE_SCHEMAS.keys.localName;

describe('The guardrail index: a guardrail’s keys listed and detached without reading every key of the organization', () => {
  const db = useAccountStoreTables();

  /** The store and service over a client that counts what each listing reads. */
  function counted() {
    const reads = { keys: 0, organizationKeyQueries: 0 };
    const transactions: number[] = [];
    const client = interceptSend(db.tables.documentClient, (command, send) => {
      const input = command.input as { RequestItems?: Record<string, { Keys: unknown[] }>; IndexName?: string; TransactItems?: unknown[] };
      if (command.constructor.name === 'TransactWriteCommand') transactions.push(input.TransactItems!.length);
      if (command.constructor.name === 'BatchGetCommand') reads.keys += input.RequestItems![table]!.Keys.length;
      if (command.constructor.name === 'QueryCommand' && input.IndexName !== undefined) reads.organizationKeyQueries++;
      return send();
    });
    const store = new DynamoAccountStore(client, table);
    return { reads, transactions, store, service: new AccountsService({ store, clock: db.clock }) };
  }

  const entries = async (organizationId: string) =>
    (await db.tables.documentClient.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `ORG#${organizationId}#GUARDRAILKEYS` } }))).Items!.map((item) => item.sk as string);

  it('lists a page of a guardrail’s keys, oldest first, reading the page’s keys only, among 60 keys of the organization', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Indexed', plan: 'enterprise' });
    const keys = [];
    for (let i = 0; i < 60; i++) keys.push((await db.service.createApiKey(organization.id, { kind: 'workspace', name: `k${i}` })).key);
    const [guarded, other] = await Promise.all([db.service.createGuardrail(organization.id, guardrailInput({ name: 'guarded' })), db.service.createGuardrail(organization.id, guardrailInput({ name: 'other' }))]);
    for (const i of [7, 3, 41, 12]) {
      db.clock.advance(1000);
      await db.service.assignGuardrailToKeys(organization.id, guarded.id, [keys[i]!.hash]);
    }
    db.clock.advance(1000);
    await db.service.assignGuardrailToKeys(organization.id, other.id, [keys[3]!.hash]);

    const { reads, service } = counted();
    const page = await service.listKeyAssignments(organization.id, guarded.id, { offset: 1, limit: 2 });
    expect({ names: page.items.map((assignment) => assignment.key.name), total: page.total }).toEqual({ names: ['k3', 'k41'], total: 4 });
    expect(reads).toEqual({ keys: 2, organizationKeyQueries: 0 });
    // Every guardrail's assignments, in the order they were made.
    const all = await service.listKeyAssignments(organization.id);
    expect(all.items.map((assignment) => `${assignment.key.name}:${assignment.guardrailId === guarded.id ? 'guarded' : 'other'}`)).toEqual(['k7:guarded', 'k3:guarded', 'k41:guarded', 'k12:guarded', 'k3:other']);
    expect(all.items[0]!.assignedAt).toBe((await db.service.getApiKey(organization.id, keys[7]!.hash)).guardrailAssignedAt![guarded.id]);
    expect(reads.organizationKeyQueries).toBe(0);
  });

  it('writes each entry in the transaction that assigns or removes the guardrail, and deletes a key’s entries with it', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Entries', plan: 'enterprise' });
    const [a, b] = [(await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'a' })).key, (await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'b' })).key];
    const guardrail = await db.service.createGuardrail(organization.id, guardrailInput({ name: 'g' }));
    const second = await db.service.createGuardrail(organization.id, guardrailInput({ name: 'second' }));
    const { transactions, service } = counted();
    await service.assignGuardrailToKeys(organization.id, guardrail.id, [a.hash, b.hash]);
    await service.assignGuardrailToKeys(organization.id, second.id, [a.hash]);
    // The key, its 16 copies and its entry, each assignment one transaction.
    expect(transactions).toEqual([18, 18, 18]);
    expect((await entries(organization.id)).sort()).toEqual(['INDEXED', `${guardrail.id}#${a.hash}`, `${guardrail.id}#${b.hash}`, `${second.id}#${a.hash}`].sort());

    await service.unassignGuardrailFromKeys(organization.id, guardrail.id, [b.hash]);
    await service.deleteApiKey(organization.id, a.hash);
    // The delete: the key, 16 marks, its workspace's count and member item, its mark there, its two entries.
    expect(transactions.slice(3)).toEqual([18, 22]);
    expect(await entries(organization.id)).toEqual(['INDEXED']);
    expect((await db.service.listKeyAssignments(organization.id)).total).toBe(0);
  });

  it('detaches a deleted guardrail from the keys its entries name, reading no list of the organization’s keys', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Detached', plan: 'enterprise' });
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push((await db.service.createApiKey(organization.id, { kind: 'workspace', name: `k${i}` })).key);
    const guardrail = await db.service.createGuardrail(organization.id, guardrailInput({ name: 'gone' }));
    await db.service.assignGuardrailToKeys(organization.id, guardrail.id, [keys[1]!.hash, keys[4]!.hash]);

    const { reads, service } = counted();
    await service.deleteGuardrail(organization.id, guardrail.id);
    expect(reads.organizationKeyQueries).toBe(0);
    for (const key of keys) expect((await db.service.getApiKey(organization.id, key.hash)).guardrailIds).toEqual([]);
    expect(await entries(organization.id)).toEqual(['INDEXED']);
  });

  it('reads the keys of an organization an earlier release created until it is indexed, and indexes only what its keys still hold', async () => {
    const { organization } = await db.service.createOrganization({ name: 'Earlier', plan: 'enterprise' });
    const [kept, dropped] = [(await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'kept' })).key, (await db.service.createApiKey(organization.id, { kind: 'workspace', name: 'dropped' })).key];
    const guardrail = await db.service.createGuardrail(organization.id, guardrailInput({ name: 'g' }));
    await db.service.assignGuardrailToKeys(organization.id, guardrail.id, [kept.hash, dropped.hash]);
    // As an earlier release left it: assignments on the keys, no index, no mark.
    for (const sk of await entries(organization.id)) await db.tables.documentClient.send(new DeleteCommand({ TableName: table, Key: { pk: `ORG#${organization.id}#GUARDRAILKEYS`, sk } }));

    const { reads, service } = counted();
    expect((await service.listKeyAssignments(organization.id, guardrail.id)).items.map((assignment) => assignment.key.name).sort()).toEqual(['dropped', 'kept']);
    expect(reads.organizationKeyQueries).toBe(1);

    // The keys as read before one lost the guardrail: its entry's condition refuses it.
    const asRead = [await db.service.getApiKey(organization.id, kept.hash), await db.service.getApiKey(organization.id, dropped.hash)];
    await db.tables.documentClient.send(
      new UpdateCommand({ TableName: table, Key: { pk: `APIKEY#${dropped.hash}`, sk: 'APIKEY' }, UpdateExpression: 'DELETE guardrailIds :id', ExpressionAttributeValues: { ':id': new Set([guardrail.id]) } }),
    );
    const index = new GuardrailKeyIndex(db.tables.documentClient, table);
    expect(await index.index(organization.id, asRead, '2026-11-30T00:00:00.000Z')).toEqual({ entered: 1, removed: 0 });
    expect((await entries(organization.id)).sort()).toEqual(['INDEXED', `${guardrail.id}#${kept.hash}`]);
    // Run again through the service: nothing new to enter, and the listing reads the index.
    expect(await db.service.indexGuardrailKeys(organization.id)).toEqual({ entered: 0, removed: 0 });
    reads.organizationKeyQueries = 0;
    const listed = await service.listKeyAssignments(organization.id, guardrail.id);
    expect({ names: listed.items.map((assignment) => assignment.key.name), queries: reads.organizationKeyQueries }).toEqual({ names: ['kept'], queries: 0 });
    expect(listed.items[0]!.assignedAt).toBe(asRead[0]!.guardrailAssignedAt![guardrail.id]);
    const mark = await db.tables.documentClient.send(new GetCommand({ TableName: table, Key: { pk: `ORG#${organization.id}#GUARDRAILKEYS`, sk: 'INDEXED' } }));
    expect(mark.Item?.indexedAt).toBeDefined();

    // Entries no key holds (a delete an earlier release cut short) are removed; one whose key holds it, whatever the read said, is kept.
    const gone = 'f'.repeat(64);
    for (const hash of [dropped.hash, gone]) {
      await db.tables.documentClient.send(new PutCommand({ TableName: table, Item: { pk: `ORG#${organization.id}#GUARDRAILKEYS`, sk: `${guardrail.id}#${hash}`, guardrailId: guardrail.id, keyHash: hash, assignedAt: '2026-01-01T00:00:00.000Z' } }));
    }
    const readBeforeItsAssignment = [{ ...asRead[0]!, guardrailIds: [] }, await db.service.getApiKey(organization.id, dropped.hash)];
    expect(await index.index(organization.id, readBeforeItsAssignment, '2026-11-30T00:00:00.000Z')).toEqual({ entered: 0, removed: 2 });
    expect((await entries(organization.id)).sort()).toEqual(['INDEXED', `${guardrail.id}#${kept.hash}`]);
  });
});
