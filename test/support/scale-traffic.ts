import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import type { Clock, Random } from '../../lambdas/clock';
import type { FunctionId } from '../../lambdas/routes';
import type { AwsCall } from '../../local/aws-calls';
import { readDevCertificateAuthority } from '../../local/dev-ca';
import { startLocalRuntime, type LocalRuntime } from '../../local/runtime';
import type { ScaleLoad } from '../../local/scale-model';
import { connectToRuntime, type RuntimeStores } from './accounts';
import { startTestDynamoDb } from './dynamodb-local';
import { makeIssuer, makePolicy } from './federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from './identity-provider';
import { exchangeForm } from '../../local/exchange-form';
import { batchWriteAll } from '../../lambdas/aws/dynamo-items';
import { daysBefore } from '../../lambdas/usage/usage';
import { ADDRESS_ROW_REQUESTS, measureBackground, rowLoad, type BackgroundReads, type BudgetUpkeep } from './scale-scenarios';
import { DynamoBudgetLedgers } from '../../lambdas/aws/dynamo-budget-ledgers';
import { createDocumentClient, createDynamoDbClient } from '../../lambdas/aws/dynamo-client';
import { bucketOf } from '../../lambdas/budgets/budget-ledgers';
import { budgetLayers, type BudgetLayer } from '../../lambdas/budgets/layers';
import { periodAt } from '../../lambdas/budgets/periods';
import { observeClientCalls } from '../../local/aws-calls';
import { LOCAL_AWS_ENV } from '../../local/embedded-dynamodb';
import { functionCredentials } from '../../local/function-principals';

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

export type TrafficRowId =
  | 'key-completions'
  | 'limited-key-completions'
  | 'token-completions'
  | 'key-catalog'
  | 'organization-completions'
  | 'limited-workspace-completions'
  | 'model-completions'
  | 'policy-exchanges'
  | 'address-exchanges'
  | 'jwks'
  | 'key-usage'
  | 'organization-activity'
  | 'key-usage-day-365'
  | 'organization-activity-day-365';

export interface TrafficRow {
  id: TrafficRowId;
  /** What the row sends, as the docs table names it. */
  traffic: string;
  /** Requests per second the row is scaled to; none for a row measured for its cost only. */
  rate?: number;
  /** The route its requests take, and the function that serves it, for the cost table. */
  route: string;
  functionName: FunctionId;
}

/** The rows the scale model holds to DynamoDB's limits. */
export const TRAFFIC_ROWS: readonly (TrafficRow & { rate: number })[] = [
  { id: 'key-completions', traffic: 'one workspace key, completions on one model', rate: 10_000, route: 'POST /chat/completions (API key)', functionName: 'inference' },
  {
    id: 'limited-key-completions',
    traffic: 'one key with a monthly limit and a guardrail\'s daily budget, completions on one model',
    rate: 10_000,
    route: 'POST /chat/completions (API key, limits)',
    functionName: 'inference',
  },
  { id: 'token-completions', traffic: 'one access token, completions on one model', rate: 10_000, route: 'POST /chat/completions (access token)', functionName: 'inference' },
  { id: 'key-catalog', traffic: 'catalog from one key', rate: 10_000, route: 'GET /models/user', functionName: 'catalog' },
  { id: 'organization-completions', traffic: 'one organization, completions over many keys', rate: 50_000, route: 'POST /chat/completions (API key)', functionName: 'inference' },
  {
    id: 'limited-workspace-completions',
    traffic: 'one workspace with a monthly budget, completions over many keys each with a limit',
    rate: 50_000,
    route: 'POST /chat/completions (API key, limits)',
    functionName: 'inference',
  },
  { id: 'model-completions', traffic: 'one model, completions across the deployment', rate: 50_000, route: 'POST /chat/completions (API key)', functionName: 'inference' },
  { id: 'policy-exchanges', traffic: 'one policy, token exchanges', rate: 300, route: 'POST /oauth/token', functionName: 'tokenExchange' },
  // A NAT's worth of workloads behind one address, for the 30 s or so before the firewall's rate rule blocks it.
  { id: 'address-exchanges', traffic: 'one address, token exchanges past its limit', rate: 10_000, route: 'POST /oauth/token', functionName: 'tokenExchange' },
  { id: 'jwks', traffic: 'the key set, fetched by every verifier', rate: 10_000, route: 'GET /oauth/jwks', functionName: 'jwks' },
];

