import { createHash } from 'node:crypto';
import { BatchWriteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoUsageFold, POPULARITY_COPIES } from '../../../lambdas/aws/dynamo-usage-fold';
import { DynamoUsageStore } from '../../../lambdas/aws/dynamo-usage-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { daysBefore, type UsageRecord } from '../../../lambdas/usage/usage';
import { itemAccesses } from '../../../local/dynamodb-capacity';
import { providerEndpoint, publicModel } from '../../support/catalog-fixtures';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { interceptSend } from '../../support/intercepted-client';

const TABLE = TABLE_SCHEMAS.usage.localName;
/** The workspace of every key here: its totals are read beside the keys' in every view. */
const WORKSPACE = 'w-views';

const record = (overrides: Partial<UsageRecord> & Pick<UsageRecord, 'organizationId' | 'keyHash' | 'date'>): UsageRecord => ({
  workspaceId: WORKSPACE,
  model: publicModel('acme/chat', { canonical_slug: 'acme/chat' }),
  endpoint: providerEndpoint('acme/fp8', { provider_name: 'Acme' }),
  promptTokens: 10,
  completionTokens: 5,
  cost: '0.0000003',
  costParts: { prompt: '0.0000002', completion: '0.0000001' },
  via: { credential: 'api_key' },
  ...overrides,
});

/**
 * The fold of closed days (lambdas/aws/dynamo-usage-fold.ts): every view as exact before a fold
 * as after it, whatever point a fold was cut short at, and what a view reads bounded whatever the
 * history; the popularity figures of the last week built from the folded days.
 */
