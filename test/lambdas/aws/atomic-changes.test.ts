import { AccountsService } from '../../../lambdas/accounts/accounts-service';
import type { GuardrailInput } from '../../../lambdas/accounts/guardrails-service';
import { DynamoAccountStore } from '../../../lambdas/aws/dynamo-account-store';
import { ORGANIZATION_COPIES } from '../../../lambdas/aws/copy-kinds';
import { createDocumentClient, createDynamoDbClient } from '../../../lambdas/aws/dynamo-client';
import { CopiesAudit, needsRepair } from '../../../lambdas/aws/dynamo-copies-audit';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { ConflictError, NotFoundError } from '../../../lambdas/errors';
import { startEmbeddedTables } from '../../support/embedded-tables';
import { guardrailInput } from '../../support/accounts';

const TABLE = TABLE_SCHEMAS.keys.localName;

/** The DynamoDB calls that write. */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

/**
 * How a write fails: refused before DynamoDB sees it (a throttled write whose retries ran out),
 * or applied with its answer lost (a timeout, a crash after the write).
 */
type FailureMode = 'refused' | 'lost';

/**
 * A client whose `failAt`-th write fails as `mode` says, through the SDK's middleware stack
 * (every store call passes it); with no `failAt`, it counts the writes.
 */
function faultyClient(endpoint: string, failAt: number | undefined, mode: FailureMode) {
  const client = createDynamoDbClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const counted = { writes: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!WRITES.has(context.commandName ?? '')) return next(args);
      const point = ++counted.writes;
      if (point !== failAt) return next(args);
      const failure = Object.assign(new Error(`injected failure of write ${point} (${context.commandName})`), { name: 'ProvisionedThroughputExceededException' });
      if (mode === 'refused') throw failure;
      await next(args);
      throw failure;
    },
    { step: 'initialize', name: 'injectedFailure' },
  );
  return { documentClient: createDocumentClient(client), counted, destroy: () => client.destroy() };
}

const RESTRICTIVE: GuardrailInput = guardrailInput({ name: 'mistral only', allowedProviders: ['mistral'] });

interface Fixture {
  organizationId: string;
  workspaceId: string;
  spareWorkspaceId: string;
  keyHash: string;
  /** On no key or workspace yet. */
  guardrailId: string;
  /** On the key. */
  assignedGuardrailId: string;
}

async function fixture(service: AccountsService): Promise<Fixture> {
  const { organization, workspace } = await service.createOrganization({ name: 'Atomic', plan: 'enterprise' });
  const spare = await service.createWorkspace(organization.id, { name: 'Spare' });
  const { key } = await service.createApiKey(organization.id, { kind: 'workspace', name: 'worker' });
  const guardrail = await service.createGuardrail(organization.id, RESTRICTIVE);
  const assigned = await service.createGuardrail(organization.id, { ...RESTRICTIVE, name: 'assigned' });
  await service.assignGuardrailToKeys(organization.id, assigned.id, [key.hash]);
  return { organizationId: organization.id, workspaceId: workspace.id, spareWorkspaceId: spare.id, keyHash: key.hash, guardrailId: guardrail.id, assignedGuardrailId: assigned.id };
}

