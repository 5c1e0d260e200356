/**
 * The scale model and what a million requests cost (`npm run bench`). Each traffic row of
 * docs/benchmarks.md ("Scale") is driven through the real handlers on the local runtime, every
 * DynamoDB and KMS call recorded with the items it touched and their sizes
 * (local/aws-calls.ts), and scaled to the row's rate against DynamoDB's per-partition limits
 * (local/scale-model.ts), the reads its containers make on their own added
 * (test/support/scale-scenarios.ts): the hottest item and partition-key value per row, and for
 * every row at once. Then the same calls, priced per route (local/cost-model.ts), the usage
 * views on the first day and after a year of history. test/local/scale.test.ts holds the rows,
 * with fewer requests, to the targets.
 */
import { LOG_BYTES_PER_REQUEST, PRICES, XRAY_SAMPLED_SHARE, routeCost } from '../local/cost-model';
import { describeHotspot, ITEM_SHARE, KMS_ECC_SIGN_QUOTA, PARTITION_SHARE, type ScaleLoad } from '../local/scale-model';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import type { MeasuredRow, TrafficRowId } from '../test/support/scale-rows';
import { measureScale } from '../test/support/scale-traffic';
import { MODELLED_CONCURRENCY, atCompletionSeconds, containersOf, rowLoad, togetherLoad, type BackgroundReads } from '../test/support/scale-scenarios';

/** What a completion waits on its provider in the cost model: the provider's time is the model's, not the gateway's. */
const UPSTREAM_MS = 2000;
/** The rows priced per route: one row per route, and the usage views again after a year. */
const PRICED: readonly TrafficRowId[] = [
  'key-catalog',
  'key-completions',
  'token-completions',
  'policy-exchanges',
  'jwks',
  'key-usage',
  'key-usage-day-365',
  'organization-activity',
  'organization-activity-day-365',
];

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const { rows, background } = await measureScale({ requests: 1024, exchanges: 256 });
  printScale(rows, togetherLoad(rows, background), background);
  printCosts(rows);
}

/** The moments a limited row is held at besides its steady state (test/support/scale-scenarios.ts). */
const MOMENTS = { reset: 'the minutes before a reset', refused: 'every container refused' } as const;