/** Rows measured for what they cost only: the usage views, on the first day and after a year of history, folded. */
export const COST_ROWS: readonly TrafficRow[] = [
  { id: 'key-usage', traffic: 'a key\'s own usage', route: 'GET /key', functionName: 'management' },
  { id: 'organization-activity', traffic: 'an organization\'s activity', route: 'GET /activity', functionName: 'management' },
  { id: 'key-usage-day-365', traffic: 'a key\'s own usage, a year of 20 models a day on', route: 'GET /key', functionName: 'management' },
  { id: 'organization-activity-day-365', traffic: 'an organization\'s activity, a year on', route: 'GET /activity', functionName: 'management' },
];

export interface MeasuredRow extends TrafficRow {
  /** How many requests were measured. */
  requests: number;
  /** Every AWS call they made, the calls made after an answer ended included. */
  calls: AwsCall[];
  /** The same, request by request. */
  callsPerRequest: AwsCall[][];
  /** Each request's time on the local runtime, to the end of its invocation, ms. */
  localMs: number[];
  /** The bytes of each answer's body as API Gateway sends it: gzipped from its minimum compression size (1 KiB) on. */
  answerBytes: number[];
  /** At the row's rate, its containers' own reads included; none for a cost-only row. */
  load?: ScaleLoad;
  /** The spending limits its requests meet: what keeps each one's ledger (scale-scenarios.ts). */
  budgets?: BudgetUpkeep[];
}

export interface ScaleRunOptions {
  /** Requests per row: a multiple of the largest count of copies or shards (128) spreads them exactly. @default 512 */
  requests?: number;
  /** Token exchanges in the policy row (each from its own address). @default 128 */
  exchanges?: number;
  /**
   * Keys of the organization row, and of the model row (over five organizations), taken in turn.
   * An odd number, so that each key's own draws, too, take its copies in turn (see {@link equidistributed}). @default 17
   */
  keys?: number;
  /** Requests of each cost-only row. @default 16 */
  costRequests?: number;
  /** Rows to run. @default every row of {@link TRAFFIC_ROWS} and {@link COST_ROWS} */
  rows?: readonly TrafficRowId[];
}

const MODEL = 'openai/gpt-4o-mini';
/** The limited rows' caps: far above what a run spends, so every request is let in and each ledger kept as at the targets. */
const LIMIT_USD = 1_000_000;
/** API Gateway compresses an answer from this size on, for a client that accepts it (lib/constructs/api.ts). */
const GATEWAY_MIN_COMPRESSION_BYTES = 1024;
const MODEL_ROW_ORGANIZATIONS = 5;
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';

