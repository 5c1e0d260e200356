/**
 * What each route costs where it runs (`npm run bench`). In AWS a request's latency is its
 * sequential round trips to DynamoDB and KMS, not its CPU: the local runtime reports every AWS
 * SDK call of its functions (and every signature, KMS `Sign` in AWS) with the request it
 * served (local/aws-calls.ts). Per route, a warm request's calls, its sequential stages, an
 * AWS latency model (each stage costs its slowest call at the stated latency), and the median
 * time the whole request takes on the local runtime, embedded DynamoDB included.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey } from '../lambdas/accounts/api-keys';
import { createDocumentClient } from '../lambdas/aws/dynamo-client';
import { DynamoFederationStore } from '../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../lambdas/aws/table-schemas';
import { AWS_LATENCY_MS, modelledLatencyMs, sequentialDepth, type AwsCall } from '../local/aws-calls';
import { readDevCertificateAuthority } from '../local/dev-ca';
import { startLocalRuntime, type LocalRuntime } from '../local/runtime';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { makeIssuer, makePolicy } from '../test/support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../test/support/identity-provider';
import { exchangeForm } from '../local/exchange-form';

const RUNS = 30;

async function main(): Promise<void> {
  quietSdkNodeNotice();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const calls: AwsCall[] = [];
  // When the server handed over the last answer's last byte.
  let answered = 0;
  const runtime = await startLocalRuntime({
    port: 0,
    persist: false,
    dataDir,
    logLevel: 'ERROR',
    catalogCacheSeconds: 3600,
    exchangeRateLimit: 100_000,
    observeAwsCalls: (call) => calls.push(call),
    observe: () => void (answered = performance.now()),
  });
  const idp = await startIdentityProvider({ ca: readDevCertificateAuthority(dataDir) });
  const client = new DynamoDBClient({ endpoint: runtime.dynamoEndpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const policyId = await trustIdentityProvider(client, runtime, idp);
    console.log(`\nRound trips per warm request (AWS model: DynamoDB ${AWS_LATENCY_MS.DynamoDB} ms, KMS Sign ${AWS_LATENCY_MS.KMS} ms per stage)`);
    console.log('(the calls and stages the answer waits for; calls made once it has ended are counted apart)');
    console.log('| route | SDK calls | sequential stages | modelled AWS storage latency | local request, median | calls after the answer |');
    console.log('|---|---:|---:|---:|---:|---:|');
    const limitedKey = await createLimitedKey(runtime);
    for (const [name, request] of benchRoutes(runtime, idp, policyId, limitedKey)) {
      for (let i = 0; i < 3; i++) await request();
      await runtime.idle();
      const before = calls.length;
      const status = await request();
      const answeredAt = answered;
      if (status !== 200) throw new Error(`${name} answered ${status}`);
      await runtime.idle();
      const mine = calls.slice(before).filter((call) => call.start < answeredAt);
      const after = calls.length - before - mine.length;
      const median = await medianMs(request, runtime);
      console.log(`| ${name} | ${mine.length} | ${sequentialDepth(mine)} | ${modelledLatencyMs(mine)} ms | ${median.toFixed(1)} ms | ${after} |`);
    }
  } finally {
    client.destroy();
    await idp.close();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The demo organization trusts the identity provider: an issuer and a policy for the workspace key. Returns the policy's id. */
async function trustIdentityProvider(client: DynamoDBClient, runtime: LocalRuntime, idp: TestIdentityProvider): Promise<string> {
  const federation = new DynamoFederationStore(createDocumentClient(client), TABLE_SCHEMAS.policies.localName);
  const issuer = makeIssuer({ organizationId: runtime.demo.organizationId, issuerUrl: idp.issuerUrl });
  await federation.createIssuer(issuer);
  const policy = makePolicy({ organizationId: runtime.demo.organizationId, issuerId: issuer.id, subject: 'bench', audience: 'bench', apiKeyHash: hashApiKey(runtime.demo.keys.workspace) });
  await federation.createPolicy(policy);
  return policy.id;
}

/** A key of the demo organization with a limit of 100 USD, made through the management API: its secret. */
async function createLimitedKey(runtime: LocalRuntime): Promise<string> {
  const response = await fetch(`${runtime.baseUrl}/keys`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${runtime.demo.keys.managementReadWrite}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'round trips, limited', limit: 100 }),
  });
  if (response.status !== 201) throw new Error(`POST /keys answered ${response.status}`);
  return ((await response.json()) as { key: string }).key;
}

/** The routes measured, each a request that answers its status. */
function benchRoutes(runtime: LocalRuntime, idp: TestIdentityProvider, policyId: string, limitedKey: string): [string, () => Promise<number>][] {
  const { keys } = runtime.demo;
  const send = (path: string, init: RequestInit = {}, key?: string) =>
    fetch(`${runtime.baseUrl}${path}`, { ...init, headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(init.headers as Record<string, string>) } }).then((r) => r.text().then(() => r.status));
  const complete = (key: string) =>
    send('/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) }, key);
  return [
    ['GET /models/user?limit=10', () => send('/models/user?limit=10', {}, keys.workspace)],
    ['GET /key', () => send('/key', {}, keys.workspace)],
    ['GET /keys', () => send('/keys', {}, keys.managementReadOnly)],
    ['GET /workspaces', () => send('/workspaces', {}, keys.managementReadOnly)],
    ['POST /chat/completions (development provider)', () => complete(keys.workspace)],
    ['POST /chat/completions under a key limit', () => complete(limitedKey)],
    [
      'POST /oauth/token (issued)',
      () =>
        send('/oauth/token', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(exchangeForm(idp.sign({ sub: 'bench', aud: 'bench', jti: randomUUID() }), policyId)).toString(),
        }),
    ],
  ];
}

/** The median time of RUNS requests, each once the one before and what it left running are done. */
async function medianMs(request: () => Promise<number>, runtime: LocalRuntime): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await request();
    times.push(performance.now() - start);
    await runtime.idle();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(RUNS / 2)]!;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
