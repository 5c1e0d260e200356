/**
 * Benchmark of the token endpoint (docs/reference.md#the-token-exchange) against the aim "within 2x of the crypto floor".
 * Run with `npm run bench`.
 *
 * - Handler, in-memory stores: the Lambda handler (`createTokenExchangeHandler`, with its
 *   middlewares) called with an API Gateway proxy event; the policy, issuer, organization and
 *   key as frozen records handed out as they are, and rate counters (65,536 addresses in turn),
 *   jti claims and the last events in memory; the issuer's keys inline; a local ES256 signer.
 *   Everything the exchange does except I/O. Telemetry as the local runtime has it:
 *   log lines at ERROR (none written), metrics dropped.
 * - Handler, Lambda telemetry: the same, with the telemetry a deployed function builds (JSON
 *   request line at INFO, the invocation's EMF records serialized), its output written to a
 *   discarded stdout. Tracing as outside AWS: off.
 * - Handler, Lambda telemetry and X-Ray tracing: the same as a function runs in AWS, with the
 *   X-Ray SDK loaded and the handler's subsegment sent to a UDP socket standing in for the
 *   daemon. Measured last: the SDK's async hooks then slow every promise of the process.
 * - Crypto floor, measured in the same run as the exchange pays it: per iteration, one jose
 *   `compactVerify` of the same subject token (the exchange's own `verifySubjectJws`) and then
 *   one local ES256 signature (the same signer), a row of its own interleaved with the
 *   exchange rows: the verification waits on Web Crypto's thread pool as the exchange's does.
 * - Slowest savable conditions: the same in-memory handler with a policy whose condition is one
 *   of the slowest the save-time bound admits (bench/slowest-conditions.ts), each exchanging the
 *   subject token of at most 16 KB that makes it slowest, beside the plain exchange, in the
 *   same rounds.
 * - Handler, store-backed: the same handler over the DynamoDB stores on the embedded
 *   DynamoDB (dynalite): sequentially, then 8 requests in flight. The embedded server answers
 *   about 600 GetItem/s here, so this row measures it more than the handler.
 *
 * Each in-memory figure is the median of 15 timed runs after a warm-up of at least a second;
 * a run repeats the call until it lasts ~50 ms, and the rows take their runs in turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { LOCAL_SIGNING_KEY_FILE } from '../local/signing-keys';
import { exchangeRows, type ExchangeRowsDeps } from './token-exchange/exchange-rows';
import { counter, formBody, policy, subjectToken } from './token-exchange/fixtures';
import { frozenEvaluation, RecentEvents } from './token-exchange/in-memory-records';
import { slowConditionRows } from './token-exchange/slow-condition-rows';
import { storeBackedRows } from './token-exchange/store-backed-rows';
import { us } from './token-exchange/timing';
import { tracedRow } from './token-exchange/traced-row';

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  try {
    const signer = await LocalSigner.fromFile(join(dir, LOCAL_SIGNING_KEY_FILE));
    const rows: ExchangeRowsDeps = { evaluation: frozenEvaluation([policy]), signer, events: new RecentEvents(), token: subjectToken(), next: counter() };
    const floorMs = await exchangeRows(rows);
    await slowConditionRows({ ...rows, plainBody: formBody(rows.token) });
    await storeBackedRows(rows);
    // Last: once loaded, the X-Ray SDK's async hooks track every promise of the process.
    const tracedMs = await tracedRow(dir, { ...rows, body: formBody(rows.token) });
    console.log(`  handler, Lambda telemetry and X-Ray tracing ${us(tracedMs)}   (${(tracedMs / floorMs).toFixed(2)}x the floor; as in AWS, segments to a local UDP sink)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