/** What a scale run measured: each row, and what each container reads on its own. */
export interface MeasuredScale {
  rows: MeasuredRow[];
  background: BackgroundReads;
}

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
  // What the limits' ledgers cost a deployment besides the requests: measured through an observed client as the functions' calls are.
  const upkeepClient = createDynamoDbClient({ endpoint: runtime.dynamoEndpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: functionCredentials('inference') });
  let upkeepCalls: AwsCall[] = [];
  observeClientCalls(upkeepClient, 'inference', 'DynamoDB', (call) => upkeepCalls.push(call), 'items');
  const upkeepLedgers = new DynamoBudgetLedgers(createDocumentClient(upkeepClient), TABLE_SCHEMAS.usage.localName);
  const measureUpkeep = async (layers: BudgetLayer[]): Promise<BudgetUpkeep[]> => {
    const upkeep: BudgetUpkeep[] = [];
    for (const layer of layers) {
      const ref = { ledger: layer.ledger, period: periodAt(layer.window, at).id };
      const hold = { bucket: bucketOf(at) + 1_000_000, epoch: '-' };
      upkeepCalls = [];
      const granted = await upkeepLedgers.grant({ ref, limit: layer.amountUsd, amount: '0.000001', hold });
      if (!granted.granted) throw new Error(`the ledger of ${layer.description} refused a grant`);
      const grant = upkeepCalls;
      upkeepCalls = [];
      await upkeepLedgers.fold(ref, layer.scope, hold, '0.000001');
      upkeep.push({ layer: layer.description, scope: layer.scope.kind, grant, fold: upkeepCalls });
    }
    return upkeep;
  };
  const idp = await startIdentityProvider({ ca: readDevCertificateAuthority(dataDir) });
  try {
    const traffic = new Traffic(runtime, stores, idp, at);
    const rows = [...TRAFFIC_ROWS, ...COST_ROWS].filter((row) => !options.rows || options.rows.includes(row.id));
    const measured: MeasuredRow[] = [];
    for (const row of rows) {
      const requests =
        row.rate === undefined ? (options.costRequests ?? 16) : row.id === 'policy-exchanges' ? (options.exchanges ?? 128) : row.id === 'address-exchanges' ? ADDRESS_ROW_REQUESTS : (options.requests ?? 512);
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
      const layers = traffic.budgetLayersOf(row.id);
      measured.push({ ...row, requests, calls: rowCalls, callsPerRequest, localMs, answerBytes, ...(layers ? { budgets: await measureUpkeep(await layers()) } : {}) });
    }
    const background = await measureBackground(runtime, at);
    for (const row of measured) if (row.rate !== undefined) row.load = rowLoad(row, background);
    return { rows: measured, background };
  } finally {
    upkeepClient.destroy();
    await idp.close();
    stores.destroy();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Draws that spread each kind of choice exactly evenly: the k-th draw a request makes (the copy
 * authentication reads, then the usage shard) takes the next value of a van der Corput sequence
 * of its own (the bits of 1, 2, 3, … mirrored about the binary point), and every block of 2^n
 * values of a sequence holds exactly one in each 2^-n interval: over whole blocks of requests,
 * each kind of choice falls on every power-of-two count of copies or shards alike, as many
 * random draws do on average. `endRequest` starts the next request's draws at the first kind,
 * `startRow` every sequence at its start.
 */
function equidistributed(): { random: Random; endRequest(): void; startRow(): void } {
  let drawn: number[] = [];
  let made = 0;
  const vanDerCorput = (index: number) => {
    let value = 0;
    for (let weight = 0.5, bits = index; bits > 0; weight /= 2, bits >>= 1) if (bits & 1) value += weight;
    return value;
  };
  return {
    random: () => {
      const kind = made++;
      drawn[kind] = (drawn[kind] ?? 0) + 1;
      return vanDerCorput(drawn[kind]!);
    },
    endRequest: () => {
      made = 0;
    },
    startRow: () => {
      drawn = [];
      made = 0;
    },
  };
}

/** Sends request `i` of a row; resolves to its status. */
type Send = (i: number) => Promise<number>;

/** The credentials and requests of each row, set up and warmed before its measured requests. */
class Traffic {
  private policyId: string | undefined;

  constructor(
    private readonly runtime: LocalRuntime,
    private readonly stores: RuntimeStores,
    private readonly idp: TestIdentityProvider,
    private readonly at: Date,
  ) {}

  /** Sets the row up; every credential it uses has made one request (a container's first sight of a key costs a read more). */
  async prepare(row: TrafficRowId, keys: number): Promise<Send> {
    const { demo } = this.runtime;
    switch (row) {
      case 'key-completions':
        return this.warmed([demo.keys.workspace], (credential) => this.completion(credential));
      case 'limited-key-completions': {
        // A key of its own with a monthly limit, under a guardrail with a daily budget: two ledgers of one key.
        const organizationId = demo.organizationId;
        const { key, secret } = await this.stores.accounts.createApiKey(organizationId, { kind: 'workspace', name: 'scale limited', limit: LIMIT_USD, limitReset: 'monthly' });
        const guardrail = await this.stores.accounts.createGuardrail(organizationId, {
          name: 'scale budget',
          description: null,
          workspaceId: null,
          allowedModels: null,
          ignoredModels: null,
          allowedProviders: null,
          ignoredProviders: null,
          enforceZdr: false,
          budget: { amount: LIMIT_USD, reset: 'daily' },
        });
        await this.stores.accounts.assignGuardrailToKeys(organizationId, guardrail.id, [key.hash]);
        this.limited.set(row, async () => [await this.layersOf(organizationId, key.hash)]);
        return this.warmed([secret], (credential) => this.completion(credential));
      }
      case 'limited-workspace-completions': {
        // An organization of its own whose workspace has a monthly budget, its keys each a limit.
        const { organization, workspace } = await this.stores.accounts.createOrganization({ name: 'scale limited organization', plan: 'enterprise' });
        await this.stores.accounts.putWorkspaceBudget(organization.id, workspace.id, 'monthly', { limitUsd: LIMIT_USD });
        const made = await Promise.all(
          Array.from({ length: keys }, (_, i) => this.stores.accounts.createApiKey(organization.id, { kind: 'workspace', name: `scale limited ${i}`, limit: LIMIT_USD, limitReset: 'monthly' })),
        );
        this.limited.set(row, async () => Promise.all(made.map(({ key }) => this.layersOf(organization.id, key.hash))));
        return this.warmed(
          made.map(({ secret }) => secret),
          (credential) => this.completion(credential),
        );
      }
      case 'token-completions':
        return this.warmed([await this.accessToken()], (credential) => this.completion(credential));
      case 'key-catalog':
        // A key of its own: each row is one key's traffic, and every row runs at once in the scenario of all targets.
        return this.warmed(await this.ownKey('catalog'), (credential) => this.call('GET', '/models/user?limit=10', credential));
      case 'organization-completions': {
        // An organization of its own: the keys of the other rows are the demo organization's, and every row runs at once in the scenario of all targets.
        const { organization } = await this.stores.accounts.createOrganization({ name: 'scale organization', plan: 'enterprise' });
        return this.warmed(await this.keysOf(organization.id, keys), (credential) => this.completion(credential));
      }
      case 'model-completions': {
        // As many keys again, in organizations of their own across the deployment.
        const organizations = await Promise.all(
          Array.from({ length: MODEL_ROW_ORGANIZATIONS }, (_, i) => this.stores.accounts.createOrganization({ name: `scale ${i}`, plan: 'enterprise' })),
        );
        const credentials: string[] = [];
        for (let i = 0; i < keys; i++) credentials.push(...(await this.keysOf(organizations[i % MODEL_ROW_ORGANIZATIONS]!.organization.id, 1)));
        return this.warmed(credentials, (credential) => this.completion(credential));
      }
      case 'key-usage':
        return this.warmed([demo.keys.workspace], (credential) => this.call('GET', '/key', credential));
      case 'organization-activity':
        return this.warmed([demo.keys.managementReadOnly], (credential) => this.call('GET', '/activity', credential));
      case 'policy-exchanges': {
        const policyId = await this.policy();
        // Each exchange from an address of its own: the per-address counter is the caller's, not the policy's.
        return async (i) => this.exchange(policyId, `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`);
      }
      case 'address-exchanges': {
        const policyId = await this.policy();
        return async () => this.exchange(policyId, '127.0.200.1');
      }
      case 'jwks':
        return this.warmed([''], () => this.send('GET', '/oauth/jwks', {}).then((answer) => answer.status));
      case 'key-usage-day-365':
        await this.history();
        return this.warmed([demo.keys.workspace], (credential) => this.call('GET', '/key', credential));
      case 'organization-activity-day-365':
        await this.history();
        return this.warmed([demo.keys.managementReadOnly], (credential) => this.call('GET', '/activity', credential));
    }
  }

  private async warmed(credentials: readonly string[], send: (credential: string) => Promise<number>): Promise<Send> {
    for (const credential of credentials) {
      const status = await send(credential);
      if (status !== 200) throw new Error(`warm-up answered ${status}`);
    }
    await this.runtime.idle();
    return (i) => send(credentials[i % credentials.length]!);
  }

  private completion(credential: string): Promise<number> {
    return this.call('POST', '/chat/completions', credential, JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] }));
  }

  /** The body of the last answer, in bytes as the gateway sends it (gzipped from 1 KiB on). */
  lastAnswerBytes = 0;

  /** The limited rows' keys' layers, read once the row has run. */
  private readonly limited = new Map<TrafficRowId, () => Promise<BudgetLayer[][]>>();

  /** The spending-limit layers each of the row's keys meets, distinct ledgers once; undefined for a row without limits. */
  budgetLayersOf(row: TrafficRowId): (() => Promise<BudgetLayer[]>) | undefined {
    const layers = this.limited.get(row);
    if (!layers) return undefined;
    return async () => [...new Map((await layers()).flat().map((layer) => [layer.ledger, layer])).values()];
  }

  private async layersOf(organizationId: string, hash: string): Promise<BudgetLayer[]> {
    const key = await this.stores.accounts.getApiKey(organizationId, hash);
    const workspace = key.workspaceId ? await this.stores.accounts.getWorkspace(organizationId, key.workspaceId) : null;
    const ids = [...key.guardrailIds, ...(workspace?.guardrailIds ?? [])];
    const guardrails = await Promise.all(ids.map((id) => this.stores.accounts.getGuardrail(organizationId, id).catch(() => undefined)));
    return budgetLayers({ key, workspace }, guardrails.filter((g): g is NonNullable<typeof g> => g !== undefined));
  }

  private readonly ownKeys = new Map<string, string[]>();

  /** A key of the demo organization for one row, created once. */
  private async ownKey(row: string): Promise<string[]> {
    const made = this.ownKeys.get(row) ?? (await this.keysOf(this.runtime.demo.organizationId, 1));
    this.ownKeys.set(row, made);
    return made;
  }

  private historyWritten = false;

  /**
   * A year of the demo key's usage, 20 models a day, as the completions of each day left it (one
   * shard each), folded by the rollup as its schedule would have: the history the day-365 rows read.
   */
  private async history(): Promise<void> {
    if (this.historyWritten) return;
    this.historyWritten = true;
    const { organizationId, keys } = this.runtime.demo;
    const hash = hashApiKey(keys.workspace);
    const items = Array.from({ length: 365 }, (_, day) => daysBefore(this.at, day + 1)).flatMap((date, d) =>
      Array.from({ length: 20 }, (_, m) => {
        const model = `history/model-${m}`;
        const shard = (d + m) % 64;
        return { pk: `KEY#${hash}#${shard % 16}`, sk: `${date}#${model}#history#${shard}`, gsi1pk: `ORG#${organizationId}#${shard}`, gsi1sk: `${date}#${hash}#${model}#history`, date, model, permaslug: model, endpointId: `${model}:history`, providerName: 'History', requests: 3, promptTokens: 300, completionTokens: 150, cost: 0.001, via_api_key: 3 };
      }),
    );
    await batchWriteAll(this.stores.documentClient, TABLE_SCHEMAS.usage.localName, items.map((Item) => ({ PutRequest: { Item } })));
    await this.runtime.rollUpUsage();
  }

  /** `count` workspace keys of the organization, created as the operator CLI creates them. */
  private async keysOf(organizationId: string, count: number): Promise<string[]> {
    const secrets: string[] = [];
    for (let i = 0; i < count; i++) secrets.push((await this.stores.accounts.createApiKey(organizationId, { kind: 'workspace', name: `scale ${i}` })).secret);
    return secrets;
  }

  /** A policy acting as the demo workspace key, trusting the identity provider. */
  private async policy(): Promise<string> {
    if (this.policyId) return this.policyId;
    const federation = new DynamoFederationStore(this.stores.documentClient, TABLE_SCHEMAS.policies.localName);
    const organizationId = this.runtime.demo.organizationId;
    const issuer = makeIssuer({ organizationId, issuerUrl: this.idp.issuerUrl });
    await federation.createIssuer(issuer);
    // Its tokens act as a key of their own, not the key of the completions row.
    const [actingKey] = await this.ownKey('tokens');
    const policy = makePolicy({ organizationId, issuerId: issuer.id, subject: SUBJECT, audience: AUDIENCE, apiKeyHash: hashApiKey(actingKey!) });
    await federation.createPolicy(policy);
    this.policyId = policy.id;
    // The first exchange fetches the issuer's keys and the signing-key records, as a warm container has.
    if ((await this.exchange(policy.id, '127.0.0.2')) !== 200) throw new Error('the warm-up exchange was refused');
    return policy.id;
  }

  private async accessToken(): Promise<string> {
    const answer = await this.send('POST', '/oauth/token', { 'Content-Type': 'application/x-www-form-urlencoded' }, this.exchangeBody(await this.policy()), '127.0.0.3');
    if (answer.status !== 200) throw new Error(`the exchange answered ${answer.status}: ${answer.body}`);
    return (JSON.parse(answer.body) as { access_token: string }).access_token;
  }

  private async exchange(policyId: string, address: string): Promise<number> {
    return (await this.send('POST', '/oauth/token', { 'Content-Type': 'application/x-www-form-urlencoded' }, this.exchangeBody(policyId), address)).status;
  }

  private exchangeBody(policyId: string): string {
    return new URLSearchParams(exchangeForm(this.idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID() }, { now: this.at }), policyId)).toString();
  }

  private async call(method: string, path: string, credential: string, body?: string): Promise<number> {
    const headers: Record<string, string> = { Authorization: `Bearer ${credential}`, ...(body ? { 'Content-Type': 'application/json' } : {}) };
    return (await this.send(method, path, headers, body)).status;
  }

  /** One request from a loopback address of the caller's choosing (the server sees it as the source address). */
  private send(method: string, path: string, headers: Record<string, string>, body?: string, localAddress = '127.0.0.1'): Promise<{ status: number; body: string }> {
    const url = new URL(`${this.runtime.baseUrl}${path}`);
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(url, { method, headers, localAddress, agent: false }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const body = Buffer.concat(parts);
          this.lastAnswerBytes = body.length >= GATEWAY_MIN_COMPRESSION_BYTES ? gzipSync(body).length : body.length;
          resolve({ status: response.statusCode ?? 0, body: body.toString() });
        });
        response.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }
}
