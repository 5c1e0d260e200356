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
import { generateKeyPairSync, sign } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { JWK } from 'jose';
import { hashApiKey } from '../lambdas/accounts/api-keys';
import type { ApiKeyRecord, Organization } from '../lambdas/accounts/types';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../lambdas/accounts/types';
import { randomId, systemClock } from '../lambdas/clock';
import { evaluateCondition } from '../lambdas/federation/condition';
import { evaluateExchange, type ExchangeDependencies } from '../lambdas/federation/evaluate-exchange';
import type { ExchangeEvent, ExchangeEventStore } from '../lambdas/federation/exchange-events';
import { createIssuerKeySource } from '../lambdas/federation/issuer-keys';
import { admitKey, type AdmittedKey } from '../lambdas/federation/subject-token';
import { verifySubjectJws } from '../lambdas/federation/subject-token-verification';
import type { FederationIssuer, FederationPolicy } from '../lambdas/federation/types';
import { createTokenExchangeHandler } from '../lambdas/functions/token-exchange/handler';
import { exchangeToken, type TokenExchangeDeps } from '../lambdas/oauth/exchange-token';
import { createTelemetry, SERVICE_NAME } from '../lambdas/observability/telemetry';
import { ActiveSigner } from '../lambdas/signing/active-signer';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { createDocumentClient } from '../lambdas/aws/dynamo-client';
import { DynamoExchangeEventStore } from '../lambdas/aws/dynamo-exchange-event-store';
import { DynamoFederationStore } from '../lambdas/aws/dynamo-federation-store';
import { DynamoJtiStore } from '../lambdas/aws/dynamo-jti-store';
import { DynamoRateCounterStore } from '../lambdas/aws/dynamo-rate-counter-store';
import { DynamoSigningKeyStore } from '../lambdas/aws/dynamo-signing-key-store';
import { TABLE_SCHEMAS } from '../lambdas/aws/table-schemas';
import { TRACING_ENVIRONMENT } from '../lib/constructs/service-function';
import { startEmbeddedDynamoDb } from '../local/embedded-dynamodb';
import { ReadableLogger } from '../local/readable-logger';
import { createTables } from '../local/tables';
import { quietSdkNodeNotice } from '../local/sdk-node-notice';
import { LOCAL_SIGNING_KEY_FILE } from '../local/signing-keys';
import { LOCAL_KEY_REF_PREFIX } from '../lambdas/wiring/signer-for-record';
import { DpopChecker } from '../lambdas/credentials/dpop-binding';
import { dpopProof, newDpopKey } from '../local/dpop-fetch';
import { MemoryJtiStore } from '../test/support/memory-jti-store';
import { MemoryProofReplayStore } from '../test/support/memory-proof-replay-store';
import { MemoryRateCounterStore } from '../test/support/memory-rate-counter-store';
import { slowestConditions } from './slowest-conditions';
import { exchangeForm } from '../local/exchange-form';

/** An exchange request without a DPoP proof. */
const NO_PROOF = { proofs: [], method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined, host: undefined } as const;

const RUNS = 15;
const MIN_RUN_MS = 50;
const WARM_UP_MS = 1_000;
const ISSUER_URL = 'https://token.actions.githubusercontent.com';
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const API_BASE_URL = 'https://api.modelgate.example/api/v1';

// --- fixtures: one organization, its workspace key, an issuer with inline keys, a policy ---

const organization: Organization = {
  id: '0b6f7c1e-8a3d-4c55-9a61-3f1d2e4b5a01',
  name: 'Bench',
  plan: 'enterprise',
  providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES },
  privacy: { ...DEFAULT_PRIVACY },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};
const workspaceKey: ApiKeyRecord = {
  hash: hashApiKey('sk-mg-v1-bench'),
  organizationId: organization.id,
  kind: 'workspace',
  workspaceId: 'c4e1f2a3-0000-4000-8000-000000000001',
  accessLevel: null,
  userId: null,
  name: 'bench',
  label: 'sk-mg-v1-…ench',
  disabled: false,
  guardrailIds: [],
  expiresAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};
const idpKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const idpJwk: JWK = { ...(idpKey.publicKey.export({ format: 'jwk' }) as JWK), kid: 'bench-1', alg: 'ES256', use: 'sig' };
const issuer: FederationIssuer = {
  id: '5d2a9c0e-1b7f-4e3a-8c6d-2f4e6a8b0c12',
  organizationId: organization.id,
  name: 'GitHub Actions',
  issuerUrl: ISSUER_URL,
  jwksUrl: null,
  jwks: { keys: [idpJwk] },
  checkJti: false,
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};
const policy: FederationPolicy = {
  id: 'a3c5e7f9-2b4d-4f6a-8c0e-1d3f5a7b9c23',
  organizationId: organization.id,
  name: 'deploy',
  issuerId: issuer.id,
  subject: SUBJECT,
  audience: AUDIENCE,
  condition: 'audience.exists(a, a == "https://modelgate.example") && token_type == ""',
  apiKeyHash: workspaceKey.hash,
  scope: 'inference',
  enabled: true,
  claimChecks: { scopes: null, tokenType: null },
  requireDpop: false,
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};

function subjectToken(claims: Record<string, unknown> = { sub: SUBJECT, aud: AUDIENCE }): string {
  const now = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: 'bench-1' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ iss: ISSUER_URL, ...claims, iat: now, exp: now + 3600, jti: randomId() })).toString('base64url');
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: idpKey.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${signature.toString('base64url')}`;
}

function proxyEvent(body: string, n: number): APIGatewayProxyEvent {
  return {
    resource: '/api/v1/oauth/token',
    path: '/api/v1/oauth/token',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    // Addresses in turn: the limiter does its work without refusing.
    requestContext: { requestId: `bench-${n}`, identity: { sourceIp: benchAddress(n) } },
  } as unknown as APIGatewayProxyEvent;
}

const context = { awsRequestId: 'bench', functionName: 'tokenExchange', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
const formBody = (token: string, policyId = policy.id) =>
  new URLSearchParams(exchangeForm(token, policyId)).toString();

// Log lines at ERROR only, written nowhere: the per-request info line is not what is measured.
const telemetry = createTelemetry({
  functionName: 'tokenExchange',
  logLevel: 'ERROR',
  localLogger: new ReadableLogger({ serviceName: SERVICE_NAME, logLevel: 'ERROR' }, () => undefined),
});

type Handler = ReturnType<typeof createTokenExchangeHandler>;
type Telemetry = ReturnType<typeof createTelemetry>;

function buildHandler(deps: {
  telemetry?: Telemetry;
  evaluation: ExchangeDependencies;
  signer: () => Promise<LocalSigner | Awaited<ReturnType<ActiveSigner['signer']>>>;
  stores: Pick<Parameters<typeof createTokenExchangeHandler>[0], 'rateCounters' | 'jtis' | 'events'>;
}): Handler {
  return createTokenExchangeHandler({
    corsAllowedOrigins: ['*'],
    config: { issuer: API_BASE_URL, maxLifetimeSeconds: 900, rateLimit: { limit: 1_000_000, windowSeconds: 60 } },
    clock: systemClock,
    newId: randomId,
    proofs: new DpopChecker({ apiBaseUrl: API_BASE_URL, servedHostnames: [], replays: new MemoryProofReplayStore(), clock: systemClock }),
    evaluate: (request) => evaluateExchange(deps.evaluation, request),
    signer: deps.signer,
    telemetry: deps.telemetry ?? telemetry,
    ...deps.stores,
  });
}

/** 65,536 source addresses taken in turn. */
const benchAddress = (n: number) => `10.0.${(n >> 8) & 255}.${n & 255}`;

/** Deeply frozen: the exchange reads records, and a write to one would throw here. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) frozen(member);
    Object.freeze(value);
  }
  return value;
}

function frozenReader(policies: FederationPolicy[], issuers: FederationIssuer[]): ExchangeDependencies['federation'] {
  const policyById = new Map(policies.map((p) => [p.id, frozen(structuredClone(p))]));
  const issuerById = new Map(issuers.map((i) => [i.id, frozen(structuredClone(i))]));
  return {
    getPolicy: async (id) => policyById.get(id),
    getIssuer: async (organizationId, id) => (issuerById.get(id)?.organizationId === organizationId ? issuerById.get(id) : undefined),
  };
}

function frozenAccounts(org: Organization, key: ApiKeyRecord): ExchangeDependencies['accounts'] {
  const [storedOrg, storedKey] = [frozen(structuredClone(org)), frozen(structuredClone(key))];
  return {
    getApiKey: async (hash) => (hash === storedKey.hash ? storedKey : undefined),
    getOrganization: async (id) => (id === storedOrg.id ? storedOrg : undefined),
  };
}

/**
 * What the evaluation reads, in memory: the records frozen (the exchange never changes what it
 * reads; a write would throw) and handed out as they are, since a read is I/O, which the
 * in-memory rows leave out; the issuer's keys inline.
 */
function frozenEvaluation(policies: FederationPolicy[]): ExchangeDependencies {
  return {
    federation: frozenReader(policies, [issuer]),
    accounts: frozenAccounts(organization, workspaceKey),
    issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: false }),
    clock: systemClock,
    evaluateCondition,
  };
}

/** The last 1,024 events written, as written. */
class RecentEvents implements ExchangeEventStore {
  private readonly recent: ExchangeEvent[] = [];
  private written = 0;

  async record(event: ExchangeEvent): Promise<void> {
    this.recent[this.written++ & 1023] = event;
  }

  async list(): ReturnType<ExchangeEventStore['list']> {
    return { events: this.recent.slice(), nextCursor: null };
  }
}

// --- timing ---

/**
 * Times each row: a warm-up of each, then RUNS rounds in which every row gets one timed run
 * in turn, so the load of the shared machine falls on all rows alike. A row's figure is the
 * median of its runs.
 */
async function medians<Row extends string>(rows: Record<Row, () => Promise<unknown> | unknown>): Promise<Record<Row, number>> {
  const entries = Object.entries(rows) as [Row, () => Promise<unknown> | unknown][];
  // Warm-up by time as well as count: the first rows measured otherwise pay for the JIT.
  for (const [, fn] of entries) {
    for (let i = 0, start = performance.now(); i < 200 || performance.now() - start < WARM_UP_MS; i++) await fn();
  }
  const perCall = new Map<Row, number[]>(entries.map(([row]) => [row, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const [row, fn] of entries) {
      let calls = 0;
      const start = performance.now();
      do {
        await fn();
        calls++;
      } while (performance.now() - start < MIN_RUN_MS);
      perCall.get(row)!.push((performance.now() - start) / calls);
    }
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return Object.fromEntries(entries.map(([row]) => [row, median(perCall.get(row)!)])) as Record<Row, number>;
}

/**
 * Exchanges whose policy holds one of the slowest conditions the bound admits, each with the
 * subject token that makes it slowest, against the plain exchange in the same rounds.
 */
async function slowConditionRows(deps: { signer: LocalSigner; events: ExchangeEventStore; plainBody: string; next: () => number }): Promise<void> {
  const slow = slowestConditions(AUDIENCE).map((entry, i) => ({
    ...entry,
    policy: { ...policy, id: `b7c9e1f3-0000-4000-8000-00000000000${i}`, name: entry.name, subject: null, condition: entry.condition },
    token: subjectToken(entry.claims),
  }));
  const handler = buildHandler({
    evaluation: frozenEvaluation([policy, ...slow.map((entry) => entry.policy)]),
    signer: async () => deps.signer,
    stores: { rateCounters: new MemoryRateCounterStore(), jtis: new MemoryJtiStore(), events: deps.events },
  });
  // The plain exchange, and the same with a token as large as the slow ones (a claim no rule reads).
  const largeBody = formBody(subjectToken({ sub: SUBJECT, aud: AUDIENCE, padding: 'p'.repeat(11_300) }));
  const rows: Record<string, () => Promise<unknown>> = {
    plain: () => handler(proxyEvent(deps.plainBody, deps.next()), context),
    'plain, 16 KB token': () => handler(proxyEvent(largeBody, deps.next()), context),
  };
  for (const entry of slow) {
    // docs/reference.md#limits: what an exchange admits, so what an attacker can send.
    if (Buffer.byteLength(entry.token) > 16 * 1024) throw new Error(`the token for "${entry.name}" is larger than 16 KB`);
    const body = formBody(entry.token, entry.policy.id);
    const answer = await handler(proxyEvent(body, deps.next()), context);
    if (answer.statusCode !== 200) throw new Error(`the exchange for "${entry.name}" was refused: ${answer.body}`);
    rows[entry.name] = () => handler(proxyEvent(body, deps.next()), context);
  }
  const timed = await medians(rows);
  console.log('Slowest conditions the bound admits, handler with in-memory stores, median per exchange:');
  for (const [name, ms] of Object.entries(timed)) {
    console.log(`  ${name.padEnd(56)} ${us(ms)}  ${(ms / timed.plain!).toFixed(2).padStart(6)}x the plain exchange`);
  }
}

/** Runs `fn` with stdout writes counted and dropped: the JSON log lines and EMF records are serialized, not shown. */
async function withDiscardedStdout<T>(fn: () => Promise<T>): Promise<T> {
  const write = process.stdout.write;
  let written = 0;
  process.stdout.write = ((chunk: string | Uint8Array) => ((written += chunk.length), true)) as typeof process.stdout.write;
  try {
    return await fn();
  } finally {
    process.stdout.write = write;
    if (written === 0) throw new Error('the Lambda telemetry wrote nothing');
  }
}

const us = (ms: number) => `${(ms * 1000).toFixed(0).padStart(7)} µs`;
const perSecond = (ms: number) => `${Math.round(1000 / ms).toLocaleString('en-US').padStart(8)}/s`;

/**
 * The handler with the Lambda telemetry and tracing on, as a function runs in AWS: the
 * variables the Lambda runtime sets for an invocation with active tracing, the stack's tracing
 * environment, and a UDP socket standing in for the X-Ray daemon.
 */
async function tracedRow(
  dir: string,
  deps: { evaluation: ExchangeDependencies; signer: LocalSigner; body: string; next: () => number; events: ExchangeEventStore },
): Promise<number> {
  const daemon = createSocket('udp4');
  let documents = 0;
  daemon.on('message', () => documents++);
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  try {
    Object.assign(process.env, {
      ...TRACING_ENVIRONMENT,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      LAMBDA_TASK_ROOT: dir,
      _HANDLER: 'index.handler',
      _X_AMZN_TRACE_ID: 'Root=1-6740f1a2-5b3c4d5e6f708192a3b4c5d6;Parent=53995c3f42cd8ad8;Sampled=1',
      AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as { port: number }).port}`,
      AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
    });
    const tracedTelemetry = createTelemetry({ functionName: 'tokenExchange', logLevel: 'INFO' });
    if (!tracedTelemetry.tracer?.isTracingEnabled()) throw new Error('tracing did not start');
    const handler = buildHandler({
      telemetry: tracedTelemetry,
      evaluation: deps.evaluation,
      signer: async () => deps.signer,
      stores: {
        rateCounters: new MemoryRateCounterStore(),
        jtis: new MemoryJtiStore(),
        events: deps.events,
      },
    });
    const { traced: tracedMs } = await withDiscardedStdout(() => medians({ traced: () => handler(proxyEvent(deps.body, deps.next()), context) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (documents === 0) throw new Error('no segment reached the X-Ray daemon stand-in');
    return tracedMs;
  } finally {
    daemon.close();
  }
}

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

/** What every row exchanges with: the evaluation's records, the signer, the events, the subject token, and the next source address's number. */
interface ExchangeRowsDeps {
  evaluation: ExchangeDependencies;
  signer: LocalSigner;
  events: ExchangeEventStore;
  token: string;
  next: () => number;
}

/** 0, 1, 2, …: each request's source address in turn. */
function counter(): () => number {
  let n = 0;
  return () => n++;
}

/**
 * The exchange with in-memory stores, as the handler, with the Lambda telemetry, as the domain
 * function alone (with and without a DPoP proof), and the evaluation alone, against the crypto
 * floor in the same rounds. Returns the floor.
 */
async function exchangeRows({ evaluation, signer, events, token, next }: ExchangeRowsDeps): Promise<number> {
  // The rate counters and jti claims as the tests keep them, and the last events.
  const memoryStores = () => ({ rateCounters: new MemoryRateCounterStore(), jtis: new MemoryJtiStore(), events });
  const memoryHandler = buildHandler({ evaluation, signer: async () => signer, stores: memoryStores() });
  const body = formBody(token);
  const check = await memoryHandler(proxyEvent(body, next()), context);
  if (check.statusCode !== 200) throw new Error(`the bench exchange was refused: ${check.body}`);
  // As deployed: JSON log lines and EMF records, serialized and written to a stdout that drops them.
  const lambdaHandler = buildHandler({
    telemetry: createTelemetry({ functionName: 'tokenExchange', logLevel: 'INFO' }),
    evaluation,
    signer: async () => signer,
    stores: memoryStores(),
  });
  // Where the time goes: the decision alone, and the domain function without the Lambda middlewares.
  const domainDeps: TokenExchangeDeps = {
    config: { issuer: API_BASE_URL, maxLifetimeSeconds: 900, rateLimit: { limit: 1_000_000, windowSeconds: 60 } },
    clock: systemClock,
    newId: randomId,
    proofs: new DpopChecker({ apiBaseUrl: API_BASE_URL, servedHostnames: [], replays: new MemoryProofReplayStore(), clock: systemClock }),
    ...memoryStores(),
    evaluate: (request) => evaluateExchange(evaluation, request),
    signer: async () => signer,
    logger: { error: () => undefined },
  };
  const exchange = (deps: TokenExchangeDeps, proofs: string[] = []) =>
    exchangeToken(deps, { body, contentType: 'application/x-www-form-urlencoded', sourceIp: benchAddress(next()), requestId: 'bench', ...NO_PROOF, proofs });
  const bound = await boundExchange(domainDeps, exchange);
  // The floor: the subject token's signature checked as the exchange checks it, and one ES256 signature.
  const key = (await admitKey(idpJwk)) as AdmittedKey;
  const signingInput = Buffer.from(`${'x'.repeat(120)}.${'y'.repeat(300)}`);
  const timed = await withDiscardedStdout(() =>
    medians({
      handler: async () => void (await memoryHandler(proxyEvent(body, next()), context)),
      lambda: async () => void (await lambdaHandler(proxyEvent(body, next()), context)),
      evaluate: () => evaluateExchange(evaluation, { subjectToken: token, policyId: policy.id }),
      domain: async () => void (await exchange(domainDeps)),
      bound,
      floor: async () => {
        await verifySubjectJws(token, key.key);
        await signer.sign(signingInput);
      },
      verify: () => verifySubjectJws(token, key.key),
      sign: () => signer.sign(signingInput),
    }),
  );
  printExchangeRows(timed);
  return timed.floor;
}

/**
 * The domain function with a DPoP proof: every check runs; the replay record is a DynamoDB write
 * in the first stage, and a store in memory would refuse the proof the loop presents again.
 */
async function boundExchange(domainDeps: TokenExchangeDeps, exchange: (deps: TokenExchangeDeps, proofs: string[]) => Promise<unknown>): Promise<() => Promise<void>> {
  const dpopKey = await newDpopKey();
  const boundDeps: TokenExchangeDeps = { ...domainDeps, proofs: new DpopChecker({ apiBaseUrl: API_BASE_URL, servedHostnames: [], replays: { claim: async () => true }, clock: systemClock }) };
  let proof = { value: await dpopProof(dpopKey, 'POST', `${API_BASE_URL}/oauth/token`), signedAt: Date.now() };
  return async () => {
    // Proofs are good for 300 s; one a minute keeps the bench inside the window.
    if (Date.now() - proof.signedAt > 60_000) proof = { value: await dpopProof(dpopKey, 'POST', `${API_BASE_URL}/oauth/token`), signedAt: Date.now() };
    await exchange(boundDeps, [proof.value]);
  };
}

function printExchangeRows(timed: Record<'handler' | 'lambda' | 'evaluate' | 'domain' | 'bound' | 'floor' | 'verify' | 'sign', number>): void {
  const { handler: handlerMs, lambda: lambdaMs, evaluate: evaluateMs, domain: domainMs, bound: boundMs, floor: floorMs, verify: verifyMs, sign: signMs } = timed;
  console.log('Token exchange (POST /oauth/token), median per exchange:');
  console.log(`  handler, in-memory stores      ${us(handlerMs)}  ${perSecond(handlerMs)}`);
  console.log(`  crypto floor                   ${us(floorMs)}  ${perSecond(floorMs)}   (one jose compactVerify and one ES256 sign per iteration; alone, in tight loops: verify ${us(verifyMs).trim()}, sign ${us(signMs).trim()})`);
  console.log(`  ratio handler / floor          ${(handlerMs / floorMs).toFixed(2).padStart(10)}x   (aim: at most 2x)`);
  console.log(`  handler, Lambda telemetry      ${us(lambdaMs)}  ${perSecond(lambdaMs)}   (${(lambdaMs / floorMs).toFixed(2)}x the floor; JSON logs and EMF to a discarded stdout)`);
  console.log(`  of which: evaluateExchange     ${us(evaluateMs)}   exchangeToken (no middlewares) ${us(domainMs).trim()}`);
  console.log(`  exchangeToken with a DPoP proof ${us(boundMs)}   ${(boundMs / domainMs).toFixed(2)}x without one (one more ES256 verification; the replay write joins the first stage)`);
}

/** The same handler over the DynamoDB stores on the embedded DynamoDB: sequentially, then 8 requests in flight. */
async function storeBackedRows({ evaluation, signer, token, next }: ExchangeRowsDeps): Promise<void> {
  const dynamo = await startEmbeddedDynamoDb();
  try {
    await createTables(dynamo.client);
    const documentClient = createDocumentClient(dynamo.client);
    const dynamoFederation = new DynamoFederationStore(documentClient, TABLE_SCHEMAS.policies.localName);
    await dynamoFederation.createIssuer(issuer);
    await dynamoFederation.createPolicy(policy);
    const dynamoAccounts = new DynamoAccountStore(documentClient, TABLE_SCHEMAS.keys.localName);
    await dynamoAccounts.createOrganization(organization);
    await dynamoAccounts.createApiKey(workspaceKey);
    const signingKeys = new DynamoSigningKeyStore(documentClient, TABLE_SCHEMAS.keys.localName);
    await signingKeys.put({ kid: signer.kid, keyRef: `${LOCAL_KEY_REF_PREFIX}${LOCAL_SIGNING_KEY_FILE}`, publicJwk: signer.publicJwk, status: 'active', createdAt: new Date().toISOString(), retiredAt: null });
    const activeSigner = new ActiveSigner(signingKeys, async () => signer, systemClock);
    const storeHandler = buildHandler({
      evaluation: { ...evaluation, federation: dynamoFederation, accounts: dynamoAccounts },
      signer: () => activeSigner.signer(),
      stores: {
        rateCounters: new DynamoRateCounterStore(documentClient, TABLE_SCHEMAS.rateCounters.localName),
        jtis: new DynamoJtiStore(documentClient, TABLE_SCHEMAS.policies.localName),
        events: new DynamoExchangeEventStore(documentClient, TABLE_SCHEMAS.policies.localName),
      },
    });
    const body = formBody(token);
    const storeCheck = await storeHandler(proxyEvent(body, next()), context);
    if (storeCheck.statusCode !== 200) throw new Error(`the store-backed bench exchange was refused: ${storeCheck.body}`);
    const sequential = 300;
    let start = performance.now();
    for (let i = 0; i < sequential; i++) await storeHandler(proxyEvent(body, next()), context);
    const sequentialMs = (performance.now() - start) / sequential;
    const inFlight = 8;
    const total = 400;
    start = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (sent++ < total) await storeHandler(proxyEvent(body, next()), context);
      }),
    );
    const concurrentMs = (performance.now() - start) / total;
    console.log(`  handler, embedded DynamoDB     ${us(sequentialMs)}  ${perSecond(sequentialMs)}   (sequential; 4 reads, 2 writes each)`);
    console.log(`  handler, embedded DynamoDB     ${us(concurrentMs)}  ${perSecond(concurrentMs)}   (${inFlight} in flight)`);
  } finally {
    await dynamo.stop();
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
