import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  type AttributeValue,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { startEmbeddedDynamoDb, type EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { startTestDynamoDb, testDynamoDb } from '../support/dynamodb-local';
import { eventually } from '../support/eventually';

/**
 * Transactions as DynamoDB answers them, asserted alike on the embedded DynamoDB (dynalite, with
 * the project's patch) and on AWS's DynamoDB Local (`npm run test:dynamodb-local`): all or
 * nothing, each action's cancellation reason in its place, DynamoDB's validation, and the
 * `ClientRequestToken` that makes a retried transaction land once.
 */
const TABLE = 'transactions';
const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number): AttributeValue => ({ N: String(value) });
const key = (pk: string) => ({ pk: S(pk), sk: S('ITEM') });

let dynamo: EmbeddedDynamoDb;
beforeAll(async () => {
  dynamo = await startTestDynamoDb();
  await dynamo.client.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: ['pk', 'sk', 'group'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [{ IndexName: 'byGroup', KeySchema: [{ AttributeName: 'group', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
    }),
  );
  await write([put('typed', { s: S('text') })]);
});
afterAll(() => dynamo.stop());

const write = (TransactItems: TransactWriteItem[], ClientRequestToken?: string) =>
  dynamo.client.send(new TransactWriteItemsCommand({ TransactItems, ClientRequestToken }));
const put = (pk: string, attributes: Record<string, AttributeValue> = {}, condition?: string): TransactWriteItem => ({
  Put: { TableName: TABLE, Item: { ...key(pk), ...attributes }, ...(condition ? { ConditionExpression: condition } : {}) },
});
const increment = (pk: string, condition?: { expression: string; values?: Record<string, AttributeValue> }): TransactWriteItem => ({
  Update: {
    TableName: TABLE,
    Key: key(pk),
    UpdateExpression: 'ADD n :one',
    ...(condition ? { ConditionExpression: condition.expression } : {}),
    ExpressionAttributeValues: { ':one': N(1), ...condition?.values },
  },
});
const read = async (pk: string) => (await dynamo.client.send(new GetItemCommand({ TableName: TABLE, Key: key(pk), ConsistentRead: true }))).Item;
const groupMembers = async (group: string) =>
  ((await dynamo.client.send(new QueryCommand({ TableName: TABLE, IndexName: 'byGroup', KeyConditionExpression: '#g = :g', ExpressionAttributeNames: { '#g': 'group' }, ExpressionAttributeValues: { ':g': S(group) } }))).Items ?? [])
    .map((item) => item.pk!.S)
    .sort();

/** What a refused call threw, in the terms both servers must agree on. */
async function refusal(call: Promise<unknown>): Promise<{ name: string; message: string; reasons?: { Code?: string; Item?: unknown }[] }> {
  const error = (await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )) as { name: string; message: string; CancellationReasons?: { Code?: string; Item?: unknown }[] } | undefined;
  if (!error) throw new Error('the call was accepted');
  return { name: error.name, message: error.message, reasons: error.CancellationReasons?.map(({ Code, Item }) => (Item ? { Code, Item } : { Code })) };
}

describe(`TransactWriteItems on ${testDynamoDb()}`, () => {
  it('lands every action together, index entries included', async () => {
    await write([put('counted', { n: N(1) }), put('doomed', { group: S('g1') })]);
    await write([
      put('fresh', { group: S('g1') }),
      increment('counted'),
      { Delete: { TableName: TABLE, Key: key('doomed') } },
      { ConditionCheck: { TableName: TABLE, Key: key('absent'), ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
    expect((await read('counted'))?.n).toEqual(N(2));
    expect(await read('doomed')).toBeUndefined();
    expect(await groupMembers('g1')).toEqual(['fresh']);
  });

  it('cancels every action when one condition fails, each reason in its action’s place', async () => {
    await write([put('guarded', { n: N(7), group: S('g2') })]);
    const refused = await refusal(
      write([
        put('never', { group: S('g2') }),
        { ConditionCheck: { TableName: TABLE, Key: key('guarded'), ConditionExpression: 'n = :n', ExpressionAttributeValues: { ':n': N(8) }, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
        increment('untouched', { expression: 'attribute_exists(pk)' }),
      ]),
    );
    expect(refused).toEqual({
      name: 'TransactionCanceledException',
      message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed, ConditionalCheckFailed]',
      reasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { ...key('guarded'), n: N(7), group: S('g2') } }, { Code: 'ConditionalCheckFailed' }],
    });
    expect(await read('never')).toBeUndefined();
    expect(await read('untouched')).toBeUndefined();
    expect(await groupMembers('g2')).toEqual(['guarded']);
  });

  it('refuses an update of a key attribute with a ValidationError reason', async () => {
    const refused = await refusal(write([{ Update: { TableName: TABLE, Key: key('k'), UpdateExpression: 'SET pk = :p', ExpressionAttributeValues: { ':p': S('p') } } }]));
    expect(refused.name).toBe('TransactionCanceledException');
    expect(refused.reasons).toEqual([{ Code: 'ValidationError' }]);
  });

  const big = 'x'.repeat(390 * 1024);
  it.each<[string, () => TransactWriteItem[], string, string]>([
    ['no action', () => [], 'ValidationException', 'Member must have length greater than or equal to 1'],
    ['101 actions', () => Array.from({ length: 101 }, (_, i) => put(`many${i}`)), 'ValidationException', 'Member must have length less than or equal to 100'],
    ['two actions on one item', () => [put('twice'), { Delete: { TableName: TABLE, Key: key('twice') } }], 'ValidationException', 'Transaction request cannot include multiple operations on one item'],
    ['a member with two actions', () => [{ ...put('both'), Delete: { TableName: TABLE, Key: key('other') } }], 'ValidationException', 'TransactItems can only contain one of Check, Put, Update or Delete'],
    ['a member with none', () => [{}], 'ValidationException', 'TransactWriteRequest should contain Delete or Put or Update request'],
    ['a check without a condition', () => [{ ConditionCheck: { TableName: TABLE, Key: key('c') } as never }], 'ValidationException', "'transactItems.1.member.conditionCheck.conditionExpression' failed to satisfy constraint: Member must not be null"],
    ['a table that does not exist', () => [{ Put: { TableName: 'nowhere', Item: key('n') } }], 'ResourceNotFoundException', 'non-existent table'],
    ['an item over 400 KB', () => [put('huge', { b: S(big + 'x'.repeat(20 * 1024)) })], 'ValidationException', 'Item size has exceeded the maximum allowed size'],
    ['more than 4 MB in all', () => Array.from({ length: 11 }, (_, i) => put(`big${i}`, { b: S(big) })), 'ValidationException', 'Transaction payload size cannot exceed 4MB. Payload Size: '],
    ['a syntax error', () => [{ Update: { TableName: TABLE, Key: key('s'), UpdateExpression: 'SET' } }], 'ValidationException', 'Invalid UpdateExpression: Syntax error'],
    ['an operand of the wrong type', () => [put('beside-typed'), { Update: { TableName: TABLE, Key: key('typed'), UpdateExpression: 'ADD s :one', ExpressionAttributeValues: { ':one': N(1) } } }], 'ValidationException', 'An operand in the update expression has an incorrect data type'],
  ])('refuses %s as DynamoDB does', async (_case, items, name, message) => {
    const refused = await refusal(write(items()));
    expect(refused.name).toBe(name);
    expect(refused.message).toContain(message);
  });

  it('refuses a ClientRequestToken over 36 characters', async () => {
    const refused = await refusal(write([put('t')], 'x'.repeat(37)));
    expect([refused.name, refused.message]).toEqual(['ValidationException', expect.stringContaining("at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")]);
  });

  it('applies a transaction sent twice with one ClientRequestToken once, and refuses the token for another transaction', async () => {
    const token = `once-${Date.now()}`;
    await write([increment('once')], token);
    await write([increment('once')], token);
    expect((await read('once'))?.n).toEqual(N(1));
    expect((await refusal(write([put('elsewhere')], token))).name).toBe('IdempotentParameterMismatchException');
    expect(await read('elsewhere')).toBeUndefined();
  });

  it('runs a cancelled transaction again under its token once its condition holds', async () => {
    const token = `retry-${Date.now()}`;
    const guarded = [increment('late', { expression: 'attribute_exists(pk)' })];
    expect((await refusal(write(guarded, token))).name).toBe('TransactionCanceledException');
    await write([put('late', { n: N(10) })]);
    await write(guarded, token);
    expect((await read('late'))?.n).toEqual(N(11));
  });
});

describe(`TransactGetItems on ${testDynamoDb()}`, () => {
  it('reads every item, an empty answer where there is none, projections applied', async () => {
    await write([put('seen', { n: N(3), group: S('g3'), other: S('o') })]);
    const { Responses } = await dynamo.client.send(
      new TransactGetItemsCommand({
        TransactItems: [
          { Get: { TableName: TABLE, Key: key('seen') } },
          { Get: { TableName: TABLE, Key: key('unseen') } },
          { Get: { TableName: TABLE, Key: key('seen-too'), ProjectionExpression: 'n' } },
        ],
      }),
    );
    expect(Responses).toEqual([{ Item: { ...key('seen'), n: N(3), group: S('g3'), other: S('o') } }, {}, {}]);
    const projected = await dynamo.client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key('seen'), ProjectionExpression: 'n, #g', ExpressionAttributeNames: { '#g': 'group' } } }] }));
    expect(projected.Responses).toEqual([{ Item: { n: N(3), group: S('g3') } }]);
  });

  it.each<[string, () => { Get: { TableName: string; Key: Record<string, AttributeValue> } }[], string, string]>([
    ['one item twice', () => [{ Get: { TableName: TABLE, Key: key('x') } }, { Get: { TableName: TABLE, Key: key('x') } }], 'ValidationException', 'Transaction request cannot include multiple operations on one item'],
    ['101 items', () => Array.from({ length: 101 }, (_, i) => ({ Get: { TableName: TABLE, Key: key(`g${i}`) } })), 'ValidationException', 'Member must have length less than or equal to 100'],
    ['a table that does not exist', () => [{ Get: { TableName: 'nowhere', Key: key('x') } }], 'ResourceNotFoundException', 'non-existent table'],
  ])('refuses %s', async (_case, items, name, message) => {
    const refused = await refusal(dynamo.client.send(new TransactGetItemsCommand({ TransactItems: items() })));
    expect([refused.name, refused.message]).toEqual([name, expect.stringContaining(message)]);
  });
});