function printScale(rows: readonly MeasuredRow[], together: ScaleLoad, background: BackgroundReads): void {
  console.log(`\nScale: the hottest item (aim: at most ${ITEM_SHARE * 100}% of a partition's limits) and partition-key value (aim: at most ${PARTITION_SHARE * 100}%)`);
  console.log('per traffic row, from the calls its requests made on the local runtime, scaled to its rate, with the reads its containers make on their own');
  console.log('(catalog version, popularity figures, reloads, signing keys); a share is read units / 3,000 + write units / 1,000 per second');
  console.log('| traffic | rate | containers | requests measured | hottest item | hottest partition-key value | KMS Sign |');
  console.log('|---|---:|---:|---:|---|---|---:|');
  const kms = (signs: number) => (signs > 0 ? `${Math.round(signs)}/s (${Math.round((100 * signs) / KMS_ECC_SIGN_QUOTA)}% of the ECC quota)` : 'none');
  let containers = 0;
  for (const row of rows) {
    if (!row.load || row.rate === undefined) continue;
    const busy = Object.values(containersOf(row)).reduce((sum, count) => sum + (count ?? 0), 0);
    containers += busy;
    console.log(`| ${row.traffic} | ${row.rate.toLocaleString('en-US')}/s | ${Math.round(busy).toLocaleString('en-US')} | ${row.requests} | ${describeHotspot(row.load.items[0])} | ${describeHotspot(row.load.partitions[0])} | ${kms(row.load.kmsSignsPerSecond)} |`);
  }
  console.log(`| every row at once | | ${Math.round(containers).toLocaleString('en-US')} | | ${describeHotspot(together.items[0])} | ${describeHotspot(together.partitions[0])} | ${kms(together.kmsSignsPerSecond)} |`);
  // The limited rows at the moments their fleet meets the ledgers together.
  for (const row of rows) {
    if (!row.budgets || row.rate === undefined) continue;
    for (const moment of ['reset', 'refused'] as const) {
      const load = rowLoad(row, background, moment);
      console.log(`| ${row.traffic}, ${MOMENTS[moment]} | ${row.rate.toLocaleString('en-US')}/s | | ${row.requests} | ${describeHotspot(load.items[0])} | ${describeHotspot(load.partitions[0])} | |`);
    }
  }
  // Completions of 30 s: as many containers as the modelled concurrency, at the rate they serve.
  console.log(`\nCompletions of 30 s, at most ${MODELLED_CONCURRENCY.toLocaleString('en-US')} containers: each completion row at the rate they serve, its worst moment (steady, before a reset, refused)`);
  console.log('| traffic | rate | containers | hottest item | hottest partition-key value |');
  console.log('|---|---:|---:|---|---|');
  for (const row of rows) {
    if (row.functionName !== 'inference' || row.rate === undefined) continue;
    const long = atCompletionSeconds(row, 30);
    const loads = (['steady', 'reset', 'refused'] as const).map((moment) => rowLoad(long, background, moment));
    const worst = (pick: (load: ScaleLoad) => ScaleLoad['items'][number] | undefined) => loads.map(pick).sort((a, b) => (b?.percent ?? 0) - (a?.percent ?? 0))[0];
    const busy = containersOf(long).inference ?? 0;
    console.log(`| ${row.traffic} | ${Math.round(long.rate!).toLocaleString('en-US')}/s | ${Math.round(busy).toLocaleString('en-US')} | ${describeHotspot(worst((load) => load.items[0]))} | ${describeHotspot(worst((load) => load.partitions[0]))} |`);
  }
  // What the tables take in all, against the account's per-table quotas (docs/operating.md, "AWS quotas").
  console.log('\nEvery row at once, per table (partitions of the table and its indexes added):');
  console.log('| table | RCU/s | WCU/s |');
  console.log('|---|---:|---:|');
  const tables = new Map<string, { read: number; write: number }>();
  for (const spot of together.partitions) {
    const table = spot.name.split(' ')[0]!.split('/')[0]!;
    const total = tables.get(table) ?? { read: 0, write: 0 };
    total.read += spot.readUnitsPerSecond;
    total.write += spot.writeUnitsPerSecond;
    tables.set(table, total);
  }
  for (const [table, { read, write }] of [...tables].sort()) console.log(`| ${table} | ${Math.round(read).toLocaleString('en-US')} | ${Math.round(write).toLocaleString('en-US')} |`);
}

function printCosts(rows: readonly MeasuredRow[]): void {
  const dollars = (value: number) => `$${value < 10 ? value.toFixed(2) : value.toFixed(1)}`;
  console.log(`\nWhat a million requests cost, per route: on-demand list prices, ${PRICES.region}, as of ${PRICES.date}; completions wait ${UPSTREAM_MS} ms on their provider`);
  console.log("(Lambda at each function's memory for a modelled duration: the gateway's CPU here less the embedded DynamoDB's time, at the function's share of a vCPU, plus its AWS round trips at 5 ms a DynamoDB stage and 10 ms a KMS one;");
  console.log(` CloudWatch Logs at ${LOG_BYTES_PER_REQUEST} bytes a request, X-Ray at ${XRAY_SAMPLED_SHARE * 100}% of requests traced, data transfer at the answer's size as API Gateway sends it)`);
  console.log('| route | memory | modelled duration | RRU | WRU | KMS Sign | answer | Lambda compute | Lambda requests | API Gateway | WAF | DynamoDB reads | DynamoDB writes | KMS | logs | traces | transfer | total |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const id of PRICED) {
    const row = rows.find((candidate) => candidate.id === id);
    if (!row) continue;
    const cost = routeCost({ ...row, upstreamMs: row.functionName === 'inference' ? UPSTREAM_MS : 0 });
    const { perMillion: m } = cost;
    const cells = [m.compute, m.lambdaRequests, m.apiGateway, m.waf, m.reads, m.writes, m.kms, m.logs, m.traces, m.transfer, m.total].map(dollars);
    const route = id.endsWith('-day-365') ? `${cost.route}, day 365` : id === 'key-usage' || id === 'organization-activity' ? `${cost.route}, day 1` : cost.route;
    console.log(`| ${route} | ${cost.memoryMb} MB | ${cost.durationMs} ms | ${cost.readUnits.toFixed(1)} | ${cost.writeUnits.toFixed(1)} | ${cost.signs.toFixed(1)} | ${cost.answerBytes.toLocaleString('en-US')} B | ${cells.join(' | ')} |`);
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
