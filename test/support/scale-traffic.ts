import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoLedgers } from '../../lambdas/aws/dynamo-ledgers';
import { LEDGER_BRANCHES } from '../../lambdas/aws/dynamo-ledger-branches';
import { MAX_CAP_USD } from '../../lambdas/accounts/stored-limits';
import { createDocumentClient, createDynamoDbClient } from '../../lambdas/aws/dynamo-client';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { bucketOf } from '../../lambdas/spending/ledgers';
import type { SpendingLimit } from '../../lambdas/spending/limits';
import { periodAt } from '../../lambdas/spending/periods';
import type { Clock } from '../../lambdas/clock';
import { observeClientCalls, type AwsCall } from '../../local/aws-calls';
import { readDevCertificateAuthority } from '../../local/dev-ca';
import { LOCAL_AWS_ENV } from '../../local/embedded-dynamodb';
import { functionCredentials } from '../../local/function-principals';
import { startLocalRuntime, type LocalRuntime } from '../../local/runtime';
import { connectToRuntime } from './accounts';
import { startTestDynamoDb } from './dynamodb-local';
import { equidistributed } from './equidistributed-draws';
import { startIdentityProvider } from './identity-provider';
import { COST_ROWS, TRAFFIC_ROWS, type MeasuredRow, type MeasuredScale, type ScaleRunOptions } from './scale-rows';
import { Traffic } from './scale-requests';
import { ADDRESS_ROW_REQUESTS, measureBackground, rowLoad, type BudgetUpkeep } from './scale-scenarios';

/**
 * The traffic rows of the scale model (docs/benchmarks.md, "Scale"), driven through the real
 * handlers of the local runtime: each row sends its requests one at a time, every AWS call of
 * its functions recorded with the items it read and wrote (local/aws-calls.ts), and scales
 * them to the row's rate (local/scale-model.ts). Counts are deterministic: the clock stands
 * still (dates, caches and tokens do not move during a run) and the functions' random choices
 * (which copy of an item to read, which shard of a counter to write) follow a fixed
 * equidistributed sequence. `npm run bench` prints the rows; test/local/scale.test.ts holds
 * them to the targets.
 */