// Where DynamoDB Local is more lenient than DynamoDB, the embedded server answers as DynamoDB's
// documentation does: a check and a write of one item are two operations on it.
const onDynalite = testDynamoDb() === 'dynalite' ? describe : describe.skip;
onDynalite('the embedded DynamoDB beyond DynamoDB Local', () => {
  it('refuses a condition check and a write of the same item in one transaction', async () => {
    const refused = await refusal(write([put('checked'), { ConditionCheck: { TableName: TABLE, Key: key('checked'), ConditionExpression: 'attribute_exists(pk)' } }]));
    expect([refused.name, refused.message]).toEqual(['ValidationException', 'Transaction request cannot include multiple operations on one item']);
  });

  it('never shows half a transaction to a transactional read, however many race', async () => {
    await write([put('left', { n: N(0) }), put('right', { n: N(0) })]);
    const writers = Array.from({ length: 40 }, () => write([increment('left'), increment('right')]));
    const readers = Array.from({ length: 40 }, async () => {
      const { Responses } = await dynamo.client.send(new TransactGetItemsCommand({ TransactItems: [{ Get: { TableName: TABLE, Key: key('left') } }, { Get: { TableName: TABLE, Key: key('right') } }] }));
      return [Responses![0]!.Item!.n!.N, Responses![1]!.Item!.n!.N];
    });
    const [, seen] = await Promise.all([Promise.all(writers), Promise.all(readers)]);
    for (const [left, right] of seen) expect(left).toBe(right);
    expect([(await read('left'))?.n, (await read('right'))?.n]).toEqual([N(40), N(40)]);
  });
});

