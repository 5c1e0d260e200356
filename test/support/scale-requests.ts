import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { batchWriteAll } from '../../lambdas/aws/dynamo-items';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { spendingLimits, type SpendingLimit } from '../../lambdas/spending/limits';
import { daysBefore } from '../../lambdas/usage/usage';
import { exchangeForm } from '../../local/exchange-form';
import type { LocalRuntime } from '../../local/runtime';
import { GUARDRAIL_LIMITS } from '../../lambdas/accounts/types';
import { guardrailInput, type RuntimeStores } from './accounts';
import { makeIssuer, makePolicy } from './federation-fixtures';
import type { TestIdentityProvider } from './identity-provider';
import type { TrafficRowId } from './scale-rows';

const MODEL = 'openai/gpt-4o-mini';
/** The limited rows' caps: far above what a run spends, so every request is let in and each ledger kept as at the targets. */
const LIMIT_USD = 1_000_000;
/** API Gateway compresses an answer from this size on, for a client that accepts it (lib/constructs/api.ts). */
const GATEWAY_MIN_COMPRESSION_BYTES = 1024;
const MODEL_ROW_ORGANIZATIONS = 5;
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';

/** Sends request `i` of a row; resolves to its status. */
export type Send = (i: number) => Promise<number>;

/** The credentials and requests of each row, set up and warmed before its measured requests. */
export class Traffic {
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
        // The guardrail is as large as one may be, its lists at their bound: it is read on every request.
        const organizationId = demo.organizationId;
        const { key, secret } = await this.stores.accounts.createApiKey(organizationId, { kind: 'workspace', name: 'scale limited', limit: LIMIT_USD, limitReset: 'monthly' });
        const guardrail = await this.stores.accounts.createGuardrail(
          organizationId,
          guardrailInput({ name: 'scale budget', budget: { amount: LIMIT_USD, reset: 'daily' }, ignoredModels: fullList() }),
        );
        await this.stores.accounts.assignGuardrailToKeys(organizationId, guardrail.id, [key.hash]);
        this.limited.set(row, async () => [await this.keyLimitsOf(organizationId, key.hash)]);
        return this.warmed([secret], (credential) => this.completion(credential));
      }
      case 'limited-workspace-completions': {
        // An organization of its own whose workspace has a monthly budget, its keys each a limit.
        const { organization, workspace } = await this.stores.accounts.createOrganization({ name: 'scale limited organization', plan: 'enterprise' });
        await this.stores.accounts.putWorkspaceBudget(organization.id, workspace.id, 'monthly', { limitUsd: LIMIT_USD });
        const made = await Promise.all(
          Array.from({ length: keys }, (_, i) => this.stores.accounts.createApiKey(organization.id, { kind: 'workspace', name: `scale limited ${i}`, limit: LIMIT_USD, limitReset: 'monthly' })),
        );
        this.limited.set(row, async () => Promise.all(made.map(({ key }) => this.keyLimitsOf(organization.id, key.hash))));
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

  /** The limited rows' keys' limits, read once the row has run. */
  private readonly limited = new Map<TrafficRowId, () => Promise<SpendingLimit[][]>>();

  /** The spending limits each of the row's keys meets, distinct ledgers once; undefined for a row without limits. */
  limitsOf(row: TrafficRowId): (() => Promise<SpendingLimit[]>) | undefined {
    const limits = this.limited.get(row);
    if (!limits) return undefined;
    return async () => [...new Map((await limits()).flat().map((limit) => [limit.ledger, limit])).values()];
  }

  private async keyLimitsOf(organizationId: string, hash: string): Promise<SpendingLimit[]> {
    const key = await this.stores.accounts.getApiKey(organizationId, hash);
    const workspace = key.workspaceId ? await this.stores.accounts.getWorkspace(organizationId, key.workspaceId) : null;
    const ids = [...key.guardrailIds, ...(workspace?.guardrailIds ?? [])];
    const guardrails = await Promise.all(ids.map((id) => this.stores.accounts.getGuardrail(organizationId, id).catch(() => undefined)));
    return spendingLimits({ key, workspace }, guardrails.filter((g): g is NonNullable<typeof g> => g !== undefined));
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

/** Model ids no catalog has, 128 characters each, as many as the four guardrail lists may hold together. */
function fullList(): string[] {
  const count = Math.floor(GUARDRAIL_LIMITS.listBytes / GUARDRAIL_LIMITS.entry);
  return Array.from({ length: count }, (_, i) => `scale/ignored-${String(i).padStart(4, '0')}-`.padEnd(GUARDRAIL_LIMITS.entry, 'm'));
}
