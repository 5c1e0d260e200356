import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { SPEND_SHARDS } from '../../lambdas/spending/ledgers';
import { ITEM_SHARE, KMS_ECC_SIGN_QUOTA, PARTITION_SHARE, describeHotspot, type ScaleLoad } from '../../local/scale-model';
import { TRAFFIC_ROWS, type MeasuredRow, type TrafficRow, type TrafficRowId } from '../support/scale-rows';
import { measureScale } from '../support/scale-traffic';
import { MODELLED_CONCURRENCY, atCompletionSeconds, containersOf, rowLoad, togetherLoad, type BackgroundReads } from '../support/scale-scenarios';

/**
 * The scale model's targets (docs/benchmarks.md, "Scale"): each traffic row, driven through the
 * real handlers on the local runtime and scaled to its rate, keeps every item within half of
 * DynamoDB's per-partition limits and every partition-key value (of a table or an index)
 * within them. The embedded DynamoDB never throttles: this is where a hot item would show.
 * Counts are deterministic (a still clock, an evenly spread sequence for the random choices);
 * `npm run bench` prints the same rows with more requests.
 */
/** The hottest item within half a partition's limits, the hottest partition-key value within them (none: nothing touched). */
function expectWithinTargets(load: ScaleLoad): void {
  const [item, partition] = [load.items[0], load.partitions[0]];
  expect({ item: describeHotspot(item), within: (item?.percent ?? 0) <= ITEM_SHARE * 100 }).toEqual({ item: describeHotspot(item), within: true });
  expect({ partition: describeHotspot(partition), within: (partition?.percent ?? 0) <= PARTITION_SHARE * 100 }).toEqual({ partition: describeHotspot(partition), within: true });
}

/**
 * Each row sends as many requests as spread its writes exactly over the shards and copies they
 * fall on: a workspace's spend shards at 50,000 a second, a key's below; every row's figures are
 * per request, scaled to its rate.
 */
const sampled = (row: TrafficRow) => ((row.rate ?? 0) >= 50_000 ? SPEND_SHARDS.workspace : SPEND_SHARDS.key);

