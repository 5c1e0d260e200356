import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { itemAccesses, itemSize, readUnits, writeUnits } from '../../local/dynamodb-capacity';

const USAGE = TABLE_SCHEMAS.usage.localName;
const KEYS = TABLE_SCHEMAS.keys.localName;

describe('item sizes, as DynamoDB counts them', () => {
  it('adds each attribute name to its value: strings by UTF-8 bytes, numbers by significant digits', () => {
    expect(itemSize({ pk: 'abc', é: 'é' })).toBe(2 + 3 + 2 + 2);
    // 12345: 5 significant digits, 3 bytes and 1; trailing and leading zeroes are not digits.
    expect(itemSize({ n: 12345 })).toBe(1 + 4);
    expect(itemSize({ n: 1200 })).toBe(1 + 2);
    expect(itemSize({ n: NumberValue.from('0.000012') })).toBe(1 + 2);
  });

  it('gives lists and maps 3 bytes and one per element, sets the sum of their elements, booleans and null one byte', () => {
    expect(itemSize({ l: ['ab', 'c'] })).toBe(1 + 3 + (2 + 1) + (1 + 1));
    expect(itemSize({ m: { k: 'v' } })).toBe(1 + 3 + (1 + 1 + 1));
    expect(itemSize({ s: new Set(['ab', 'cd']) })).toBe(1 + 4);
    expect(itemSize({ b: true, z: null })).toBe(2 + 2);
  });

  it('bills 4 KB per read unit (half eventually consistent) and 1 KB per write unit, at least one', () => {
    expect([readUnits(0, true), readUnits(4096, true), readUnits(4097, true), readUnits(100, false)]).toEqual([1, 1, 2, 0.5]);
    expect([writeUnits(0), writeUnits(1024), writeUnits(1025)]).toEqual([1, 1, 2]);
  });
});

describe('what a call read and wrote', () => {
  it('counts an update of an indexed item twice: the item, and its index entry on the index partition', () => {
    const image = { pk: 'KEY#a', sk: '2026-11-26#m#t', gsi1pk: 'ORG#o', gsi1sk: '2026-11-26#a', requests: 3 };
    const accesses = itemAccesses({ command: 'UpdateItem', input: { TableName: USAGE, Key: { pk: 'KEY#a', sk: '2026-11-26#m#t' } }, output: { Attributes: image }, error: undefined });
    const size = itemSize(image);
    expect(accesses).toEqual([
      { table: USAGE, partition: 'KEY#a', item: '2026-11-26#m#t', operation: 'write', consistent: true, bytes: size, units: 1 },
      { table: USAGE, index: 'byOrganization', partition: 'ORG#o', item: '2026-11-26#a', operation: 'write', consistent: true, bytes: size + 100, units: 1 },
    ]);
  });

  it('counts a put that moves an item in an index as a write to the new entry and a delete of the old one', () => {
    const accesses = itemAccesses({
      command: 'PutItem',
      input: { TableName: KEYS, Item: { pk: 'APIKEY#h', sk: 'APIKEY', gsi1pk: 'ORG#b#APIKEYS', gsi1sk: 'x' } },
      output: { Attributes: { pk: 'APIKEY#h', sk: 'APIKEY', gsi1pk: 'ORG#a#APIKEYS', gsi1sk: 'x' } },
      error: undefined,
    });
    expect(accesses.map((access) => `${access.index ?? 'table'} ${access.partition}`)).toEqual(['table APIKEY#h', 'byOrganization ORG#b#APIKEYS', 'byOrganization ORG#a#APIKEYS']);
  });

  it('counts a write refused by its condition on the item alone', () => {
    const error = Object.assign(new Error('failed'), { name: 'ConditionalCheckFailedException' });
    const accesses = itemAccesses({ command: 'PutItem', input: { TableName: KEYS, Item: { pk: 'ORG#o', sk: 'ORG', gsi1pk: 'ORGS', gsi1sk: 'o' } }, output: undefined, error });
    expect(accesses).toHaveLength(1);
    expect(accesses[0]).toMatchObject({ partition: 'ORG#o', operation: 'write', units: 1 });
  });

  it('counts each key of a batch read, found or not, and none DynamoDB left unprocessed', () => {
    const accesses = itemAccesses({
      command: 'BatchGetItem',
      input: { RequestItems: { [KEYS]: { Keys: [{ pk: 'A', sk: '1' }, { pk: 'B', sk: '1' }, { pk: 'C', sk: '1' }], ConsistentRead: true } } },
      output: { Responses: { [KEYS]: [{ pk: 'A', sk: '1', big: 'x'.repeat(5000) }] }, UnprocessedKeys: { [KEYS]: { Keys: [{ pk: 'C', sk: '1' }] } } },
      error: undefined,
    });
    expect(accesses.map((access) => [access.partition, access.units])).toEqual([['A', 2], ['B', 1]]);
  });

  it('counts a query as one read of its partition, its items together, eventually consistent on an index', () => {
    const accesses = itemAccesses({
      command: 'Query',
      input: { TableName: USAGE, IndexName: 'byOrganization', KeyConditionExpression: '#p = :org AND gsi1sk > :from', ExpressionAttributeNames: { '#p': 'gsi1pk' }, ExpressionAttributeValues: { ':org': 'ORG#o', ':from': 'a' } },
      output: { Items: [{ v: 'x'.repeat(3000) }, { v: 'x'.repeat(3000) }] },
      error: undefined,
    });
    expect(accesses).toEqual([{ table: USAGE, index: 'byOrganization', partition: 'ORG#o', operation: 'read', consistent: false, bytes: 6002, units: 1 }]);
  });

  it('reads calls made with raw attribute values as the document client form', () => {
    const accesses = itemAccesses({ command: 'GetItem', input: { TableName: KEYS, Key: { pk: { S: 'ORG#o' }, sk: { S: 'ORG' } }, ConsistentRead: true }, output: { Item: { pk: { S: 'ORG#o' }, sk: { S: 'ORG' }, n: { N: '12' } } }, error: undefined });
    expect(accesses).toEqual([{ table: KEYS, partition: 'ORG#o', item: 'ORG', operation: 'read', consistent: true, bytes: 2 + 5 + 2 + 3 + 1 + 2, units: 1 }]);
  });
});
