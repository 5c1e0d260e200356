import { randomUUID } from 'node:crypto';
import { OpenRouter } from '@openrouter/sdk';
import { PaymentRequiredResponseError } from '@openrouter/sdk/models/errors';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import OpenAI from 'openai';
import { DynamoFederationStore } from '../../../lambdas/aws/dynamo-federation-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { DEVELOPMENT_PROVIDER } from '../../../lambdas/settings';
import { readDevCertificateAuthority } from '../../../local/dev-ca';
import { exchangeForm } from '../../../local/exchange-form';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { makeIssuer, makePolicy } from '../../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

const MODEL = 'openai/gpt-4o-mini';
const CONTENT = 'one two three four';

/**
 * Spending limits on the wire (docs/limits.md): a completion is let in only while its estimated
 * maximum cost fits the workspace's budgets, every guardrail budget and the key's limit, and is
 * refused by the first without room with a 402 the official SDK and the `openai` client read.
 * Through the local runtime: the real handlers, the embedded DynamoDB, the IAM gate.
 */
describe('spending limits on POST /chat/completions', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  /** What one request of {@link complete}'s shape may cost at most, USD, as a refusal says. */
  let estimate: number;
  /** What one costs, USD, as its answer's usage says (the development provider's answers are all alike). */
  let cost: number;

  const admin = () => service.runtime.demo.keys.managementReadWrite;
  const manage = async (method: string, path: string, body?: unknown) => {
    const answer = await service.call(path, { method, key: admin(), ...(body === undefined ? {} : { body }) });
    if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    return answer.body;
  };
  const newKey = async (fields: Record<string, unknown> = {}, workspaceId?: string) => {
    const created = await manage('POST', '/keys', { name: `limited ${randomUUID().slice(0, 8)}`, ...(workspaceId ? { workspace_id: workspaceId } : {}), ...fields });
    return { secret: created.key as string, hash: created.data.hash as string };
  };
  const complete = (key: string, model = MODEL) =>
    service.call('/chat/completions', { method: 'POST', key, body: { model, max_tokens: 8, messages: [{ role: 'user', content: CONTENT }] } });
  /**
   * A cap that lets in `n` requests one after the other, and not one more: each is let in while
   * what is spent and its estimate fit (whole micro-dollars; a request costs several).
   */
  const capFor = (n: number) => Math.ceil(((n - 1) * cost + estimate) * 1e6) / 1e6;

  beforeAll(async () => {
    service = await startTestService({ inferenceUpstreams: { '*': DEVELOPMENT_PROVIDER } });
    stores = connectToRuntime(service.runtime);
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    const probe = await newKey({ limit: 0 });
    const refused = await complete(probe.secret);
    expect(refused.status).toBe(402);
    estimate = refused.body.error.metadata.request_max_cost_usd;
    const answered = await complete(service.runtime.demo.keys.workspace);
    cost = answered.body.usage.cost;
    expect(cost).toBeGreaterThan(2e-6);
    expect(estimate).toBeGreaterThan(cost);
  });
  afterAll(async () => {
    await idp?.close();
    stores?.destroy();
    await service?.stop();
  });

  it('refuses past a key limit with a 402 naming it and when it resets, read by the official SDK and the openai client', async () => {
    const key = await newKey({ limit: capFor(1), limit_reset: 'daily' });
    expect((await complete(key.secret)).status).toBe(200);
    const refused = await complete(key.secret);
    expect(refused.status).toBe(402);
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString();
    expect(refused.body.error).toEqual({
      code: 402,
      message: expect.stringContaining(`Spending limit reached: the key's daily limit of ${capFor(1)} USD`),
      metadata: { layer: 'key_limit', id: key.hash, interval: 'daily', limit_usd: capFor(1), remaining_usd: expect.any(Number), request_max_cost_usd: estimate, resets_at: tomorrow },
    });
    const sdk = new OpenRouter({ apiKey: key.secret, serverURL: service.runtime.baseUrl, retryConfig: { strategy: 'none' } });
    const thrown = await sdk.chat.send({ chatRequest: { model: MODEL, maxTokens: 8, messages: [{ role: 'user', content: CONTENT }] } }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(PaymentRequiredResponseError);
    expect((thrown as PaymentRequiredResponseError).error.message).toContain("the key's daily limit");
    const openai = new OpenAI({ apiKey: key.secret, baseURL: service.runtime.baseUrl, maxRetries: 0 });
    const failed = await openai.chat.completions.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: CONTENT }] }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
  });

  it('lets in what fits of 64 requests at once, at least as many estimates as the limit holds, and the spend stays within it', async () => {
    const limit = Math.ceil(estimate * 20 * 1e6) / 1e6;
    const key = await newKey({ limit });
    const answers = await Promise.all(Array.from({ length: 64 }, () => complete(key.secret)));
    const admitted = answers.filter((answer) => answer.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(20);
    expect(admitted + answers.filter((answer) => answer.status === 402).length).toBe(64);
    const usage = (await manage('GET', `/keys/${key.hash}`)).data;
    expect(usage.usage).toBeCloseTo(admitted * cost, 12);
    expect(usage.usage).toBeLessThanOrEqual(limit);
    expect(usage.limit_remaining).toBeCloseTo(limit - usage.usage, 12);
  });

  it('checks the workspace budget, then each guardrail budget, then the key limit: the first without room refuses', async () => {
    const workspace = (await manage('POST', '/workspaces', { name: `limits ${randomUUID().slice(0, 8)}` })).data;
    const guardrail = (await manage('POST', '/guardrails', { name: `budget ${randomUUID().slice(0, 8)}`, limit_usd: capFor(2), reset_interval: 'monthly' })).data;
    await manage('PUT', `/workspaces/${workspace.id}/budgets/weekly`, { limit_usd: capFor(1) });
    const key = await newKey({ limit: capFor(3) }, workspace.id);
    await manage('POST', `/guardrails/${guardrail.id}/assignments/keys`, { key_hashes: [key.hash] });
    const layerOf = async () => {
      const answer = await complete(key.secret);
      return answer.status === 200 ? 'admitted' : answer.body.error.metadata.layer;
    };
    expect(await layerOf()).toBe('admitted');
    expect(await layerOf()).toBe('workspace_budget');
    await manage('DELETE', `/workspaces/${workspace.id}/budgets/weekly`);
    expect(await layerOf()).toBe('admitted');
    expect(await layerOf()).toBe('guardrail_budget');
    await manage('PATCH', `/guardrails/${guardrail.id}`, { limit_usd: null, reset_interval: null });
    expect(await layerOf()).toBe('admitted');
    expect(await layerOf()).toBe('key_limit');
    // A raised limit lets it in again at once.
    await manage('PATCH', `/keys/${key.hash}`, { limit: capFor(10) });
    expect(await layerOf()).toBe('admitted');
  });

  it('counts what a key spent before its limit was set: the change starts the ledger at that spend, before any request', async () => {
    const key = await newKey();
    for (let i = 0; i < 3; i++) expect((await complete(key.secret)).status).toBe(200);
    const before = (await manage('GET', `/keys/${key.hash}`)).data.usage as number;
    expect(before).toBeCloseTo(3 * cost, 12);
    // Room for one more request today after what was spent, not for two.
    const limit = Math.ceil((before + estimate) * 1e6) / 1e6;
    await manage('PATCH', `/keys/${key.hash}`, { limit, limit_reset: 'daily' });
    const ledgers = await stores.documentClient.send(
      new ScanCommand({ TableName: TABLE_SCHEMAS.usage.localName, FilterExpression: 'begins_with(pk, :ledger)', ExpressionAttributeValues: { ':ledger': `BUDGET#K#${key.hash}#` } }),
    );
    expect(ledgers.Items).toEqual([expect.objectContaining({ committed: before, settled: before })]);
    expect((await complete(key.secret)).status).toBe(200);
    expect((await complete(key.secret)).body.error.metadata).toMatchObject({ layer: 'key_limit', interval: 'daily' });
  });

  it("seeds the ledger of a guardrail's budget for every key of an assignment that spent today, 101 at once, each at what it spent, and again when the budget changes", async () => {
    const organizationId = service.runtime.demo.organizationId;
    const made = await Promise.all(Array.from({ length: 101 }, (_, i) => stores.accounts.createApiKey(organizationId, { kind: 'workspace', name: `seeded ${i}` })));
    const hashes = made.map(({ key }) => key.hash);
    // Two of them spent today: one request, and two.
    for (const [i, requests] of [[7, 1], [60, 2]] as const) for (let n = 0; n < requests; n++) expect((await complete(made[i]!.secret)).status).toBe(200);
    const guardrail = (await manage('POST', '/guardrails', { name: `seeded ${randomUUID().slice(0, 8)}`, limit_usd: 5, reset_interval: 'daily' })).data;
    const seeded = async () => {
      const ledgers = await stores.documentClient.send(
        new ScanCommand({ TableName: TABLE_SCHEMAS.usage.localName, FilterExpression: 'begins_with(pk, :ledger)', ExpressionAttributeValues: { ':ledger': `BUDGET#G#${guardrail.id}#K#` } }),
      );
      return (ledgers.Items ?? []).map((item) => ({ pk: item.pk as string, committed: item.committed as number }));
    };
    expect((await manage('POST', `/guardrails/${guardrail.id}/assignments/keys`, { key_hashes: hashes })).assigned_count).toBe(101);
    // Each key that spent today starts at what it spent, read for all of them at once; the rest
    // serve no fleet, and each starts its own on its first request.
    const first = new Map((await seeded()).map(({ pk, committed: amount }) => [pk.split('#')[4], amount]));
    expect([...first.keys()].sort()).toEqual([hashes[7]!, hashes[60]!].sort());
    expect([first.get(hashes[7]!), first.get(hashes[60]!)]).toEqual([expect.closeTo(cost, 12), expect.closeTo(2 * cost, 12)]);
    expect((await complete(made[0]!.secret)).status).toBe(200);
    expect(await seeded()).toHaveLength(3);
    // A new reset interval starts new ledgers: those of the three keys that spent today.
    await manage('PATCH', `/guardrails/${guardrail.id}`, { reset_interval: 'weekly' });
    expect(new Set((await seeded()).map(({ pk }) => pk)).size).toBe(6);
  });

  it("counts what the workspace's deleted keys spent in the window when its budget is set later", async () => {
    const workspace = (await manage('POST', '/workspaces', { name: `former ${randomUUID().slice(0, 8)}` })).data;
    const gone = await newKey({}, workspace.id);
    for (let i = 0; i < 3; i++) expect((await complete(gone.secret)).status).toBe(200);
    await manage('DELETE', `/keys/${gone.hash}`);
    const kept = await newKey({}, workspace.id);
    // Room for one more request today after what the deleted key spent, not for two.
    await manage('PUT', `/workspaces/${workspace.id}/budgets/daily`, { limit_usd: capFor(4) });
    expect((await complete(kept.secret)).status).toBe(200);
    expect((await complete(kept.secret)).body.error.metadata).toMatchObject({ layer: 'workspace_budget', interval: 'daily' });
  });

  it('charges an access token to the limit of the key it acts as', async () => {
    const key = await newKey({ limit: capFor(1) });
    const federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
    const organizationId = service.runtime.demo.organizationId;
    const issuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl });
    await federation.createIssuer(issuer);
    const policy = makePolicy({ organizationId, issuerId: issuer.id, subject: 'repo:acme/limited', audience: 'https://modelgate.example', apiKeyHash: key.hash });
    await federation.createPolicy(policy);
    const form = new URLSearchParams(exchangeForm(idp.sign({ sub: 'repo:acme/limited', aud: 'https://modelgate.example', jti: randomUUID() }), policy.id));
    const exchanged = await service.call('/oauth/token', { method: 'POST', body: form.toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(exchanged.status).toBe(200);
    const token = exchanged.body.access_token as string;
    expect((await complete(token)).status).toBe(200);
    expect((await complete(key.secret)).body.error.metadata).toMatchObject({ layer: 'key_limit', id: key.hash });
    expect((await complete(token)).status).toBe(402);
  });
});
