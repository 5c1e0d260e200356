import { serviceMs, type AwsCall } from '../../local/aws-calls';
import type { ItemAccess } from '../../local/dynamodb-capacity';
import { PRICES, routeCost } from '../../local/cost-model';
import { combinedLoad, describeHotspot, scaleLoad, shortened, withinTargets } from '../../local/scale-model';

const access = (overrides: Partial<ItemAccess>): ItemAccess => ({
  table: 'modelgate-usage',
  partition: 'KEY#a',
  item: 'd',
  operation: 'write',
  consistent: true,
  bytes: 100,
  units: 1,
  ...overrides,
});

const call = (items: ItemAccess[], overrides: Partial<AwsCall> = {}): AwsCall => ({
  requestId: 'r',
  functionName: 'inference',
  service: 'DynamoDB',
  command: 'UpdateItem',
  tables: ['modelgate-usage'],
  start: 0,
  end: 1,
  serviceStart: 0,
  serviceEnd: 1,
  items,
  ...overrides,
});

describe('the scale model', () => {
  it('scales each item and partition-key value to the rate, against 1,000 write and 3,000 read units a second', () => {
    // 4 requests: each writes its own item of one partition, and the first two read one item.
    const calls = [0, 1, 2, 3].map((i) => call([access({ item: `d${i}` }), ...(i < 2 ? [access({ table: 'modelgate-keys', partition: 'APIKEY#k', item: 'APIKEY', operation: 'read', units: 1 })] : [])]));
    const load = scaleLoad(calls, 4, 2000);
    expect(load.partitions.map((spot) => [spot.name, spot.writeUnitsPerSecond, spot.readUnitsPerSecond, spot.percent])).toEqual([
      ['usage KEY#a', 2000, 0, 200],
      ['keys APIKEY#k', 0, 1000, expect.closeTo(100 / 3)],
    ]);
    expect(load.items[0]).toEqual({ name: 'usage KEY#a / d0', readUnitsPerSecond: 0, writeUnitsPerSecond: 500, percent: 50 });
    // Items at 50% exactly are within; the partition at 200% is not.
    expect(withinTargets(load)).toBe(false);
    expect(withinTargets(scaleLoad(calls, 4, 1000))).toBe(true);
  });

  it('counts index partitions apart from their table, and a query against its partition only', () => {
    const load = scaleLoad([call([access({ index: 'byOrganization', partition: 'ORG#o' }), access({ operation: 'read', item: undefined, units: 0.5, consistent: false })])], 1, 100);
    expect(load.partitions.map((spot) => spot.name).sort()).toEqual(['usage KEY#a', 'usage/byOrganization ORG#o']);
    expect(load.items.map((spot) => spot.name)).toEqual(['usage/byOrganization ORG#o / d']);
  });

  it("adds an item's read share and write share: DynamoDB's partition budget is one for both", () => {
    // 1,500 reads a second (half of 3,000) and 250 writes (a quarter of 1,000): three quarters of the partition.
    const load = scaleLoad([call([access({ operation: 'read', units: 3 }), access({ units: 0.5 })])], 1, 500);
    expect(load.items[0]).toMatchObject({ readUnitsPerSecond: 1500, writeUnitsPerSecond: 250, percent: 75 });
    expect(describeHotspot(load.items[0])).toBe('usage KEY#a / d: 1,500 RCU/s + 250 WCU/s (75%)');
  });

  it('combines loads at their own rates: requests, and containers\' background reads', () => {
    const requests = [call([access({ units: 1 })])];
    const background = [call([access({ operation: 'read', units: 1 })], { command: 'GetItem' })];
    // 300 requests a second, and 100,000 containers reading once every 50 s.
    const load = combinedLoad([
      { calls: requests, timesPerSecond: 300 },
      { calls: background, timesPerSecond: 100_000 / 50 },
    ]);
    expect(load.items[0]).toMatchObject({ writeUnitsPerSecond: 300, readUnitsPerSecond: 2000, percent: expect.closeTo(30 + 200 / 3) });
  });

  it('counts KMS signatures per second', () => {
    expect(scaleLoad([call([], { service: 'KMS', command: 'Sign', items: undefined })], 2, 300).kmsSignsPerSecond).toBe(150);
  });

  it('names kinds of items, not one caller\'s', () => {
    expect(shortened(`usage KEY#${'ab'.repeat(32)}#3 / 2026-11-26#m#t#3`)).toBe('usage KEY#<hash>#3 / <date>#m#t#3');
    expect(shortened('keys COPY#ORG#0b6f7c1e-8a3d-4c55-9a61-3f1d2e4b5a01#ORG#7')).toBe('keys COPY#ORG#<id>#ORG#7');
  });
});

describe('service time', () => {
  it('counts calls side by side once: the union of their service times', () => {
    expect(serviceMs([{ serviceStart: 0, serviceEnd: 4 }, { serviceStart: 1, serviceEnd: 3 }, { serviceStart: 2, serviceEnd: 6 }, { serviceStart: 10, serviceEnd: 11 }])).toBe(7);
  });
});

describe('what a million requests cost', () => {
  it('prices the units, the signatures and a duration at the function\'s memory, per million requests', () => {
    const requestCalls = [
      call([access({ operation: 'read', units: 1 }), access({ operation: 'read', units: 0.5 })], { command: 'BatchGetItem', start: 0, end: 2, serviceStart: 0, serviceEnd: 2 }),
      call([access({ units: 2 })], { start: 3, end: 4, serviceStart: 3, serviceEnd: 4 }),
      call([], { service: 'KMS', command: 'Sign', items: undefined, start: 5, end: 6, serviceStart: 5, serviceEnd: 6 }),
    ];
    // 10 ms locally, 4 of them in the calls' services: 6 ms of CPU at one vCPU.
    const cost = routeCost({ route: 'POST /x', functionName: 'tokenExchange', callsPerRequest: [requestCalls], localMs: [10], answerBytes: [2 * 1024 ** 2] });
    expect(cost).toMatchObject({ memoryMb: 256, readUnits: 1.5, writeUnits: 2, signs: 1 });
    // 6 ms × 1769 / 256 of CPU, and three stages in AWS: 5 + 5 + 10 ms.
    expect(cost.durationMs).toBe(Math.ceil((6 * 1769) / 256 + 20));
    expect(cost.perMillion.reads).toBeCloseTo(1.5 * 0.125);
    expect(cost.perMillion.writes).toBeCloseTo(2 * 0.625);
    expect(cost.perMillion.kms).toBeCloseTo(15);
    expect(cost.perMillion.compute).toBeCloseTo(1e6 * 0.25 * (cost.durationMs / 1000) * PRICES.lambdaGbSecond);
    // Each request's log lines at $0.50 a GB, 5% of requests traced at $5 a million, 2 MB answers at $0.09 a GB.
    expect(cost.perMillion.logs).toBeCloseTo((1e6 * 1460 * 0.5) / 1024 ** 3);
    expect(cost.perMillion.traces).toBeCloseTo(0.25);
    expect(cost.perMillion.transfer).toBeCloseTo((1e6 * 2 * 0.09) / 1024);
    const { logs, traces, transfer } = cost.perMillion;
    expect(cost.perMillion.total).toBeCloseTo(cost.perMillion.compute + 0.2 + 3.5 + 0.6 + cost.perMillion.reads + cost.perMillion.writes + 15 + logs + traces + transfer);
  });
});
