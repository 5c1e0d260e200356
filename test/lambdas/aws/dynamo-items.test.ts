import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll, conditionalWrite, getItem, putItem, queryAll, queryPage, scanAllAttributes, strip, transactWrite, updateItem } from '../../../lambdas/aws/dynamo-items';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { InvalidInputError } from '../../../lambdas/errors';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

const TABLE = TABLE_SCHEMAS.policies.localName;

/**
 * The one item access of the adapters (lambdas/aws/dynamo-items.ts): listings read every page
 * and no more, a page handed out with a token is topped up to its size and says where to go on,
 * a failed condition is an answer and any other error is not.
 */
describe('DynamoDB item access', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
  });
  afterAll(async () => {
    await tables.stop();
  });

  /** The test's client, recording what each call asked for. */
  function recording<C extends DynamoDBDocumentClient | DynamoDBClient>(client: C): { client: C; sent: { command: string; input: Record<string, unknown> }[] } {
    const sent: { command: string; input: Record<string, unknown> }[] = [];
    const recorder = interceptSend(client, (command, send) => {
      sent.push({ command: command.constructor.name, input: { ...command.input } });
      return send();
    });
    return { client: recorder, sent };
  }

  /** Five items in one partition, `s1` to `s5`; the even ones expired at `expiresAt` 100. */
  async function partition(): Promise<string> {
    const pk = `ITEMS#${randomUUID()}`;
    const items = [1, 2, 3, 4, 5].map((n) => ({ PutRequest: { Item: { pk, sk: `s${n}`, n, expiresAt: n % 2 === 0 ? 100 : 200 } } }));
    await tables.documentClient.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items } }));
    return pk;
  }

  it('queryAll reads page after page until DynamoDB has no more, leaving the caller its input', async () => {
    const pk = await partition();
    const { client, sent } = recording(tables.documentClient);
    const input = { TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Limit: 2 };

    const items = await queryAll(client, input);

    expect(items.map((item) => item.sk)).toEqual(['s1', 's2', 's3', 's4', 's5']);
    expect(sent.map((call) => [call.command, call.input.ExclusiveStartKey])).toEqual([
      ['QueryCommand', undefined],
      ['QueryCommand', { pk, sk: 's2' }],
      ['QueryCommand', { pk, sk: 's4' }],
    ]);
    expect(input).toEqual({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Limit: 2 });
  });

  it('scanAllAttributes reads every page and hands items back as attribute values', async () => {
    const pk = await partition();
    const { client, sent } = recording(tables.client);

    const items = await scanAllAttributes(client, {
      TableName: TABLE,
      FilterExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: pk } },
      Limit: 3,
      ConsistentRead: true,
    });

    expect(items.map((item) => item.sk).sort((a, b) => a!.S!.localeCompare(b!.S!))).toEqual([1, 2, 3, 4, 5].map((n) => ({ S: `s${n}` })));
    expect(items.find((item) => item.sk?.S === 's3')?.n).toEqual({ N: '3' });
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.slice(1).every((call) => call.input.ExclusiveStartKey !== undefined)).toBe(true);
  });

  it('queryPage tops a page the filter left short up with only the items missing, and says where to go on', async () => {
    const pk = await partition();
    const { client, sent } = recording(tables.documentClient);
    const input = {
      TableName: TABLE,
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'expiresAt > :now',
      ExpressionAttributeValues: { ':pk': pk, ':now': 150 },
      ConsistentRead: true,
    };

    const first = await queryPage(client, input, { limit: 2 });
    expect(first.items.map((item) => item.sk)).toEqual(['s1', 's3']);
    expect(first.nextKey).toEqual({ pk, sk: 's3' });
    expect(sent.map((call) => call.input.Limit)).toEqual([2, 1]);

    const last = await queryPage(client, input, { limit: 2, startKey: first.nextKey });
    expect(last.items.map((item) => item.sk)).toEqual(['s5']);
    expect(last.nextKey).toBeUndefined();
  });

  it('conditionalWrite answers whether it wrote, with what the write returned, and lets other errors through', async () => {
    const key = { pk: `ITEM#${randomUUID()}`, sk: 'ITEM' };
    const create = { Put: { TableName: TABLE, Item: { ...key, count: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } };

    expect(await conditionalWrite(tables.documentClient, create)).toEqual({ written: true, item: undefined });
    const counted = await conditionalWrite(tables.documentClient, {
      Update: {
        TableName: TABLE,
        Key: key,
        UpdateExpression: 'ADD #count :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      },
    });
    expect(counted).toEqual({ written: true, item: { ...key, count: 2 } });
    // A malformed write is DynamoDB's ValidationException, turned into the client's error at the client's boundary.
    await expect(
      conditionalWrite(tables.documentClient, { Put: { TableName: TABLE, Item: { ...key, sk: 'x'.repeat(2000) }, ConditionExpression: 'attribute_not_exists(pk)' } }),
    ).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('conditionalWrite hands back the item a failed condition found, as the document client reads it, and none where there was none', async () => {
    const key = { pk: `ITEM#${randomUUID()}`, sk: 'ITEM' };
    const stored = { ...key, count: 3, tags: ['a', 'b'], nested: { at: '2026-01-01' } };
    await putItem(tables.documentClient, TABLE, stored);
    const { client, sent } = recording(tables.documentClient);

    const put = await conditionalWrite(client, { Put: { TableName: TABLE, Item: { ...key, count: 1 }, ConditionExpression: 'attribute_not_exists(pk)' } });
    const update = await conditionalWrite(client, {
      Update: { TableName: TABLE, Key: key, UpdateExpression: 'SET #count = :one', ConditionExpression: '#count < :one', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':one': 1 } },
    });
    const remove = await conditionalWrite(client, { Delete: { TableName: TABLE, Key: key, ConditionExpression: 'attribute_not_exists(tags)' } });

    expect([put, update, remove]).toEqual([
      { written: false, item: stored },
      { written: false, item: stored },
      { written: false, item: stored },
    ]);
    expect(sent.map((call) => call.input.ReturnValuesOnConditionCheckFailure)).toEqual(['ALL_OLD', 'ALL_OLD', 'ALL_OLD']);
    expect(await getItem(tables.documentClient, TABLE, key)).toEqual(stored);
    // No item: the condition found none to hand back.
    const missing = { pk: `ITEM#${randomUUID()}`, sk: 'ITEM' };
    expect(await conditionalWrite(client, { Delete: { TableName: TABLE, Key: missing, ConditionExpression: 'attribute_exists(pk)' } })).toEqual({ written: false, item: undefined });
  });

  it('getItem, putItem and updateItem read and write one item, unconditionally', async () => {
    const key = { pk: `ITEM#${randomUUID()}`, sk: 'ITEM' };
    await putItem(tables.documentClient, TABLE, { ...key, hits: 1 });
    await updateItem(tables.documentClient, { TableName: TABLE, Key: key, UpdateExpression: 'ADD hits :one', ExpressionAttributeValues: { ':one': 1 } });
    expect(await getItem(tables.documentClient, TABLE, key, { consistent: false })).toEqual({ ...key, hits: 2 });
    expect(await getItem(tables.documentClient, TABLE, { ...key, sk: 'NONE' })).toBeUndefined();
  });

  it('batchGetAll reads 100 keys a request, asks for unprocessed keys again after a growing pause, and gives up after 8 retries', async () => {
    const pk = `BATCH#${randomUUID()}`;
    const keys = Array.from({ length: 150 }, (_, n) => ({ pk, sk: `s${n}` }));
    await Promise.all(keys.filter((_, n) => n % 2 === 0).map((key) => putItem(tables.documentClient, TABLE, { ...key, n: 1 })));
    // DynamoDB leaves the last key of each request unprocessed, twice.
    let unprocessed = 2;
    const sizes: number[] = [];
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (!(command instanceof BatchGetCommand)) return send();
      const { Keys, ConsistentRead } = command.input.RequestItems![TABLE]!;
      sizes.push(Keys!.length);
      if (Keys!.length === 1 || unprocessed-- <= 0) return send();
      const kept = Keys!.slice(-1);
      const result = await tables.documentClient.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: Keys!.slice(0, -1), ConsistentRead } } }));
      return { ...result, UnprocessedKeys: { [TABLE]: { Keys: kept, ConsistentRead } } };
    });
    const pauses: number[] = [];

    const items = await batchGetAll(client, TABLE, keys, { pause: async (ms) => void pauses.push(ms) });

    expect(items.map((item) => item.sk).sort()).toEqual(keys.filter((_, n) => n % 2 === 0).map((key) => key.sk).sort());
    expect(sizes).toEqual([100, 1, 50, 1]);
    expect(pauses).toEqual([50, 50]);

    const stuck = interceptSend(tables.documentClient, async (command, send) =>
      command instanceof BatchGetCommand ? { Responses: {}, UnprocessedKeys: command.input.RequestItems } : send(),
    );
    pauses.length = 0;
    await expect(batchGetAll(stuck, TABLE, keys.slice(0, 3), { pause: async (ms) => void pauses.push(ms) })).rejects.toThrow('unprocessed after 8 retries');
    expect(pauses).toEqual([50, 100, 200, 400, 800, 1000, 1000, 1000]);
  });

  it('transactWrite sends a transaction cancelled by a conflict again under the same token, and answers which conditions failed', async () => {
    const pk = `TX#${randomUUID()}`;
    const sent: { token: unknown }[] = [];
    let conflicts = 2;
    const client = interceptSend(tables.documentClient, async (command, send) => {
      if (!(command instanceof TransactWriteCommand)) return send();
      sent.push({ token: command.input.ClientRequestToken });
      if (conflicts-- > 0) {
        throw Object.assign(new Error('Transaction cancelled'), {
          name: 'TransactionCanceledException',
          CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
        });
      }
      return send();
    });
    const put = (sk: string) => ({ Put: { TableName: TABLE, Item: { pk, sk }, ConditionExpression: 'attribute_not_exists(pk)', ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } });

    expect(await transactWrite(client, [put('a'), put('b')], { sleep: async () => undefined })).toEqual({ written: true });
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map(({ token }) => token)).size).toBe(1);
    expect((await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: { pk, sk: 'b' } }))).Item).toEqual({ pk, sk: 'b' });

    // Sent again: both conditions fail, each with the item as it is; nothing is written.
    expect(await transactWrite(tables.documentClient, [put('a'), put('b'), put('c')])).toEqual({
      written: false,
      failed: [
        { index: 0, item: { pk, sk: 'a' } },
        { index: 1, item: { pk, sk: 'b' } },
      ],
    });
    expect((await tables.documentClient.send(new GetCommand({ TableName: TABLE, Key: { pk, sk: 'c' } }))).Item).toBeUndefined();
  });

  it('strip leaves a record without key, index and revision attributes', () => {
    expect(strip({ pk: 'P', sk: 'S', gsi1pk: 'G', gsi1sk: 'H', revision: 3, id: 'a', version: 2 })).toEqual({ id: 'a', version: 2 });
  });
});
