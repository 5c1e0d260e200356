import { randomUUID } from 'node:crypto';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { KEY_USAGE_PARTITIONS, USAGE_SHARDS } from '../../lambdas/aws/dynamo-usage-store';
import { DynamoFederationStore } from '../../lambdas/aws/dynamo-federation-store';
import type { FederationPolicy } from '../../lambdas/federation/types';
import { readDevCertificateAuthority } from '../../local/dev-ca';
import { sequentialDepth, type AwsCall } from '../../local/aws-calls';
import { connectToRuntime, type RuntimeStores } from '../support/accounts';
import { makeIssuer, makePolicy } from '../support/federation-fixtures';
import { startIdentityProvider, type TestIdentityProvider } from '../support/identity-provider';
import { startTestService, type TestService } from '../support/local-service';
import { proofKey, signProof, type ProofKey } from '../support/dpop';

/**
 * What a request costs where it runs: in AWS a request's latency is its sequential round trips
 * to DynamoDB and KMS, not its CPU. The local runtime reports every AWS SDK call its functions
 * make (and every signature, KMS `Sign` in AWS) with the request it served; these tests hold
 * each route to its count of calls and its number of sequential stages. Counts are
 * deterministic; times stay in the bench.
 */

const GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
const JWT_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';

describe('round trips per request, counted through the AWS SDK', () => {
  const calls: AwsCall[] = [];
  let answered = 0;
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  let policy: FederationPolicy;
  let replayPolicy: FederationPolicy;
  let dpopKey: ProofKey;

  beforeAll(async () => {
    // The catalog cache outlives the file, so a catalog request is only its authentication.
    service = await startTestService({
      observeAwsCalls: (call) => calls.push(call),
      // When the server has handed over an answer's last byte.
      observe: () => void (answered = performance.now()),
      catalogCacheSeconds: 600,
    });
    stores = connectToRuntime(service.runtime);
    dpopKey = await proofKey();
    idp = await startIdentityProvider({ ca: readDevCertificateAuthority(service.runtime.dataDir) });
    const federation = new DynamoFederationStore(stores.documentClient, TABLE_SCHEMAS.policies.localName);
    const organizationId = service.runtime.demo.organizationId;
    const apiKeyHash = hashApiKey(service.runtime.demo.keys.workspace);
    const issuer = makeIssuer({ organizationId, issuerUrl: idp.issuerUrl });
    await federation.createIssuer(issuer);
    policy = makePolicy({ organizationId, issuerId: issuer.id, subject: SUBJECT, audience: AUDIENCE, apiKeyHash });
    await federation.createPolicy(policy);
    const jtiIssuer = makeIssuer({ organizationId, issuerUrl: `${idp.issuerUrl}/jti`, jwksUrl: idp.keysUrl, checkJti: true });
    await federation.createIssuer(jtiIssuer);
    replayPolicy = makePolicy({ organizationId, issuerId: jtiIssuer.id, subject: SUBJECT, audience: AUDIENCE, apiKeyHash });
    await federation.createPolicy(replayPolicy);
    // Warm: the token endpoint reads the active signing-key record once per 30 s (beside the
    // first stage); the counts below are those of a warm container.
    expect((await exchange(policy)).status).toBe(200);
  });
  afterAll(async () => {
    await idp?.close();
    stores?.destroy();
    await service?.stop();
  });

  /**
   * The calls one request made (requests are sent one at a time): count, stages, and what they
   * were, in order, among those the answer waited for. `after` lists the calls that started
   * once the server had handed over the answer; only a route that says so may make any
   * (every answer is durable when it ends).
   */
  async function measure(
    send: () => Promise<{ status: number; headers: Headers }>,
    { afterAnswer = false } = {},
  ): Promise<{ status: number; count: number; depth: number; calls: string[]; after: string[] }> {
    const before = calls.length;
    const response = await send();
    const answeredAt = answered;
    // Whatever the invocation does after its answer lands before the next request.
    await service.runtime.idle();
    const mine = calls.slice(before);
    // Every call served this one request.
    expect(new Set(mine.map((call) => call.requestId)).size).toBeLessThanOrEqual(1);
    expect(mine.every((call) => call.requestId !== undefined)).toBe(true);
    const waited = mine.filter((call) => call.start < answeredAt);
    const after = mine.filter((call) => call.start >= answeredAt);
    if (!afterAnswer) expect(after).toEqual([]);
    const describe = (list: AwsCall[]) => list.sort((a, b) => a.start - b.start).map((call) => `${call.service}.${call.command}(${call.tables.join(',')})`);
    return { status: response.status, count: waited.length, depth: sequentialDepth(waited), calls: describe(waited), after: describe(after) };
  }

  const exchange = (target: FederationPolicy, claims: Record<string, unknown> = {}, issuerUrl = idp.issuerUrl, proof?: string) =>
    measure(() =>
      service.call('/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(proof ? { DPoP: proof } : {}) },
        body: new URLSearchParams({
          grant_type: GRANT,
          subject_token_type: JWT_TYPE,
          subject_token: idp.sign({ iss: issuerUrl, sub: SUBJECT, aud: AUDIENCE, jti: randomUUID(), ...claims }),
          federation_policy_id: target.id,
        }).toString(),
      }),
    );

  const get = (path: string, key: string) => measure(() => service.call(path, { key }));

  describe('authentication: one round trip once the container has seen the key', () => {
    it('reads the key, its organization and its workspace in one BatchGetItem; the first sight of a key takes one more', async () => {
      // The catalog cache is loaded by another key's request first.
      expect((await get('/models/user?limit=1', service.runtime.demo.keys.personal)).status).toBe(200);
      const key = service.runtime.demo.keys.workspace;
      const first = await get('/models/user?limit=1', key);
      expect(first).toMatchObject({ status: 200, depth: 2, count: 2 });
      // Still read on every request: the key's state (docs/reference.md#lifecycle), in the one round trip.
      const warm = await get('/models/user?limit=1', key);
      expect(warm).toMatchObject({ status: 200, depth: 1, count: 1, calls: ['DynamoDB.BatchGetItem(modelgate-keys)'] });
    });

    it('takes effect at once: a disabled key is refused on its next request', async () => {
      const created = await service.call('/keys', { method: 'POST', key: service.runtime.demo.keys.managementReadWrite, body: { name: 'round trips' } });
      const secret = created.body.key as string;
      const hash = created.body.data.hash as string;
      expect((await get('/models/user?limit=1', secret)).status).toBe(200);
      await service.call(`/keys/${hash}`, { method: 'PATCH', key: service.runtime.demo.keys.managementReadWrite, body: { disabled: true } });
      expect(await get('/models/user?limit=1', secret)).toMatchObject({ status: 401, depth: 1, count: 1 });
    });

    it.each([
      // The key's running totals with the organization's fold mark in one BatchGetItem, then each
      // of its usage partitions (and the unsharded one of earlier releases), side by side, from the day after.
      ['GET /key', '/key', 'workspace', 3, 'key', 0],
      ['GET /workspaces', '/workspaces', 'managementReadOnly', 2, 'none', 0],
      // The default workspace (a query of the organization's workspaces) beside the
      // organization's fold mark, then its member items, then the keys themselves, then their
      // running totals beside each shard of the organization's index from the day after the mark.
      ['GET /keys', '/keys', 'managementReadOnly', 5, 'organization', 1],
      // The workspace item and its member items side by side, instead of the query and then the members.
      ['GET /keys?workspace_id=', '/keys?workspace_id={workspace}', 'managementReadOnly', 4, 'organization', 2],
      // The id, and a slug's claim in case the value is also a slug, in one BatchGetItem.
      ['GET /workspaces/{id}', '/workspaces/{workspace}', 'managementReadOnly', 2, 'none', 0],
      // A slug costs one stage more: its claim names the workspace, read next.
      ['GET /workspaces/{slug}', '/workspaces/default', 'managementReadOnly', 3, 'none', 0],
    ] as const)('%s: authentication, then its reads, in as few stages as they allow', async (_name, template, which, stages, readsUsage, besides) => {
      const key = service.runtime.demo.keys[which];
      const path = template.replace('{workspace}', service.runtime.demo.workspaceId);
      await get(path, key);
      const warm = await get(path, key);
      expect(warm).toMatchObject({ status: 200, depth: stages });
      // A usage view reads the usage shards' partitions in one stage: one query each.
      const usageQueries = warm.calls.filter((call) => call === 'DynamoDB.Query(modelgate-usage)').length;
      expect(usageQueries).toBe({ key: KEY_USAGE_PARTITIONS + 1, organization: USAGE_SHARDS + 1, none: 0 }[readsUsage]);
      // One call a stage, and those read beside another (the keys' lists: the fold mark beside the listing, a named workspace's member items beside its item).
      expect(warm.count - usageQueries).toBeLessThanOrEqual(stages + besides);
    });
  });

  it.each(['/models', '/models?q=gpt&supported_parameters=tools&sort=newest', '/models/count', '/model/openai/gpt-4o-mini', '/providers'])(
    'GET %s: the public catalog is the key read alone, the whole catalog needing no guardrail or setting',
    async (path) => {
      const key = service.runtime.demo.keys.workspace;
      await get(path, key);
      const warm = await get(path, key);
      expect(warm).toMatchObject({ status: 200, depth: 1, count: 1, calls: ['DynamoDB.BatchGetItem(modelgate-keys)'] });
    },
  );

  it.each(['/guardrails', '/activity', '/workload-identity/issuers', '/workload-identity/policies', '/workload-identity/events'])(
    'GET %s: a management list in at most 3 sequential round trips',
    async (path) => {
      const key = service.runtime.demo.keys.managementReadOnly;
      await get(path, key);
      const warm = await get(path, key);
      expect(warm.status).toBe(200);
      expect(warm.depth).toBeLessThanOrEqual(3);
    },
  );

  /** A completion with `key`, sent once to warm the container (a limited key's first takes its hold) and measured the second time. */
  async function warmCompletion(key: string, options: { afterAnswer?: boolean } = {}) {
    const completion = () => measure(() => service.call('/chat/completions', { method: 'POST', key, body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } }), options);
    await completion();
    return completion();
  }

  it('POST /chat/completions: authentication before the upstream call, the open completion and the estimate in flight beside it, the usage and generation writes side by side, then the charge beside the close', async () => {
    const warm = await warmCompletion(service.runtime.demo.keys.workspace, { afterAnswer: true });
    expect(warm).toMatchObject({
      status: 200,
      // One stage before the provider is asked: the key. The open completion's put and the
      // estimate in flight on the key's and the workspace's spend items go out beside the upstream
      // call, which does not wait for them; the answer's relay does, so the usage writes come after
      // (usage-acknowledgement.test.ts). Then the charges in place of the estimate, beside the close.
      depth: 4,
      count: 9,
      calls: [
        'DynamoDB.BatchGetItem(modelgate-keys)',
        'DynamoDB.PutItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.PutItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.DeleteItem(modelgate-usage)',
      ],
      after: [],
    });
  });

  it('POST /chat/completions under a key limit: the estimate written ahead is one stage before the upstream call; the charge comes once the usage write has landed, beside the close', async () => {
    const { secret } = await stores.accounts.createApiKey(service.runtime.demo.organizationId, { kind: 'workspace', name: 'round trips, limited', limit: 100 });
    const warm = await warmCompletion(secret);
    expect(warm).toMatchObject({
      status: 200,
      // The key; the estimate ahead (the key's, and its workspace's in flight) beside the open
      // completion; after the answer, the usage beside the generation; then the charges, beside
      // the open completion's close.
      depth: 4,
      count: 9,
      calls: [
        'DynamoDB.BatchGetItem(modelgate-keys)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.PutItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.PutItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.UpdateItem(modelgate-usage)',
        'DynamoDB.DeleteItem(modelgate-usage)',
      ],
    });
  });

  it('a DPoP-bound token: the proof is claimed beside the key read, no stage of its own', async () => {
    const baseUrl = service.runtime.baseUrl;
    const bound = await service.call('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', DPoP: await signProof(dpopKey, { htu: `${baseUrl}/oauth/token` }) },
      body: new URLSearchParams({
        grant_type: GRANT,
        subject_token_type: JWT_TYPE,
        subject_token: idp.sign({ sub: SUBJECT, aud: AUDIENCE, jti: randomUUID() }),
        federation_policy_id: policy.id,
      }).toString(),
    });
    expect(bound.body.token_type).toBe('DPoP');
    const accessToken = bound.body.access_token as string;
    const request = () =>
      measure(async () =>
        service.call('/models/user?limit=1', {
          headers: { Authorization: `DPoP ${accessToken}`, DPoP: await signProof(dpopKey, { htm: 'GET', htu: `${baseUrl}/models/user`, accessToken }) },
        }),
      );
    await request();
    const warm = await request();
    expect(warm).toMatchObject({ status: 200, depth: 1, count: 2 });
    expect(warm.calls.sort()).toEqual(['DynamoDB.BatchGetItem(modelgate-keys)', 'DynamoDB.PutItem(modelgate-rate-counters)']);
  });

  describe('POST /oauth/token: at most 3 sequential stages, KMS Sign included', () => {
    it('issued: (rate counter ∥ policy) → (issuer ∥ organization ∥ key) → (Sign ∥ event)', async () => {
      const issued = await exchange(policy);
      expect(issued).toMatchObject({ status: 200, depth: 3, count: 7 });
      expect(issued.calls).toContain('KMS.Sign()');
    });

    it('issued with a jti check: the claim runs beside the signature and the event', async () => {
      const issued = await exchange(replayPolicy, { jti: 'round-trips-1' }, `${idp.issuerUrl}/jti`);
      expect(issued).toMatchObject({ status: 200, depth: 3, count: 8 });
    });

    it('issued with a DPoP proof: the proof is claimed once admitted, beside the issuer, organization and key reads', async () => {
      const issued = await exchange(policy, {}, idp.issuerUrl, await signProof(dpopKey, { htu: `${service.runtime.baseUrl}/oauth/token` }));
      expect(issued).toMatchObject({ status: 200, depth: 3, count: 8 });
      expect(issued.calls.filter((call) => call === 'DynamoDB.PutItem(modelgate-rate-counters)')).toHaveLength(1);
    });

    it('refused: no more stages than an issued token', async () => {
      const refused = await exchange(policy, { sub: 'repo:acme/other:ref:refs/heads/main' });
      expect(refused).toMatchObject({ status: 400, depth: 3 });
      const replayed = await exchange(replayPolicy, { jti: 'round-trips-1' }, `${idp.issuerUrl}/jti`);
      expect(replayed).toMatchObject({ status: 400 });
      expect(replayed.depth).toBeLessThanOrEqual(4);
    });
  });
});