onDynalite('the embedded DynamoDB killed during transactions', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-transactions-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  /** dynalite on `dataDir` in a process of its own, as `npm start` runs it. */
  function startOwnProcess(): Promise<{ child: ChildProcess; endpoint: string }> {
    const script = `const s = require(${JSON.stringify(require.resolve('dynalite'))})({ createTableMs: 0, path: process.argv[1] });
      s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;
    const child = spawn(process.execPath, ['-e', script, join(dataDir, 'db')], { stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.stdout!.once('data', (port: Buffer) => resolve({ child, endpoint: `http://127.0.0.1:${port.toString().trim()}` }));
    });
  }

  it('keeps each transaction whole on disk: every item and index entry of it, or none', async () => {
    const first = await startOwnProcess();
    const client = new DynamoDBClient({ endpoint: first.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    await client.send(new CreateTableCommand({ TableName: TABLE, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: ['pk', 'sk', 'group'].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })), KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }], GlobalSecondaryIndexes: [{ IndexName: 'byGroup', KeySchema: [{ AttributeName: 'group', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }] }));
    let sent = 0;
    const landed = new Set<number>();
    const batch = (n: number) => Array.from({ length: 50 }, (_, i): TransactWriteItem => ({ Put: { TableName: TABLE, Item: { ...key(`b${n}-${i}`), group: S(`batch${n}`), pad: S('p'.repeat(2000)) } } }));
    const writers = Array.from({ length: 4 }, async () => {
      for (;;) {
        const n = sent++;
        try {
          await client.send(new TransactWriteItemsCommand({ TransactItems: batch(n) }));
          landed.add(n);
        } catch {
          return;
        }
      }
    });
    await eventually(async () => expect(landed.size).toBeGreaterThanOrEqual(20), 30_000);
    first.child.kill('SIGKILL');
    await Promise.all(writers);
    client.destroy();

    const restarted = await startEmbeddedDynamoDb({ path: join(dataDir, 'db') });
    try {
      for (let n = 0; n < sent; n++) {
        const items = await restarted.client.send(new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk AND sk = :sk', ExpressionAttributeValues: { ':pk': S(`b${n}-0`), ':sk': S('ITEM') } }));
        const entries = await restarted.client.send(new QueryCommand({ TableName: TABLE, IndexName: 'byGroup', KeyConditionExpression: '#g = :g', ExpressionAttributeNames: { '#g': 'group' }, ExpressionAttributeValues: { ':g': S(`batch${n}`) }, Select: 'COUNT' }));
        const all = await Promise.all(batch(n).map((action) => restarted.client.send(new GetItemCommand({ TableName: TABLE, Key: { pk: action.Put!.Item!.pk!, sk: action.Put!.Item!.sk! } }))));
        const present = all.filter((answer) => answer.Item).length;
        expect([n, present, entries.Count]).toEqual([n, items.Count ? 50 : 0, items.Count ? 50 : 0]);
        // An answered transaction is on disk.
        if (landed.has(n)) expect(present).toBe(50);
      }
    } finally {
      await restarted.stop();
    }
  }, 120_000);
});
