/**
 * The scale model and what a million requests cost (`npm run bench`). Each traffic row of
 * docs/benchmarks.md ("Scale") is driven through the real handlers on the local runtime, every
 * DynamoDB and KMS call recorded with the items it touched and their sizes
 * (local/aws-calls.ts), and scaled to the row's rate against DynamoDB's per-partition limits
 * (local/scale-model.ts): the hottest item and partition-key value per row, in units per second
 * and percent of the limit. Then the same calls, priced per route (local/cost-model.ts).
 * test/local/scale.test.ts holds the rows, with fewer requests, to the targets.
 */
import { PRICES, routeCost } from '../local/cost-model';
import { describeHotspot, ITEM_SHARE, KMS_ECC_SIGN_QUOTA, PARTITION_SHARE } from '../local/scale-model';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { measureScale, type MeasuredRow, type TrafficRowId } from '../test/support/scale-traffic';

/** What a completion waits on its provider in the cost model: the provider's time is the model's, not the gateway's. */
const UPSTREAM_MS = 2000;
/** The rows priced per route: one row per route. */
const PRICED: readonly TrafficRowId[] = ['key-catalog', 'key-completions', 'token-completions', 'policy-exchanges', 'key-usage', 'organization-activity'];

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const rows = await measureScale({ requests: 1024, exchanges: 256 });
  printScale(rows);
  printCosts(rows);
}

function printScale(rows: readonly MeasuredRow[]): void {
  console.log(`\nScale: the hottest item (aim: at most ${ITEM_SHARE * 100}% of a partition's limits) and partition-key value (aim: at most ${PARTITION_SHARE * 100}%)`);
  console.log('per traffic row, from the calls its requests made on the local runtime, scaled to its rate (DynamoDB: 3,000 RCU/s and 1,000 WCU/s per partition-key value)');
  console.log('| traffic | rate | requests measured | hottest item | hottest partition-key value | KMS Sign |');
  console.log('|---|---:|---:|---|---|---:|');
  for (const row of rows) {
    if (!row.load || row.rate === undefined) continue;
    const signs = row.load.kmsSignsPerSecond;
    const kms = signs > 0 ? `${Math.round(signs)}/s (${Math.round((100 * signs) / KMS_ECC_SIGN_QUOTA)}% of the ECC quota)` : 'none';
    console.log(`| ${row.traffic} | ${row.rate.toLocaleString('en-US')}/s | ${row.requests} | ${describeHotspot(row.load.items[0])} | ${describeHotspot(row.load.partitions[0])} | ${kms} |`);
  }
}

function printCosts(rows: readonly MeasuredRow[]): void {
  const dollars = (value: number) => `$${value < 10 ? value.toFixed(2) : value.toFixed(1)}`;
  console.log(`\nWhat a million requests cost, per route: on-demand list prices, ${PRICES.region}, as of ${PRICES.date}; completions wait ${UPSTREAM_MS} ms on their provider`);
  console.log('(Lambda at each function\'s memory for a modelled duration: the gateway\'s CPU here less the embedded DynamoDB\'s time, at the function\'s share of a vCPU, plus its AWS round trips at 5 ms a DynamoDB stage and 10 ms a KMS one)');
  console.log('| route | memory | modelled duration | RRU | WRU | KMS Sign | Lambda compute | Lambda requests | API Gateway | WAF | DynamoDB reads | DynamoDB writes | KMS | total |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const id of PRICED) {
    const row = rows.find((candidate) => candidate.id === id);
    if (!row) continue;
    const cost = routeCost({ ...row, upstreamMs: row.functionName === 'inference' ? UPSTREAM_MS : 0 });
    const { perMillion: m } = cost;
    const cells = [m.compute, m.lambdaRequests, m.apiGateway, m.waf, m.reads, m.writes, m.kms, m.total].map(dollars);
    console.log(`| ${cost.route} | ${cost.memoryMb} MB | ${cost.durationMs} ms | ${cost.readUnits.toFixed(1)} | ${cost.writeUnits.toFixed(1)} | ${cost.signs.toFixed(1)} | ${cells.join(' | ')} |`);
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
