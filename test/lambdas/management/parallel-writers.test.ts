import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { defaultGuardrailId } from '../../../lambdas/accounts/derived-ids';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { makePolicy } from '../../support/federation-fixtures';
import { startTestService, type TestService } from '../../support/local-service';

const ISSUERS = '/workload-identity/issuers';
const POLICIES = '/workload-identity/policies';

/**
 * Parallel writers through real HTTP on the local service: each burst is fired
 * at once with Promise.all, and what is left must be what one writer after the other would
 * have left: one issuer per URL, no model both allowed and ignored, no organization above
 * its limits.
 */
describe('parallel writers on the local service', () => {
  let service: TestService;
  let stores: RuntimeStores;
  beforeAll(async () => {
    service = await startTestService();
    stores = connectToRuntime(service.runtime);
  });
  afterAll(async () => {
    stores.destroy();
    await service.stop();
  });

  const times = <T>(n: number, make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

  /** A new organization of its own, so counts start at zero. */
  async function organization() {
    const { organization } = await stores.accounts.createOrganization({ name: `Org ${randomUUID()}`, plan: 'business' });
    const { secret } = await stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
    const workspace = await stores.accounts.createApiKey(organization.id, { kind: 'workspace', name: 'CI' });
    const call = (path: string, method = 'GET', body?: unknown) => service.call(path, { key: secret, method, body });
    return { id: organization.id, call, workspaceKeyHash: workspace.key.hash };
  }

  describe('issuer URLs', () => {
    it('keeps the URL taken after two parallel PATCHes move one issuer onto it (10 of 10 rounds)', async () => {
      const org = await organization();
      for (let round = 0; round < 10; round++) {
        const url = `https://moved-${round}.example.com`;
        const created = await org.call(ISSUERS, 'POST', { name: 'IdP', issuer_url: `https://start-${round}.example.com` });
        expect(created.status).toBe(201);
        const path = `${ISSUERS}/${created.body.data.id}`;

        const moves = await times(2, () => org.call(path, 'PATCH', { issuer_url: url }));

        expect(moves.map((r) => r.status)).toContain(200);
        expect(moves.every((r) => r.status === 200 || r.status === 409)).toBe(true);
        expect((await org.call(path)).body.data.issuer_url).toBe(url);
        const second = await org.call(ISSUERS, 'POST', { name: 'Second', issuer_url: url });
        expect([second.status, second.body]).toEqual([
          409,
          { error: { code: 409, message: `An issuer with issuer_url ${url} already exists in this organization` } },
        ]);
        // The URL it left is free again.
        expect((await org.call(ISSUERS, 'POST', { name: 'Third', issuer_url: `https://start-${round}.example.com` })).status).toBe(201);
      }
    });
  });

  describe('guardrail model lists', () => {
    it('refuses the second of allowed_models and ignored_models PATCHed in parallel with one model (10 of 10 rounds)', async () => {
      const org = await organization();
      for (let round = 0; round < 10; round++) {
        const created = await org.call('/guardrails', 'POST', { name: `Lists ${round}` });
        expect(created.status).toBe(201);
        const path = `/guardrails/${created.body.data.id}`;

        const [allowed, ignored] = await Promise.all([
          org.call(path, 'PATCH', { allowed_models: ['acme/model'] }),
          org.call(path, 'PATCH', { ignored_models: ['acme/model'] }),
        ]);

        expect([allowed.status, ignored.status].sort()).toEqual([200, 400]);
        const refused = allowed.status === 400 ? allowed : ignored;
        expect(refused.body).toEqual({ error: { code: 400, message: 'Models cannot be both allowed and ignored: acme/model' } });
        const stored = (await org.call(path)).body.data;
        expect([stored.allowed_models, stored.ignored_models]).toEqual(
          allowed.status === 200 ? [['acme/model'], null] : [null, ['acme/model']],
        );
      }
    });
  });

  describe('workspaces', () => {
    it('never leaves a key in a deleted workspace when its delete and key creations race (10 of 10 rounds)', async () => {
      const org = await organization();
      for (let round = 0; round < 10; round++) {
        const workspace = (await org.call('/workspaces', 'POST', { name: `Team ${round}` })).body.data.id;

        const [deleted, ...creates] = await Promise.all([
          org.call(`/workspaces/${workspace}`, 'DELETE'),
          ...Array.from({ length: 3 }, (_, i) => org.call('/keys', 'POST', { name: `Key ${i}`, workspace_id: workspace })),
        ]);

        const created = creates.filter((r) => r.status === 201);
        expect(creates.every((r) => r.status === 201 || (r.status === 404 && r.body.error.message === `Workspace ${workspace} not found`))).toBe(true);
        // Deleted with no key made, or refused naming the keys it held then: one at least, and no more than were made (others may land after the refusal).
        expect([deleted!.status, created.length > 0]).toEqual(deleted!.status === 200 ? [200, false] : [400, true]);
        if (deleted!.status === 400) {
          const held = Number(/^Workspace \S+ has (\d+) API keys?; delete (it|them) first$/.exec(deleted!.body.error.message)?.[1]);
          expect(held >= 1 && held <= created.length).toBe(true);
        }
        const stored = (await org.call(`/keys?workspace_id=${workspace}&include_disabled=true`)).body.data as { hash: string }[];
        expect(stored.map((key) => key.hash).sort()).toEqual(created.map((r) => r.body.data.hash).sort());
        expect((await org.call(`/workspaces/${workspace}`)).status).toBe(deleted!.status === 200 ? 404 : 200);
      }
    });

    it('counts the keys of a workspace written before key places and counts existed, and deletes it once they are gone', async () => {
      const org = await organization();
      const workspace = (await org.call('/workspaces', 'POST', { name: 'Legacy' })).body.data.id;
      const key = (await org.call('/keys', 'POST', { name: 'Old key', workspace_id: workspace })).body.data.hash;
      // As a version before key places wrote the workspace.
      await stores.documentClient.send(
        new UpdateCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: `ORG#${org.id}`, sk: `WORKSPACE#${workspace}` }, UpdateExpression: 'REMOVE keyCount' }),
      );

      const refused = await org.call(`/workspaces/${workspace}`, 'DELETE');
      expect([refused.status, refused.body]).toEqual([400, { error: { code: 400, message: `Workspace ${workspace} has 1 API key; delete it first` } }]);
      expect((await org.call(`/keys/${key}`, 'DELETE')).status).toBe(200);
      expect((await org.call(`/workspaces/${workspace}`, 'DELETE')).status).toBe(200);
    });

    it('writes a default guardrail once when its first writes come in parallel, and it stays on the workspace', async () => {
      const org = await organization();
      const workspace = (await org.call('/workspaces', 'POST', { name: 'Defaults' })).body.data.id;
      const id = defaultGuardrailId(workspace);

      const writes = await times(5, (i) => org.call(`/guardrails/${id}`, 'PATCH', { ignored_models: [`acme/model-${i}`] }));

      expect(writes.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      const listed = (await org.call(`/guardrails?workspace_id=${workspace}`)).body.data as { id: string; ignored_models: string[] }[];
      expect(listed.map((guardrail) => guardrail.id)).toEqual([id]);
      expect(writes.map((r) => r.body.data.ignored_models)).toContainEqual(listed[0]!.ignored_models);
      expect((await org.call(`/workspaces/${workspace}`)).body.data.guardrail_ids).toEqual([id]);
    });

    it('leaves no guardrail of a workspace deleted while its default guardrail is first written (10 of 10 rounds)', async () => {
      const org = await organization();
      for (let round = 0; round < 10; round++) {
        const workspace = (await org.call('/workspaces', 'POST', { name: `Short-lived ${round}` })).body.data.id;

        const [deleted, written] = await Promise.all([
          org.call(`/workspaces/${workspace}`, 'DELETE'),
          org.call(`/guardrails/${defaultGuardrailId(workspace)}`, 'PATCH', { enforce_zdr: true }),
        ]);

        expect(deleted.status).toBe(200);
        expect([200, 404]).toContain(written.status);
        expect((await org.call(`/guardrails?workspace_id=${workspace}`)).body.data).toEqual([]);
      }
    });
  });

  describe('key assignments', () => {
    it('never lists an assignment of a guardrail deleted while it was being assigned (10 of 10 rounds)', async () => {
      const org = await organization();
      for (let round = 0; round < 10; round++) {
        const guardrail = (await org.call('/guardrails', 'POST', { name: `Assigned ${round}` })).body.data.id;

        const [assigned, deleted] = await Promise.all([
          org.call(`/guardrails/${guardrail}/assignments/keys`, 'POST', { key_hashes: [org.workspaceKeyHash] }),
          org.call(`/guardrails/${guardrail}`, 'DELETE'),
        ]);

        expect([200, 404]).toContain(assigned.status);
        expect(deleted.status).toBe(200);
        const all = (await org.call('/guardrails/assignments/keys')).body.data as { guardrail_id: string }[];
        expect(all.filter((assignment) => assignment.guardrail_id === guardrail)).toEqual([]);
      }
    });

    it('does not list an id a crash left on a key after its guardrail was deleted', async () => {
      const org = await organization();
      const store = new DynamoAccountStore(stores.documentClient, TABLE_SCHEMAS.keys.localName);
      await store.addGuardrail({ kind: 'key', hash: org.workspaceKeyHash }, randomUUID(), new Date().toISOString());

      expect((await org.call('/guardrails/assignments/keys')).body).toEqual({ data: [], total_count: 0 });
    });
  });

  describe('per-organization limits', () => {
    const issuerCount = async (org: Awaited<ReturnType<typeof organization>>) => (await org.call(ISSUERS)).body.data.length;
    const policyCount = async (org: Awaited<ReturnType<typeof organization>>) => (await org.call(POLICIES)).body.data.length;
    const policyBody = (issuerId: string, hash: string, i: number) => ({
      name: `Deploy ${i}`,
      issuer_id: issuerId,
      subject: `system:serviceaccount:ci:runner-${i}`,
      audience: 'https://modelgate.example',
      api_key_hash: hash,
    });
    /** `count` creates, `parallel` at a time, each expected to succeed. */
    async function fill(count: number, parallel: number, create: (i: number) => Promise<{ status: number }>) {
      for (let start = 0; start < count; start += parallel) {
        const statuses = await times(Math.min(parallel, count - start), (i) => create(start + i).then((r) => r.status));
        expect(statuses.every((status) => status === 201)).toBe(true);
      }
    }

    it('stops at 100 issuers when 20 are created in parallel at 95', async () => {
      const org = await organization();
      await fill(95, 10, (i) => org.call(ISSUERS, 'POST', { name: `IdP ${i}`, issuer_url: `https://idp-${i}.example.com` }));

      const burst = await times(20, (i) => org.call(ISSUERS, 'POST', { name: `Burst ${i}`, issuer_url: `https://burst-${i}.example.com` }));

      expect(burst.map((r) => r.status).sort()).toEqual([...Array(5).fill(201), ...Array(15).fill(409)]);
      for (const refused of burst.filter((r) => r.status !== 201)) {
        expect([refused.status, refused.body]).toEqual([409, { error: { code: 409, message: 'An organization has at most 100 issuers: delete one first' } }]);
      }
      expect(await issuerCount(org)).toBe(100);
    }, 120_000);

    it('stops at 1,000 policies when 40 are created in parallel at 990, and gives a deleted one’s place back', async () => {
      const org = await organization();
      const issuer = (await org.call(ISSUERS, 'POST', { name: 'IdP', issuer_url: 'https://idp.example.com' })).body.data.id;
      // 989 policies written as a version without the bound wrote them (no places, for
      // speed); the next create counts them and takes the 990th place.
      const createdAt = new Date().toISOString();
      const seeded = Array.from({ length: 989 }, (_, i) =>
        makePolicy({ organizationId: org.id, issuerId: issuer, apiKeyHash: org.workspaceKeyHash, name: `Seed ${i}`, createdAt }),
      );
      for (let start = 0; start < seeded.length; start += 25) {
        const items = seeded.slice(start, start + 25).map((policy) => ({
          PutRequest: {
            Item: { pk: `POLICY#${policy.id}`, sk: 'POLICY', gsi1pk: `ORG#${org.id}#POLICIES`, gsi1sk: `${issuer}#${createdAt}#${policy.id}`, ...policy },
          },
        }));
        await stores.documentClient.send(new BatchWriteCommand({ RequestItems: { [TABLE_SCHEMAS.policies.localName]: items } }));
      }
      expect((await org.call(POLICIES, 'POST', policyBody(issuer, org.workspaceKeyHash, 989))).status).toBe(201);
      expect(await policyCount(org)).toBe(990);

      const burst = await times(40, (i) => org.call(POLICIES, 'POST', policyBody(issuer, org.workspaceKeyHash, 1000 + i)));

      expect(burst.map((r) => r.status).sort()).toEqual([...Array(10).fill(201), ...Array(30).fill(409)]);
      for (const refused of burst.filter((r) => r.status !== 201)) {
        expect([refused.status, refused.body]).toEqual([409, { error: { code: 409, message: 'An organization has at most 1000 policies: delete one first' } }]);
      }
      expect(await policyCount(org)).toBe(1000);

      const deleted = burst.find((r) => r.status === 201)!.body.data.id;
      expect((await org.call(`${POLICIES}/${deleted}`, 'DELETE')).status).toBe(200);
      const refill = await times(40, (i) => org.call(POLICIES, 'POST', policyBody(issuer, org.workspaceKeyHash, 2000 + i)));
      expect(refill.map((r) => r.status).sort()).toEqual([201, ...Array(39).fill(409)]);
      expect(await policyCount(org)).toBe(1000);
    }, 180_000);
  });
});
