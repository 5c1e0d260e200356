/**
 * The scale model (`npm run bench`): each traffic row of docs/benchmarks.md ("Scale") driven
 * through the real handlers on the local runtime, every DynamoDB and KMS call recorded with the
 * items it touched and their sizes (local/aws-calls.ts), scaled to the row's rate against
 * DynamoDB's per-partition limits (local/scale-model.ts): the hottest item and partition-key
 * value per row, in units per second and percent of the limit. test/local/scale.test.ts holds
 * the same rows, with fewer requests, to the targets.
 */
import { describeHotspot, ITEM_SHARE, KMS_ECC_SIGN_QUOTA, PARTITION_SHARE } from '../local/scale-model';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { measureScale } from '../test/support/scale-traffic';

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const rows = await measureScale({ requests: 1024, exchanges: 256, keys: 32 });
  console.log(`\nScale: the hottest item (aim: at most ${ITEM_SHARE * 100}% of a partition's limits) and partition-key value (aim: at most ${PARTITION_SHARE * 100}%)`);
  console.log('per traffic row, from the calls its requests made on the local runtime, scaled to its rate (DynamoDB: 3,000 RCU/s and 1,000 WCU/s per partition-key value)');
  console.log('| traffic | rate | requests measured | hottest item | hottest partition-key value | KMS Sign |');
  console.log('|---|---:|---:|---|---|---:|');
  for (const row of rows) {
    const kms = row.load.kmsSignsPerSecond > 0 ? `${Math.round(row.load.kmsSignsPerSecond)}/s (${Math.round((100 * row.load.kmsSignsPerSecond) / KMS_ECC_SIGN_QUOTA)}% of the ECC quota)` : 'none';
    console.log(`| ${row.traffic} | ${row.rate.toLocaleString('en-US')}/s | ${row.requests} | ${describeHotspot(row.load.items[0])} | ${describeHotspot(row.load.partitions[0])} | ${kms} |`);
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