/** Each change kind: the call, and what holds once it has landed (read as management reads). */
const CHANGES: { name: string; run(service: AccountsService, f: Fixture): Promise<unknown>; landed(store: DynamoAccountStore, f: Fixture): Promise<boolean> }[] = [
  { name: 'disable a key', run: (s, f) => s.updateApiKey(f.organizationId, f.keyHash, { disabled: true }), landed: async (st, f) => (await st.getApiKey(f.keyHash))?.disabled === true },
  { name: 'delete a key', run: (s, f) => s.deleteApiKey(f.organizationId, f.keyHash), landed: async (st, f) => (await st.getApiKey(f.keyHash)) === undefined },
  { name: 'create a key', run: (s, f) => s.createApiKey(f.organizationId, { kind: 'workspace', name: 'new' }), landed: async (st, f) => (await st.listApiKeys(f.organizationId)).some((k) => k.name === 'new') },
  { name: 'assign a guardrail to a key', run: (s, f) => s.assignGuardrailToKeys(f.organizationId, f.guardrailId, [f.keyHash]), landed: async (st, f) => (await st.getApiKey(f.keyHash))!.guardrailIds.includes(f.guardrailId) },
  { name: 'unassign a guardrail from a key', run: (s, f) => s.unassignGuardrailFromKeys(f.organizationId, f.assignedGuardrailId, [f.keyHash]), landed: async (st, f) => !(await st.getApiKey(f.keyHash))!.guardrailIds.includes(f.assignedGuardrailId) },
  { name: 'assign a guardrail to a workspace', run: (s, f) => s.setWorkspaceGuardrail(f.organizationId, f.guardrailId, f.workspaceId, true), landed: async (st, f) => (await st.getWorkspace(f.organizationId, f.workspaceId))!.guardrailIds.includes(f.guardrailId) },
  { name: "set a key's limit", run: (s, f) => s.updateApiKey(f.organizationId, f.keyHash, { limit: 5, limitReset: 'daily' }), landed: async (st, f) => (await st.getApiKey(f.keyHash))?.limit?.amountUsd === '5' },
  {
    name: "set a guardrail's budget",
    run: (s, f) => s.updateGuardrail(f.organizationId, f.assignedGuardrailId, { budget: { amount: 20, reset: 'weekly' } }),
    landed: async (st, f) => (await st.getGuardrail(f.organizationId, f.assignedGuardrailId))?.budget?.amountUsd === '20',
  },
  {
    name: "set a workspace's budget",
    run: async (s, f) => s.putWorkspaceBudget(f.organizationId, (await s.getWorkspace(f.organizationId, f.workspaceId)).slug, 'monthly', { limitUsd: 100 }),
    landed: async (st, f) => (await st.getWorkspace(f.organizationId, f.workspaceId))?.budgets?.monthly?.amountUsd === '100',
  },
  { name: 'change a guardrail', run: (s, f) => s.updateGuardrail(f.organizationId, f.assignedGuardrailId, { allowedProviders: ['openai'] }), landed: async (st, f) => (await st.getGuardrail(f.organizationId, f.assignedGuardrailId))?.allowedProviders?.[0] === 'openai' },
  { name: 'delete a guardrail', run: (s, f) => s.deleteGuardrail(f.organizationId, f.assignedGuardrailId), landed: async (st, f) => (await st.getGuardrail(f.organizationId, f.assignedGuardrailId)) === undefined },
  {
    name: "change the organization's privacy",
    run: (s, f) => s.setPrivacy(f.organizationId, { allowTrainingProviders: false, allowRetainingProviders: false, zeroDataRetentionOnly: true }),
    landed: async (st, f) => (await st.getOrganization(f.organizationId))?.privacy.zeroDataRetentionOnly === true,
  },
  { name: 'rename a workspace', run: (s, f) => s.updateWorkspace(f.organizationId, f.spareWorkspaceId, { slug: 'renamed' }), landed: async (st, f) => (await st.getWorkspace(f.organizationId, f.spareWorkspaceId))?.slug === 'renamed' },
  { name: 'create a workspace', run: (s, f) => s.createWorkspace(f.organizationId, { name: 'Fresh', slug: 'fresh' }), landed: async (st, f) => (await st.listWorkspaces(f.organizationId)).some((w) => w.slug === 'fresh') },
  { name: 'delete a workspace', run: (s, f) => s.deleteWorkspace(f.organizationId, f.spareWorkspaceId), landed: async (st, f) => (await st.getWorkspace(f.organizationId, f.spareWorkspaceId)) === undefined },
  { name: 'create an organization', run: (s, f) => s.createOrganization({ name: 'Second', plan: 'pro', id: `second-${f.organizationId}` }), landed: async (st, f) => (await st.getOrganization(`second-${f.organizationId}`)) !== undefined },
];

