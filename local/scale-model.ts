import { ALL_TABLES } from '../lambdas/aws/table-schemas';
import type { AwsCall } from './aws-calls';
import { PARTITION_LIMITS, type ItemAccess } from './dynamodb-capacity';

/**
 * The scale model: what a stated request rate does to DynamoDB's partitions and KMS's quota,
 * from the calls a number of real requests made on the local runtime (local/aws-calls.ts
 * records each call's items, index entries and sizes). Each item's and each partition-key
 * value's read and write units per request, times the rate, against DynamoDB's per-partition
 * limits (3,000 read and 1,000 write units per second per partition-key value; an item is never
 * split, so an item's own limit is its partition's).
 *
 * The targets: every item within {@link ITEM_SHARE} of the limits, every partition-key value
 * (of a table or an index) within {@link PARTITION_SHARE}; the embedded DynamoDB never throttles,
 * so only this model shows where AWS would.
 */

/** An item may take half its partition's limits: room for the other items that share the partition. */
export const ITEM_SHARE = 0.5;
/** A partition-key value, of a table or an index, may take all of its limits. */
export const PARTITION_SHARE = 1;

/**
 * KMS's "Cryptographic operations (ECC) request rate" quota, per account and region, shared by
 * every ECC key there (adjustable in Service Quotas): every issued token is one `Sign`.
 */
export const KMS_ECC_SIGN_QUOTA = 300;

/** One item, or one partition-key value, under the rate: its units per second and its share of the limits. */
export interface Hotspot {
  /** `<table>[/<index>] <partition key> / <sort key>`, or without the sort key for a partition. */
  name: string;
  readUnitsPerSecond: number;
  writeUnitsPerSecond: number;
  /**
   * Its share of the per-partition limits, in percent: its read share and its write share added,
   * as DynamoDB's partition throughput is one budget that reads and writes both draw on.
   */
  percent: number;
}

/** What a request rate does: every item and partition-key value as a {@link Hotspot}, and the KMS signing rate. */
export interface ScaleLoad {
  /** Every item and partition-key value the requests touched, hottest first. */
  items: Hotspot[];
  partitions: Hotspot[];
  /** KMS `Sign` calls per second, against {@link KMS_ECC_SIGN_QUOTA}. */
  kmsSignsPerSecond: number;
}

/** What `requests` requests' `calls` become at `rate` requests per second. */
export function scaleLoad(calls: readonly AwsCall[], requests: number, rate: number): ScaleLoad {
  return combinedLoad([{ calls, timesPerSecond: rate / requests }]);
}

/**
 * Several loads at once: each part's calls happening `timesPerSecond` times a second (a row's
 * requests at its rate, a container's background reads times the containers over their
 * interval), their units added item by item and partition by partition.
 */
export function combinedLoad(parts: readonly { calls: readonly AwsCall[]; timesPerSecond: number }[]): ScaleLoad {
  const items = new Map<string, { read: number; write: number }>();
  const partitions = new Map<string, { read: number; write: number }>();
  const add = (totals: Map<string, { read: number; write: number }>, name: string, access: ItemAccess, times: number) => {
    const total = totals.get(name) ?? { read: 0, write: 0 };
    total[access.operation] += access.units * times;
    totals.set(name, total);
  };
  let signs = 0;
  for (const { calls, timesPerSecond } of parts) {
    for (const access of calls.flatMap((call) => call.items ?? [])) {
      const partition = partitionName(access);
      add(partitions, partition, access, timesPerSecond);
      // A query reads a range of its partition: its items are not told apart.
      if (access.item !== undefined) add(items, `${partition} / ${access.item}`, access, timesPerSecond);
    }
    signs += calls.filter((call) => call.service === 'KMS' && call.command === 'Sign').length * timesPerSecond;
  }
  const hotspots = (totals: Map<string, { read: number; write: number }>) =>
    [...totals].map(([name, { read, write }]) => hotspot(name, read, write)).sort((a, b) => b.percent - a.percent || a.name.localeCompare(b.name));
  return { items: hotspots(items), partitions: hotspots(partitions), kmsSignsPerSecond: signs };
}

function hotspot(name: string, readUnitsPerSecond: number, writeUnitsPerSecond: number): Hotspot {
  const percent = 100 * (readUnitsPerSecond / PARTITION_LIMITS.read + writeUnitsPerSecond / PARTITION_LIMITS.write);
  return { name, readUnitsPerSecond, writeUnitsPerSecond, percent };
}

/** `usage KEY#<hash>#3`, `usage/byOrganization ORG#<id>#3`: the table by its schema id, long ids shortened. */
function partitionName(access: ItemAccess): string {
  const table = ALL_TABLES.find((schema) => schema.localName === access.table)?.id ?? access.table;
  return `${table}${access.index ? `/${access.index}` : ''} ${access.partition}`;
}

/** Key hashes and UUIDs as placeholders: a row names the kind of item, not one caller's. */
export function shortened(name: string): string {
  return name
    .replace(/[0-9a-f]{64}/g, '<hash>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d{2}-\d{2}/g, '<date>');
}

/** Whether a load holds the targets: every item within {@link ITEM_SHARE} and every partition within {@link PARTITION_SHARE}. */
export function withinTargets(load: ScaleLoad): boolean {
  return (load.items[0]?.percent ?? 0) <= ITEM_SHARE * 100 && (load.partitions[0]?.percent ?? 0) <= PARTITION_SHARE * 100;
}

/** One hotspot as a table cell: `name: 1,234 RCU/s + 56 WCU/s (47%)`, naming only the units it takes. */
export function describeHotspot(spot: Hotspot | undefined): string {
  if (!spot) return 'none';
  const units = [
    spot.readUnitsPerSecond > 0 ? `${Math.round(spot.readUnitsPerSecond).toLocaleString('en-US')} RCU/s` : undefined,
    spot.writeUnitsPerSecond > 0 ? `${Math.round(spot.writeUnitsPerSecond).toLocaleString('en-US')} WCU/s` : undefined,
  ].filter(Boolean);
  return `${shortened(spot.name)}: ${units.join(' + ') || '0'} (${Math.round(spot.percent)}%)`;
}