/** Runs the traffic rows on a fresh local runtime and scales each to its rate, its containers' own reads included. */
export async function measureScale(options: ScaleRunOptions = {}): Promise<MeasuredScale> {
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-scale-'));
  const calls: AwsCall[] = [];
  const draws = equidistributed();
  const at = new Date();
  const clock: Clock = { now: () => at };
  const runtime = await startLocalRuntime({
    port: 0,
    persist: false,
    // The test's DynamoDB (MODELGATE_TEST_DYNAMODB): the traffic rows hold on DynamoDB Local too.
    startDynamoDb: startTestDynamoDb,
    dataDir,
    logLevel: 'ERROR',
    clock,
    catalogCacheSeconds: 3600,
    // The rollup runs off the request path, on its schedule: not among the rows' calls.
    usageRollupEveryMs: 0,
    observeAwsCalls: (call) => calls.push(call),
    awsCallRecording: 'items',
    random: draws.random,
  });
  const stores = connectToRuntime(runtime);
  const upkeep = upkeepMeter(runtime, at);
  const idp = await startIdentityProvider({ ca: readDevCertificateAuthority(dataDir) });
  try {
    const traffic = new Traffic(runtime, stores, idp, at);
    const rows = [...TRAFFIC_ROWS, ...COST_ROWS].filter((row) => !options.rows || options.rows.includes(row.id));
    const measured: MeasuredRow[] = [];
    for (const row of rows) {
      const requests =
        row.rate === undefined ? (options.costRequests ?? 16) : row.id === 'policy-exchanges' ? (options.exchanges ?? 128) : row.id === 'address-exchanges' ? ADDRESS_ROW_REQUESTS : typeof options.requests === 'function' ? options.requests(row) : (options.requests ?? 512);
      const send = await traffic.prepare(row.id, options.keys ?? 17);
      // Each row's draws from the start of their sequences: whole blocks of its own requests.
      draws.startRow();
      const callsPerRequest: AwsCall[][] = [];
      const localMs: number[] = [];
      const answerBytes: number[] = [];
      for (let i = 0; i < requests; i++) {
        draws.endRequest();
        const first = calls.length;
        const start = performance.now();
        const status = await send(i);
        // Past its limit, one address is refused: what that costs is what the row measures.
        if (status !== 200 && !(row.id === 'address-exchanges' && status === 429)) throw new Error(`${row.id}: request ${i} answered ${status}`);
        // What an invocation does after its answer lands before the next request.
        await runtime.idle();
        draws.endRequest();
        localMs.push(performance.now() - start);
        answerBytes.push(traffic.lastAnswerBytes);
        callsPerRequest.push(calls.slice(first));
      }
      const rowCalls = callsPerRequest.flat();
      const limits = traffic.limitsOf(row.id);
      measured.push({ ...row, requests, calls: rowCalls, callsPerRequest, localMs, answerBytes, ...(limits ? { budgets: await upkeep.measure(await limits()) } : {}) });
    }
    const background = await measureBackground(runtime, at);
    for (const row of measured) if (row.rate !== undefined) row.load = rowLoad(row, background);
    return { rows: measured, background };
  } finally {
    upkeep.destroy();
    await idp.close();
    stores.destroy();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * What the limits' ledgers cost a deployment besides the requests: a grant and a fold on each
 * limit's ledger, measured through an observed client as the functions' calls are.
 */
function upkeepMeter(runtime: LocalRuntime, at: Date): { measure(limits: SpendingLimit[]): Promise<BudgetUpkeep[]>; destroy(): void } {
  const upkeepClient = createDynamoDbClient({ endpoint: runtime.dynamoEndpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: functionCredentials('inference') });
  let upkeepCalls: AwsCall[] = [];
  observeClientCalls(upkeepClient, 'inference', 'DynamoDB', (call) => upkeepCalls.push(call), 'items');
  const upkeepLedgers = new DynamoLedgers(createDocumentClient(upkeepClient), TABLE_SCHEMAS.usage.localName);
  // The same container's grants through a branch, as AWS's containers ask a ledger at a herd.
  const branchedLedgers = new DynamoLedgers(createDocumentClient(upkeepClient), TABLE_SCHEMAS.usage.localName, { branches: LEDGER_BRANCHES });
  return {
    measure: async (limits) => {
      const upkeep: BudgetUpkeep[] = [];
      for (const limit of limits) {
        const ref = { ledger: limit.ledger, period: periodAt(limit.window, at).id };
        const hold = { bucket: bucketOf(at) + 1_000_000, epoch: '-' };
        upkeepCalls = [];
        const granted = await upkeepLedgers.grant({ ref, limitUsd: limit.amountUsd, amount: '0.000001', hold });
        if (!granted.granted) throw new Error(`the ledger of ${limit.description} refused a grant`);
        const grant = upkeepCalls;
        upkeepCalls = [];
        await upkeepLedgers.fold(ref, limit.scope, hold, '0.000001');
        const fold = upkeepCalls;
        upkeepCalls = [];
        await upkeepLedgers.read(ref);
        const read = upkeepCalls;
        // A branch's refill (its first hold of a bucket), then a hold taken from the room it added: asked under the
        // largest amount, as a ledger the row's traffic has nearly spent still has room for a branch's chunk under it.
        const branched = { ref, limitUsd: String(MAX_CAP_USD), amount: '0.000001', hold: { ...hold, bucket: hold.bucket + 1 }, branched: true };
        upkeepCalls = [];
        if (!(await branchedLedgers.grant(branched)).granted) throw new Error(`a branch of the ledger of ${limit.description} refused a refill`);
        const refill = upkeepCalls;
        upkeepCalls = [];
        if (!(await branchedLedgers.grant(branched)).granted) throw new Error(`a branch of the ledger of ${limit.description} refused a take`);
        const take = upkeepCalls;
        upkeepCalls = [];
        await upkeepLedgers.fold(ref, limit.scope, branched.hold, '0.000005');
        upkeep.push({ limit: limit.description, scope: limit.scope.kind, resets: limit.window !== 'all', grant, fold, read, take, refill });
      }
      return upkeep;
    },
    destroy: () => upkeepClient.destroy(),
  };
}