/**
 * What requests meet is what management shows: every copy of every item in the table agrees
 * with its item (the audit that `ops copies check` runs), and each of the fixture's records read
 * through each copy, as a request reads it, is the record management reads.
 */
async function expectAgreement(documentClient: ReturnType<typeof createDocumentClient>, store: DynamoAccountStore, f: Fixture): Promise<void> {
  const report = await new CopiesAudit(documentClient, TABLE).check();
  expect({ report, needsRepair: needsRepair(report) }).toEqual({ report, needsRepair: false });
  const managed = {
    key: await store.getApiKey(f.keyHash),
    organization: await store.getOrganization(f.organizationId),
    workspace: await store.getWorkspace(f.organizationId, f.workspaceId),
    spare: await store.getWorkspace(f.organizationId, f.spareWorkspaceId),
    guardrails: (await store.listGuardrails(f.organizationId)).sort((a, b) => a.id.localeCompare(b.id)),
  };
  const guardrailIds = [f.guardrailId, f.assignedGuardrailId].sort();
  // The audit compared every copy with its item; a request reads through one, here the first
  // and the last its draw can pick.
  for (const copy of [0, ORGANIZATION_COPIES - 1]) {
    const reader = new DynamoAccountStore(documentClient, TABLE, { random: () => (copy + 0.5) / ORGANIZATION_COPIES });
    const seen = await reader.getRecords({ keyHash: f.keyHash, organizationId: f.organizationId, workspaceId: f.workspaceId });
    const spare = await reader.getRecords({ organizationId: f.organizationId, workspaceId: f.spareWorkspaceId });
    const guardrails = await reader.getGuardrails(f.organizationId, guardrailIds);
    expect({ copy, key: seen.key, organization: seen.organization, workspace: seen.workspace, spare: spare.workspace, guardrails }).toEqual({
      copy,
      ...managed,
      guardrails: managed.guardrails.filter((g) => guardrailIds.includes(g.id)),
    });
  }
}

/** Sends the call again; a refusal that says the change is there already (gone, taken) counts as done. */
async function sendAgain(run: () => Promise<unknown>): Promise<void> {
  await run().catch((error: unknown) => {
    if (!(error instanceof NotFoundError || error instanceof ConflictError)) throw error;
  });
}

/** Runs `use` on tables of its own: the audit then reads one fixture's items only. */
async function onFreshTables<T>(use: (tables: Awaited<ReturnType<typeof startEmbeddedTables>>, service: AccountsService, store: DynamoAccountStore) => Promise<T>): Promise<T> {
  const tables = await startEmbeddedTables();
  try {
    const store = new DynamoAccountStore(tables.documentClient, TABLE);
    return await use(tables, new AccountsService({ store }), store);
  } finally {
    await tables.stop();
  }
}

describe('a change cut short at any of its writes', () => {
  for (const change of CHANGES) {
    it(`${change.name}: management and every copy agree after each failure, and the call sent again lands`, async () => {
      // How many writes the change makes, on a fixture of its own.
      const points = await onFreshTables(async (tables, service) => {
        const counting = faultyClient(tables.endpoint, undefined, 'refused');
        const f = await fixture(service);
        await change.run(new AccountsService({ store: new DynamoAccountStore(counting.documentClient, TABLE) }), f).finally(() => counting.destroy());
        return counting.counted.writes;
      });
      expect(points).toBeGreaterThan(0);

      for (const mode of ['refused', 'lost'] as const) {
        for (let point = 1; point <= points; point++) {
          await onFreshTables(async (tables, service, store) => {
            const f = await fixture(service);
            const failing = faultyClient(tables.endpoint, point, mode);
            await change.run(new AccountsService({ store: new DynamoAccountStore(failing.documentClient, TABLE) }), f).catch(() => undefined);
            failing.destroy();
            await expectAgreement(tables.documentClient, store, f);
            await sendAgain(() => change.run(service, f));
            expect({ mode, point, landed: await change.landed(store, f) }).toEqual({ mode, point, landed: true });
            await expectAgreement(tables.documentClient, store, f);
          });
        }
      }
    }, 120_000);
  }
});
