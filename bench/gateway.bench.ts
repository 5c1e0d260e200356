/**
 * Benchmark of the request path around the catalog (`npm run bench`):
 *
 * 1. Authenticating one request (docs/reference.md#scopes-and-access) with an API key and with an access token, against
 *    in-memory stores, each as a ratio to a bare `jose` ES256 verification of the same token
 *    in the same run (aim: at most 1.5x).
 * 2. The gateway's added latency on a proxied completion: the local runtime (embedded
 *    DynamoDB, real HTTP) in front of a local upstream that answers at once, against the
 *    same request sent to the upstream directly, by a client in a process of its own. Median
 *    and p99, non-streamed and time to first byte streamed; then the same with the storage
 *    excluded: a second run in which the runtime reports each request's DynamoDB calls
 *    (local/aws-calls.ts), whose service time (the embedded DynamoDB's, not the gateway's) is
 *    taken off each request's time.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactVerify, importJWK } from 'jose';
import { generateApiKey } from '../lambdas/accounts/api-keys';
import { authenticate } from '../lambdas/credentials/authenticate';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES, type ApiKeyRecord, type Organization } from '../lambdas/accounts/types';
import { systemClock } from '../lambdas/clock';
import { ACTING_KEY_CLAIM, SigningKeyAccessTokenVerifier } from '../lambdas/credentials/access-token-verifier';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { DpopChecker } from '../lambdas/credentials/dpop-binding';
import { dpopProof, newDpopKey } from '../local/dpop-fetch';
import { serviceMs, type AwsCall } from '../local/aws-calls';
import { startLocalRuntime } from '../local/runtime';
import { authenticationRecords } from '../test/support/accounts';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';

const ISSUER = 'https://api.example.com/api/v1';
const run = promisify(execFile);

/** A request to the catalog route presenting `credential` as a bearer credential. */
const bearer = (credential: string) => ({ authorization: `Bearer ${credential}`, proofs: [], method: 'GET', path: '/api/v1/models/user', stageUrl: undefined, host: undefined });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Median microseconds per call over 15 runs of `iterations` sequential awaited calls, after a warm-up. */
/**
 * Median µs per call of each row. The rows take their timed runs in turn, so a change in the
 * shared machine's load falls on all of them alike and their ratios hold.
 */
async function timePerCall<Row extends string>(rows: Record<Row, () => Promise<unknown>>, iterations = 2000): Promise<Record<Row, number>> {
  const entries = Object.entries(rows) as [Row, () => Promise<unknown>][];
  for (const [, fn] of entries) for (let i = 0; i < iterations; i++) await fn();
  const runs = new Map<Row, number[]>(entries.map(([row]) => [row, []]));
  for (let run = 0; run < 15; run++) {
    for (const [row, fn] of entries) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < iterations; i++) await fn();
      runs.get(row)!.push(Number(process.hrtime.bigint() - start) / 1000 / iterations);
    }
  }
  return Object.fromEntries(entries.map(([row]) => [row, median(runs.get(row)!)])) as Record<Row, number>;
}