describe('the data layout at internet scale', () => {
  let rows: Map<TrafficRowId, MeasuredRow>;
  let background: BackgroundReads;

  beforeAll(async () => {
    const measured = await measureScale({ requests: sampled, exchanges: 32, rows: TRAFFIC_ROWS.map((row) => row.id) });
    rows = new Map(measured.rows.map((row) => [row.id, row]));
    background = measured.background;
  }, 300_000);

  it.each(TRAFFIC_ROWS.map((row) => [row.traffic, row.rate, row.id] as const))('%s at %d/s, its containers\' own reads included: every item within half a partition, every partition-key value within its limits', (_traffic, _rate, id) => {
    expectWithinTargets(rows.get(id)!.load!);
  });

  it.each([
    ['limited-key-completions', 'reset'],
    ['limited-key-completions', 'refused'],
    ['limited-workspace-completions', 'reset'],
    ['limited-workspace-completions', 'refused'],
    ['limited-key-completions', 'herd'],
    ['limited-workspace-completions', 'herd'],
  ] as const)('%s at the moment the fleet meets its ledgers together (%s): within the limits', (id, moment) => {
    const row = rows.get(id)!;
    const load = rowLoad(row, background, moment);
    expectWithinTargets(load);
    // The moment is in the figures: the ledger items take the grants of the next period, the refused fleet's reads, or the herd's takes from the branches.
    const ledgers = load.items.filter((item) => item.name.includes('BUDGET#'));
    const shown = { reset: (name: string) => name.endsWith('+1'), refused: () => true, herd: (name: string) => name.includes('#<each>') }[moment];
    expect(ledgers.some((item) => shown(item.name) && (moment === 'refused' ? item.readUnitsPerSecond : item.writeUnitsPerSecond) > 0)).toBe(true);
  });

  it.each([5, 30])('every completion row with completions of %d s, at the rate the modelled concurrency serves, at each moment of its ledgers: within the limits', (seconds) => {
    for (const row of rows.values()) {
      if (row.functionName !== 'inference' || row.rate === undefined) continue;
      const long = atCompletionSeconds(row, seconds);
      expect(containersOf(long).inference).toBeLessThanOrEqual(MODELLED_CONCURRENCY);
      for (const moment of ['steady', 'reset', 'refused', 'herd'] as const) expectWithinTargets(rowLoad(long, background, moment));
    }
  });

  it('every target at once, each at its rate, with the containers they all keep busy and what each reads on its own: within the limits, read and write shares added', () => {
    expectWithinTargets(togetherLoad([...rows.values()], background));
  });

  it.each(['key-completions', 'token-completions', 'key-catalog', 'organization-completions', 'model-completions'] as const)(
    '%s: still reads the key on every request, strongly consistent (docs/reference.md#scopes-and-access rule 6: no cache delays a disabled key)',
    (id) => {
      const row = rows.get(id)!;
      const keyReads = row.calls.flatMap((call) => call.items ?? []).filter((access) => access.table === TABLE_SCHEMAS.keys.localName && access.partition.includes('APIKEY#'));
      expect(keyReads).toHaveLength(row.requests);
      expect(keyReads.every((access) => access.operation === 'read' && access.consistent)).toBe(true);
    },
  );

  it('counts every completion in one usage write and records its generation, keeps it open and in flight between, and nothing else: popularity is folded off the request path', () => {
    for (const id of ['key-completions', 'organization-completions', 'model-completions'] as const) {
      const row = rows.get(id)!;
      for (const calls of row.callsPerRequest) {
        const usageCalls = calls.filter((call) => call.tables[0] === TABLE_SCHEMAS.usage.localName);
        // The generation is a partition of its own (its random id), the open completion an item of its own: no partition takes two.
        const labels = usageCalls.map((call) => `${call.command} ${call.items![0]!.partition.replace(/^(GEN|OPEN)#.*/, '$1').replace(/^KEY#.*/, 'usage')}`);
        expect(labels.filter((label) => !label.startsWith('UpdateItem SPEND#')).sort()).toEqual(['DeleteItem OPEN', 'PutItem GEN', 'PutItem OPEN', 'UpdateItem usage']);
        // In flight on each scope's spend item (its key's, and its workspace's): its estimate beside the put, its cost in its place once the usage write landed.
        const spends = labels.flatMap((label, i) => (label.startsWith('UpdateItem SPEND#') ? [i] : []));
        const items = spends.map((i) => `${usageCalls[i]!.items![0]!.partition}|${usageCalls[i]!.items![0]!.item}`);
        expect(spends.length).toBeGreaterThanOrEqual(2);
        for (const item of items) expect(items.filter((other) => other === item)).toHaveLength(2);
        expect(spends.slice(0, spends.length / 2).every((i) => i < labels.indexOf('UpdateItem usage'))).toBe(true);
        expect(spends.slice(spends.length / 2).every((i) => i > labels.indexOf('UpdateItem usage'))).toBe(true);
      }
    }
  });

  it('checks spending limits with no read on the request path: per scope, a spend write ahead of the provider and one once the usage write landed, the completion open between, and a grant now and then', () => {
    for (const [id, scopes] of [
      // The limited key's workspace has no budget: its spend item counts the completion in flight all the same.
      ['limited-key-completions', ['SPEND#K', 'SPEND#W']],
      ['limited-workspace-completions', ['SPEND#W', 'SPEND#K']],
    ] as const) {
      const row = rows.get(id)!;
      const perRequest = row.callsPerRequest.map((calls) => calls.filter((call) => call.tables[0] === TABLE_SCHEMAS.usage.localName));
      const grants = perRequest.flat().filter((call) => call.items?.every((access) => access.partition.startsWith('BUDGET#')));
      const steady = perRequest.map((calls) => calls.filter((call) => !grants.includes(call)));
      const label = (call: (typeof steady)[number][number]) => {
        const partition = call.items![0]!.partition;
        const kind = partition.startsWith('KEY#') ? 'usage' : partition.startsWith('GEN#') ? 'generation' : partition.startsWith('OPEN#') ? 'open' : partition;
        return `${call.command} ${partition.startsWith('SPEND#') ? partition.slice(0, 'SPEND#K'.length) : kind}`;
      };
      // The scopes' writes ahead side by side (in either order) beside the open completion's, then
      // their charges, then the usage write beside the generation's, then the open completion's close.
      for (const calls of steady) {
        const labels = calls.map(label);
        const spends = labels.flatMap((l, i) => (l.includes('SPEND#') ? [i] : []));
        expect(spends.map((i) => labels[i]).sort()).toEqual([...scopes, ...scopes].map((scope) => `UpdateItem ${scope}`).sort());
        expect(labels.filter((l) => !l.includes('SPEND#')).sort()).toEqual(['DeleteItem open', 'PutItem generation', 'PutItem open', 'UpdateItem usage']);
        expect(labels.indexOf('PutItem open')).toBeLessThan(spends[scopes.length]!);
        expect(labels.indexOf('DeleteItem open')).toBeGreaterThan(labels.indexOf('UpdateItem usage'));
        // One open item, put and deleted: one write unit each.
        const open = calls.filter((call) => call.items![0]!.partition.startsWith('OPEN#')).map((call) => call.items![0]!);
        expect(open.map((access) => `${access.partition}|${access.item}|${access.units}`)).toEqual([0, 1].map(() => `${open[0]!.partition}|${open[0]!.item}|1`));
        // Ahead and charge of a scope on one item: the container's shard and hold bucket.
        const items = spends.map((i) => calls[i]!.items![0]!);
        expect(new Set(items.map((access) => `${access.partition}|${access.item}`)).size).toBe(scopes.length);
        expect(spends[scopes.length - 1]!).toBeLessThan(labels.indexOf('UpdateItem usage'));
        expect(spends[scopes.length]!).toBeGreaterThan(labels.indexOf('UpdateItem usage'));
      }
      // One container's holds, first granted and grown: a few grants over the row, not one per request.
      expect(grants.length).toBeLessThan(row.requests / 8);
      // The keys table and the catalog are read as for any completion; no ledger is read.
      expect(row.calls.flatMap((call) => call.items ?? []).filter((access) => access.partition.startsWith('BUDGET#') && access.operation === 'read')).toEqual([]);
    }
  });

  it('signs one token per exchange, within the account\'s ECC signing quota at 300 exchanges a second', () => {
    const load = rows.get('policy-exchanges')!.load!;
    expect(load.kmsSignsPerSecond).toBe(300);
    expect(load.kmsSignsPerSecond).toBeLessThanOrEqual(KMS_ECC_SIGN_QUOTA);
  });
});