describe('the usage fold', () => {
  let tables: Awaited<ReturnType<typeof startEmbeddedTables>>;
  let store: DynamoUsageStore;
  let fold: DynamoUsageFold;
  beforeAll(async () => {
    tables = await startEmbeddedTables();
    store = new DynamoUsageStore(tables.documentClient, TABLE);
    fold = new DynamoUsageFold(tables.documentClient, TABLE);
  });
  afterAll(() => tables.stop());

  /** Every view of the organization's keys at `now`: GET /key for each, GET /keys for all, the activity of the 30 days, and what their workspace spent. */
  const views = async (organizationId: string, hashes: string[], now: Date) => ({
    each: await Promise.all(hashes.map(async (hash) => Object.fromEntries(await store.keyUsage(organizationId, [hash], now)))),
    all: Object.fromEntries(await store.keyUsage(organizationId, hashes, now)),
    activity: await store.activity(organizationId, daysBefore(now, 30), daysBefore(now, 0)),
    workspace: await store.workspaceUsage(organizationId, WORKSPACE, now, '0000-01-01'),
  });

  // Wednesday 2026-12-02, 01:00 UTC: the 1st is closed, the month and the week began days ago.
  const now = new Date('2026-12-02T01:00:00Z');
  /** Two keys of the organization: a key belongs to one organization. */
  const keysOf = (organizationId: string) => [0, 1].map((i) => createHash('sha256').update(`${organizationId}#${i}`).digest('hex'));

  async function seedOrganization(organizationId: string, days = ['2026-11-20', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']): Promise<string[]> {
    const KEYS = keysOf(organizationId);
    for (const [i, date] of days.entries()) {
      for (const keyHash of KEYS) {
        await store.record(record({ organizationId, keyHash, date, cost: `0.00000${i + 1}`, via: i % 2 ? { credential: 'access_token', policyId: 'p1' } : { credential: 'api_key' } }));
        await store.record(record({ organizationId, keyHash, date, cost: '0.25', model: publicModel('acme/other', { canonical_slug: 'acme/other' }) }));
      }
    }
    return KEYS;
  }

  it('folds the closed days only, and every view reads the same before and after', async () => {
    const KEYS = await seedOrganization('org-fold');
    const before = await views('org-fold', KEYS, now);
    expect(before.each[0]).toEqual({ [KEYS[0]!]: { usage: 1.250015, daily: 0.250005, weekly: 0.750012, monthly: 0.500009 } });

    expect(await fold.foldOrganization('org-fold', now)).toEqual(['2026-11-20', '2026-11-29', '2026-11-30', '2026-12-01']);
    expect(await views('org-fold', KEYS, now)).toEqual(before);
    // Nothing left to fold until the 2nd is over, half an hour after midnight.
    expect(await fold.foldOrganization('org-fold', new Date('2026-12-03T00:29:00Z'))).toEqual([]);
    await store.record(record({ organizationId: 'org-fold', keyHash: KEYS[0]!, date: '2026-12-02', cost: '1' }));
    const later = new Date('2026-12-03T00:31:00Z');
    const beforeSecond = await views('org-fold', KEYS, later);
    expect(await fold.foldOrganization('org-fold', later)).toEqual(['2026-12-02']);
    expect(await views('org-fold', KEYS, later)).toEqual(beforeSecond);
  });

  it('folds each day once, sent twice or three at a time', async () => {
    const KEYS = await seedOrganization('org-twice');
    const before = await views('org-twice', KEYS, now);
    await Promise.all([fold.foldOrganization('org-twice', now), fold.foldOrganization('org-twice', now), fold.foldOrganization('org-twice', now)]);
    await fold.foldOrganization('org-twice', now);
    expect(await views('org-twice', KEYS, now)).toEqual(before);
  });

  it('never moves the fold mark back: a fold that began earlier and marks last leaves the later mark', async () => {
    await seedOrganization('org-mark');
    // The earlier fold (through the 1st) is held at its last write, the mark, until the later one (through the 2nd) is done.
    let release!: () => void;
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const atMark = new Promise<void>((resolve) => (reached = resolve));
    let marks = 0;
    const slow = interceptSend(tables.documentClient, async (command, send) => {
      const input = command.input as { Key?: { sk?: string }; ExpressionAttributeValues?: Record<string, unknown> };
      if (command.constructor.name === 'UpdateCommand' && input.Key?.sk === 'FOLDED' && input.ExpressionAttributeValues?.[':date'] === '2026-12-01' && ++marks === 2) {
        reached();
        await held;
      }
      return send();
    });
    const earlier = new DynamoUsageFold(slow, TABLE).foldOrganization('org-mark', now);
    await atMark;
    await fold.foldOrganization('org-mark', new Date('2026-12-03T01:00:00Z'));
    expect(await store.foldMark('org-mark')).toEqual({ foldedThrough: '2026-12-02' });
    release();
    await earlier;
    expect(await store.foldMark('org-mark')).toEqual({ foldedThrough: '2026-12-02' });
  });

  it('leaves every view exact when a fold is cut short at any of its writes, and the next fold completes it', async () => {
    const WRITES = new Set(['UpdateCommand', 'BatchWriteCommand', 'PutCommand']);
    // Two closed days and today: a fold of two days, each with every kind of write.
    const days = ['2026-11-30', '2026-12-01', '2026-12-02'];
    let points = 0;
    await seedOrganization('org-count', days);
    const counting = interceptSend(tables.documentClient, (command, send) => {
      if (WRITES.has(command.constructor.name)) points++;
      return send();
    });
    await new DynamoUsageFold(counting, TABLE).foldOrganization('org-count', now);
    expect(points).toBeGreaterThan(5);

    for (let point = 1; point <= points; point++) {
      const organizationId = `org-cut-${point}`;
      const KEYS = await seedOrganization(organizationId, days);
      const before = await views(organizationId, KEYS, now);
      let writes = 0;
      const failing = interceptSend(tables.documentClient, (command, send) => {
        if (WRITES.has(command.constructor.name) && ++writes === point) throw new Error(`killed at write ${point}`);
        return send();
      });
      await expect(new DynamoUsageFold(failing, TABLE).foldOrganization(organizationId, now)).rejects.toThrow(`killed at write ${point}`);
      expect({ point, views: await views(organizationId, KEYS, now) }).toEqual({ point, views: before });
      await fold.foldOrganization(organizationId, now);
      expect({ point, views: await views(organizationId, KEYS, now) }).toEqual({ point, views: before });
    }
    // One fold cut short at each of its writes, then completed: many round trips on a busy machine.
  }, 120_000);

  describe('after a fold under a clock ahead of this one', () => {
    // The moved clock's fold reached 19 February, dropping December's cost from the totals (they keep two months); back on this clock, it is Saturday the 5th at 01:00.
    const ahead = new Date('2027-02-20T12:00:00Z');
    const at = new Date('2026-12-05T01:00:00Z');
    const other = publicModel('acme/other', { canonical_slug: 'acme/other' });
    /** Usage of 15 February under the moved clock, its fold, and then, on this clock, a completion of the 4th recorded after midnight and two of today. */
    async function steppedBack(organizationId: string, foldAhead: boolean): Promise<string[]> {
      const KEYS = await seedOrganization(organizationId);
      await store.record(record({ organizationId, keyHash: KEYS[0]!, date: '2027-02-15', cost: '3' }));
      if (foldAhead) await fold.foldOrganization(organizationId, ahead);
      await store.record(record({ organizationId, keyHash: KEYS[0]!, date: '2026-12-04', cost: '0.5' }));
      await store.record(record({ organizationId, keyHash: KEYS[1]!, date: '2026-12-05', cost: '2', model: other }));
      await store.record(record({ organizationId, keyHash: KEYS[0]!, date: '2026-12-05', cost: '0.125' }));
      return KEYS;
    }
    /** The views with each key named by its place, in its order: two organizations with the same usage read the same. */
    const placed = async (organizationId: string, KEYS: string[], at: Date) => {
      const read = await views(organizationId, KEYS, at);
      const name = (value: unknown) => KEYS.reduce((json, hash, i) => json.replaceAll(hash, `key-${i}`), JSON.stringify(value));
      return { each: name(read.each), all: KEYS.map((hash) => read.all[hash]), activity: read.activity.map(name).sort() };
    };
    let truth: Awaited<ReturnType<typeof placed>>;
    beforeAll(async () => {
      truth = await placed('org-never-folded', await steppedBack('org-never-folded', false), at);
    });

    it('reopens the days it folded ahead: every view counts what was written into them, once, and folds them again as they close', async () => {
      const KEYS = await steppedBack('org-ahead', true);
      // The views miss what was written into the folded days until the next fold.
      expect(await placed('org-ahead', KEYS, at)).not.toEqual(truth);
      expect(await fold.foldOrganization('org-ahead', at)).toEqual(['2026-12-04']);
      expect(await store.foldMark('org-ahead')).toEqual({ foldedThrough: '2026-12-04' });
      expect(await placed('org-ahead', KEYS, at)).toEqual(truth);
      expect(await fold.foldOrganization('org-ahead', at)).toEqual([]);
      expect(await placed('org-ahead', KEYS, at)).toEqual(truth);
      const later = new Date('2026-12-06T01:00:00Z');
      expect(await fold.foldOrganization('org-ahead', later)).toEqual(['2026-12-05']);
      expect(await placed('org-ahead', KEYS, later)).toEqual(await placed('org-never-folded', keysOf('org-never-folded'), later));
      // February again, on this clock: its 15th folded once more, and counted once.
      const february = new Date('2027-02-16T01:00:00Z');
      expect(await fold.foldOrganization('org-ahead', february)).toEqual(['2027-02-15']);
      expect(await placed('org-ahead', KEYS, february)).toEqual(await placed('org-never-folded', keysOf('org-never-folded'), february));
    });

    it('finishes a reopen cut short at any of its writes in the next fold', async () => {
      const WRITES = new Set(['UpdateCommand', 'BatchWriteCommand', 'PutCommand']);
      let point = 1;
      for (; ; point++) {
        const organizationId = `org-ahead-cut-${point}`;
        const KEYS = await steppedBack(organizationId, true);
        let writes = 0;
        const failing = interceptSend(tables.documentClient, (command, send) => {
          if (WRITES.has(command.constructor.name) && ++writes === point) throw new Error(`killed at write ${point}`);
          return send();
        });
        const cut = await new DynamoUsageFold(failing, TABLE).foldOrganization(organizationId, at).then(
          () => false,
          () => true,
        );
        if (!cut) break;
        await fold.foldOrganization(organizationId, at);
        expect({ point, views: await placed(organizationId, KEYS, at) }).toEqual({ point, views: truth });
      }
      // The mark set back, two keys' totals, the mark's reopen forgotten, and the fold of the 4th.
      expect(point).toBeGreaterThan(8);
    }, 120_000);
  });

  it('reads a bounded amount whatever the history: GET /key at most 40 read units after a year of 20 models a day', async () => {
    const organizationId = 'org-year';
    const hash = '3'.repeat(64);
    const models = Array.from({ length: 20 }, (_, i) => `acme/model-${i}`);
    // A year of history, written as the completions of each day would have left it, one shard each.
    const items = Array.from({ length: 365 }, (_, day) => daysBefore(now, day)).flatMap((date) =>
      models.map((model, i) => {
        const shard = (date.charCodeAt(9) + i) % 64;
        return {
          pk: `KEY#${hash}#${shard % 16}`,
          sk: `${date}#${model}#acme/fp8#${shard}`,
          gsi1pk: `ORG#${organizationId}#${shard}`,
          gsi1sk: `${date}#${hash}#${model}#acme/fp8`,
          date,
          model,
          permaslug: model,
          endpointId: `${model}:acme/fp8`,
          providerName: 'Acme',
          requests: 3,
          promptTokens: 30,
          completionTokens: 15,
          cost: 0.001,
          via_api_key: 3,
        };
      }),
    );
    for (let start = 0; start < items.length; start += 25) {
      await tables.documentClient.send(new BatchWriteCommand({ RequestItems: { [TABLE]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })) } }));
    }
    const readUnits = async (read: (measured: DynamoUsageStore) => Promise<unknown>) => {
      let units = 0;
      const measuring = interceptSend(tables.documentClient, async (command, send) => {
        const output = (await send()) as Record<string, unknown>;
        const name = command.constructor.name.replace(/Command$/, '');
        units += itemAccesses({ command: name === 'BatchGet' ? 'BatchGetItem' : name === 'Get' ? 'GetItem' : name, input: command.input, output, error: undefined }).reduce((sum, access) => sum + access.units, 0);
        return output;
      });
      await read(new DynamoUsageStore(measuring, TABLE));
      return units;
    };
    const unfolded = await readUnits((measured) => measured.keyUsage(organizationId, [hash], now));
    const expected = { usage: 7.3, daily: 0.02, weekly: 0.06, monthly: 0.04 };
    expect(Object.fromEntries(await store.keyUsage(organizationId, [hash], now))).toEqual({ [hash]: expected });

    await fold.foldOrganization(organizationId, now);
    const folded = await readUnits((measured) => measured.keyUsage(organizationId, [hash], now));
    expect(Object.fromEntries(await store.keyUsage(organizationId, [hash], now))).toEqual({ [hash]: expected });
    // Before the fold GET /key read the year (a lower bound here: its query projects three attributes), after it the totals and one day.
    expect({ folded: folded <= 40, history: unfolded > 4 * folded }).toEqual({ folded: true, history: true });
    // The activity of the last 30 days: the folded rows, one item each, and today's shards.
    const activity = await readUnits((measured) => measured.activity(organizationId, daysBefore(now, 30), daysBefore(now, 0)));
    expect((await store.activity(organizationId, daysBefore(now, 30), daysBefore(now, 0))).length).toBe(31 * 20);
    expect(activity).toBeLessThan(200);
  }, 120_000);

  describe("a workspace's usage", () => {
    const ALL_TIME = '0000-01-01';
    /** What `hashes` spent, summed view by view: what their workspace's own figures must say. */
    const sumOf = async (organizationId: string, hashes: string[], at: Date) => {
      const each = await Promise.all(hashes.map(async (hash) => (await store.keyUsage(organizationId, [hash], at)).get(hash)!));
      const round = (value: number) => Math.round(value * 1e9) / 1e9;
      return { usage: round(each.reduce((sum, one) => sum + one.usage, 0)), daily: round(each.reduce((sum, one) => sum + one.daily, 0)), weekly: round(each.reduce((sum, one) => sum + one.weekly, 0)), monthly: round(each.reduce((sum, one) => sum + one.monthly, 0)) };
    };

    it("is its keys' usage, read from its own totals and the shards after them, before and after a fold, other workspaces and no workspace apart", async () => {
      const organizationId = 'org-workspaces';
      const [a, b, c, m] = ['a', 'b', 'c', 'm'].map((name) => createHash('sha256').update(`${organizationId}#${name}`).digest('hex')) as [string, string, string, string];
      for (const [i, date] of ['2026-11-20', '2026-11-30', '2026-12-01', '2026-12-02'].entries()) {
        await store.record(record({ organizationId, keyHash: a, workspaceId: 'w-one', date, cost: `0.0${i + 1}` }));
        await store.record(record({ organizationId, keyHash: b, workspaceId: 'w-one', date, cost: '0.5' }));
        await store.record(record({ organizationId, keyHash: c, workspaceId: 'w-two', date, cost: '7' }));
        await store.record(record({ organizationId, keyHash: m, workspaceId: null, date, cost: '11' }));
      }
      const expected = await sumOf(organizationId, [a, b], now);
      expect(expected).toEqual({ usage: 2.1, daily: 0.54, weekly: 1.59, monthly: 1.07 });
      expect(await store.workspaceUsage(organizationId, 'w-one', now, ALL_TIME)).toEqual(expected);
      await fold.foldOrganization(organizationId, now);
      expect(await store.workspaceUsage(organizationId, 'w-one', now, ALL_TIME)).toEqual(expected);
      expect(await store.workspaceUsage(organizationId, 'w-two', now, ALL_TIME)).toEqual(await sumOf(organizationId, [c], now));
      expect(await store.workspaceUsage(organizationId, 'w-none', now, ALL_TIME)).toEqual({ usage: 0, daily: 0, weekly: 0, monthly: 0 });
    });

    it('answers only from the day its totals count: after usage an earlier release wrote without a workspace, or a fold of an earlier release', async () => {
      const organizationId = 'org-workspaces-earlier';
      const hash = createHash('sha256').update(organizationId).digest('hex');
      // Shard 0 of the key on the 1st, as an earlier release wrote it: no workspace.
      await new DynamoUsageStore(tables.documentClient, TABLE, () => 0).record(record({ organizationId, keyHash: hash, date: '2026-12-01', cost: '1' }));
      await tables.documentClient.send(new UpdateCommand({ TableName: TABLE, Key: { pk: `KEY#${hash}#0`, sk: '2026-12-01#acme/chat#acme/fp8#0' }, UpdateExpression: 'REMOVE workspaceId' }));
      await store.record(record({ organizationId, keyHash: hash, date: '2026-12-02', cost: '2' }));
      expect(await store.workspaceUsage(organizationId, WORKSPACE, now, '2026-12-02')).toBeUndefined();
      await fold.foldOrganization(organizationId, now);
      // Folded, the 1st is in no workspace's totals: they count from the 2nd.
      expect(await store.workspaceUsage(organizationId, WORKSPACE, now, '2026-12-01')).toBeUndefined();
      expect(await store.workspaceUsage(organizationId, WORKSPACE, now, '2026-12-02')).toEqual({ usage: 2, daily: 2, weekly: 2, monthly: 2 });

      // An organization an earlier release folded (a mark without `workspacesFrom`) counts from the first day this release folds.
      const older = 'org-workspaces-older';
      await tables.documentClient.send(new PutCommand({ TableName: TABLE, Item: { pk: `ORG#${older}#ACTIVITY`, sk: 'FOLDED', foldedThrough: '2026-11-25' } }));
      await store.record(record({ organizationId: older, keyHash: hash, date: '2026-11-30', cost: '4' }));
      expect(await store.workspaceUsage(older, WORKSPACE, now, '2026-11-30')).toBeUndefined();
      await fold.foldOrganization(older, now);
      expect(await store.workspaceUsage(older, WORKSPACE, now, '2026-11-29')).toBeUndefined();
      expect(await store.workspaceUsage(older, WORKSPACE, now, '2026-11-30')).toEqual({ usage: 4, daily: 0, weekly: 4, monthly: 0 });
    });
  });

  it('builds the popularity figures of the last seven closed days from every organization, on every copy', async () => {
    const at = new Date('2026-12-20T12:00:00Z');
    for (const [organizationId, date, model] of [
      ['org-p1', '2026-12-19', 'acme/hot'],
      ['org-p2', '2026-12-13', 'acme/hot'],
      ['org-p2', '2026-12-12', 'acme/stale'],
      ['org-p1', '2026-12-20', 'acme/today'],
    ] as const) {
      await store.record(record({ organizationId, keyHash: '4'.repeat(64), date, model: publicModel(model, { canonical_slug: model }) }));
      await fold.foldOrganization(organizationId, at);
    }
    const built = await fold.buildPopularity(at);
    expect(Object.fromEntries(built)).toMatchObject({ 'acme/hot': { requests: 2, tokens: 30 } });
    expect(built.has('acme/stale')).toBe(false);
    expect(built.has('acme/today')).toBe(false);
    const read = await Promise.all(Array.from({ length: POPULARITY_COPIES }, (_, copy) => new DynamoUsageFold(tables.documentClient, TABLE, () => (copy + 0.5) / POPULARITY_COPIES).popularity()));
    for (const figures of read) expect(figures).toEqual(built);
  });
});