async function authenticationBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  try {
    const signer = await LocalSigner.fromFile(join(dir, 'key.pem'));
    const { secret, hash } = generateApiKey();
    const now = new Date().toISOString();
    const organization: Organization = {
      id: 'org',
      name: 'Bench',
      plan: 'enterprise',
      providerPreferences: DEFAULT_PROVIDER_PREFERENCES,
      privacy: DEFAULT_PRIVACY,
      createdAt: now,
      updatedAt: null,
    };
    const key: ApiKeyRecord = {
      hash,
      organizationId: 'org',
      kind: 'workspace',
      workspaceId: 'ws',
      accessLevel: null,
      userId: null,
      name: 'bench',
      label: 'sk-mg-v1-...',
      disabled: false,
      guardrailIds: [],
      expiresAt: null,
      createdAt: now,
      updatedAt: null,
    };
    // The read authentication makes, in memory: what is left is the gateway's own work.
    const accounts = authenticationRecords(organization, key);
    const record = { kid: signer.kid, keyRef: 'bench', publicJwk: signer.publicJwk, status: 'active' as const, createdAt: now, retiredAt: null };
    const accessTokens = new SigningKeyAccessTokenVerifier({ signingKeys: { list: async () => [record] }, clock: systemClock, issuer: ISSUER, maxTokenLifetimeSeconds: 900 });

    const seconds = Math.floor(Date.now() / 1000);
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: signer.kid })).toString('base64url');
    const claims = { iss: ISSUER, aud: ISSUER, sub: 'bench', iat: seconds, exp: seconds + 900, scope: 'inference', federation_policy_id: 'p', [ACTING_KEY_CLAIM]: hash };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const token = `${input}.${Buffer.from(await signer.sign(Buffer.from(input))).toString('base64url')}`;
    const publicKey = await importJWK(signer.publicJwk, 'ES256');
    // The same token bound to a DPoP key, presented with a proof for this request.
    const dpopKey = await newDpopKey();
    const boundInput = `${header}.${Buffer.from(JSON.stringify({ ...claims, cnf: { jkt: dpopKey.jkt } })).toString('base64url')}`;
    const boundToken = `${boundInput}.${Buffer.from(await signer.sign(Buffer.from(boundInput))).toString('base64url')}`;
    const proof = await dpopProof(dpopKey, 'GET', `${ISSUER}/models/user`, boundToken);
    const withProof = { authorization: `DPoP ${boundToken}`, proofs: [proof], method: 'GET', path: '/api/v1/models/user', stageUrl: undefined, host: undefined };
    // Every check of the proof runs; the replay record is a DynamoDB write beside the key read,
    // and a store in memory would refuse the proof this loop presents again.
    const proofs = new DpopChecker({ apiBaseUrl: ISSUER, servedHostnames: [], replays: { claim: async () => true }, clock: systemClock });

    const deps = { accounts, clock: systemClock, accessTokens };
    const {
      bare,
      key: withKey,
      token: withToken,
      bound: withBoundToken,
    } = await timePerCall({
      bare: () => compactVerify(token, publicKey, { algorithms: ['ES256'] }),
      key: () => authenticate(bearer(secret), deps),
      token: () => authenticate(bearer(token), deps),
      bound: () => authenticate(withProof, { ...deps, proofs }),
    });
    console.log('\nAuthenticating one request (in-memory stores), median µs per request');
    console.log(`  bare jose ES256 verification    ${bare.toFixed(1).padStart(8)} µs   1.00x`);
    console.log(`  API key                         ${withKey.toFixed(1).padStart(8)} µs   ${(withKey / bare).toFixed(2)}x`);
    console.log(`  access token                    ${withToken.toFixed(1).padStart(8)} µs   ${(withToken / bare).toFixed(2)}x   (aim <= 1.5x)`);
    console.log(
      `  DPoP-bound token and its proof  ${withBoundToken.toFixed(1).padStart(8)} µs   ${(withBoundToken / bare).toFixed(2)}x   ` +
        `(${(withBoundToken / withToken).toFixed(2)}x the bearer access token: one more ES256 verification, the proof's)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An OpenAI-compatible upstream that answers at once: a JSON completion, or a three-chunk stream.
 * `arrivals` holds when each request through the gateway reached it (the client marks its own).
 */
async function instantUpstream(): Promise<{ server: Server; baseUrl: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  const completion = JSON.stringify({
    id: 'up',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
  const chunk = (content: string) => `data: ${JSON.stringify({ id: 'up', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
  const server = createServer((request, response) => {
    if (request.headers['x-bench-direct'] === undefined) arrivals.push(performance.now());
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString());
      if (body.stream) {
        response.writeHead(200, { 'Content-Type': 'text/event-stream' });
        response.end(`${chunk('a')}${chunk('b')}data: ${JSON.stringify({ id: 'up', choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } })}\n\ndata: [DONE]\n\n`);
      } else {
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.end(completion);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, arrivals };
}

/**
 * The client, in a process of its own as a caller is on a machine of its own: its reads never
 * wait for the gateway's work, nor the gateway's for its. Times `runs` pairs of the same
 * request, to the upstream directly and through the gateway, after `warmUp` untimed pairs;
 * after each request through the gateway it waits at `idleUrl` until the runtime is idle, so
 * what an invocation does after its answer (the popularity count) is over before the next
 * request, as in Lambda, where a container takes one invocation at a time. Prints the
 * milliseconds to the first body byte and to the end of each, as JSON.
 */
const CLIENT = `
const { direct, gateway, key, body, warmUp, runs, idleUrl } = JSON.parse(process.argv[1]);
async function timed(url, authorization) {
  const start = performance.now();
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...authorization }, body });
  const reader = response.body.getReader();
  await reader.read();
  const firstByte = performance.now() - start;
  while (!(await reader.read()).done);
  if (!response.ok) throw new Error('HTTP ' + response.status);
  return { firstByte, total: performance.now() - start };
}
const times = { direct: [], gateway: [] };
for (let i = 0; i < warmUp + runs; i++) {
  const a = await timed(direct, { 'X-Bench-Direct': '1' });
  const b = await timed(gateway, { Authorization: 'Bearer ' + key });
  await (await fetch(idleUrl)).arrayBuffer();
  if (i >= warmUp) times.direct.push(a), times.gateway.push(b);
}
console.log(JSON.stringify(times));
`;

/** Answers once the runtime has no invocation under way. */
async function idleEndpoint(runtime: { idle(): Promise<void> }): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => {
    void runtime.idle().then(() => response.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

/** Per request through the gateway, in order: its DynamoDB calls, and when its answer was handed over. */
interface Observed {
  calls: Map<string, AwsCall[]>;
  answeredAt: number[];
}

async function proxyBench(): Promise<void> {
  const raw = await proxiedRun(undefined);
  const observed: Observed = { calls: new Map(), answeredAt: [] };
  const excluded = await proxiedRun(observed);
  console.log('\nProxied completion through the local runtime (400 sequential requests each), ms');
  console.log('                                  upstream direct     through gateway     added by gateway');
  console.log('                                  median     p99      median     p99      median     p99');
  for (const row of [...raw.rows, ...excluded.rows]) {
    const { name, direct, gateway } = row;
    const cells = [median(direct), percentile(direct, 99), median(gateway), percentile(gateway, 99), median(gateway) - median(direct), percentile(gateway, 99) - percentile(direct, 99)];
    console.log(`  ${name.padEnd(30)}${cells.map((c) => c.toFixed(2).padStart(9)).join('')}`);
  }
  console.log('  aim: storage excluded, at most 2 ms median and 6 ms p99 added, both rows (a published gateway adds 3.25 ms)');
  console.log('  (per request the gateway reads the key, its organization and workspace in one BatchGetItem from the embedded DynamoDB,');
  console.log('   and writes the usage item before the answer ends: after the whole answer, not before the first streamed byte;');
  console.log('   and the model\'s popularity figure once the answer has ended; the client runs in a process of its own,');
  console.log('   and each request starts once the runtime is idle, as a Lambda container takes one invocation at a time.');
  console.log('   "storage excluded": a second run in which each request\'s time is less the time its DynamoDB calls spent');
  console.log('   in the embedded DynamoDB (calls side by side counted once), before its whole answer (non-streamed) or before the upstream call (first byte);');
  console.log('   the SDK\'s own work on each call stays the gateway\'s, and so does observing the calls)');
}

/**
 * One run of the client against the gateway and the upstream directly; with `observed`, the
 * runtime reports its DynamoDB calls, and each request's time is less their service time.
 */
async function proxiedRun(observed: Observed | undefined): Promise<{ rows: { name: string; direct: number[]; gateway: number[] }[] }> {
  const upstream = await instantUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), 'modelgate-bench-'));
  const runtime = await startLocalRuntime({
    port: 0,
    persist: false,
    dataDir,
    logLevel: 'ERROR',
    inferenceUpstreams: { '*': upstream.baseUrl },
    ...(observed
      ? {
          observeAwsCalls: (call: AwsCall) => observed.calls.set(call.requestId ?? '', [...(observed.calls.get(call.requestId ?? '') ?? []), call]),
          observe: () => void observed.answeredAt.push(performance.now()),
        }
      : {}),
  });
  const idle = await idleEndpoint(runtime);
  const warmUp = 50;
  try {
    const rows: { name: string; direct: number[]; gateway: number[] }[] = [];
    for (const stream of [false, true]) {
      observed?.calls.clear();
      if (observed) observed.answeredAt.length = 0;
      upstream.arrivals.length = 0;
      const { stdout } = await run(process.execPath, [
        '--input-type=module',
        '-e',
        CLIENT,
        JSON.stringify({
          direct: `${upstream.baseUrl}/chat/completions`,
          gateway: `${runtime.baseUrl}/chat/completions`,
          key: runtime.demo.keys.workspace,
          body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], stream }),
          warmUp,
          runs: 400,
          idleUrl: idle.url,
        }),
      ]);
      const times = JSON.parse(stdout) as Record<'direct' | 'gateway', { firstByte: number; total: number }[]>;
      const figure = (timing: { firstByte: number; total: number }) => (stream ? timing.firstByte : timing.total);
      const name = stream ? 'streamed, time to first byte' : 'non-streamed, whole answer';
      if (!observed) {
        rows.push({ name, direct: times.direct.map(figure), gateway: times.gateway.map(figure) });
        continue;
      }
      // Each request's calls, in the order the requests came (one at a time), warm-up dropped.
      const perRequest = [...observed.calls.values()].slice(warmUp);
      const before = (i: number) => (stream ? upstream.arrivals[warmUp + i]! : observed.answeredAt[warmUp + i]!);
      const storage = perRequest.map((calls, i) => serviceMs(calls.filter((call) => (stream ? call.end <= before(i) : call.start < before(i)))));
      rows.push({ name: stream ? 'first byte, storage excluded' : 'non-streamed, storage excluded', direct: times.direct.map(figure), gateway: times.gateway.map((timing, i) => figure(timing) - storage[i]!) });
    }
    return { rows };
  } finally {
    await new Promise<void>((resolve) => idle.server.close(() => resolve()));
    await runtime.stop();
    await new Promise<void>((resolve) => upstream.server.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  quietSdkNodeNotice();
  await authenticationBench();
  await proxyBench();
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
