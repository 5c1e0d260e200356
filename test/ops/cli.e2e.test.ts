import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ledgerKey } from '../../lambdas/aws/dynamo-ledger-keys';
import { DynamoOpenCompletions, LOCAL_OPEN_SHARDS } from '../../lambdas/aws/dynamo-open-completions';
import { DynamoUsageStore } from '../../lambdas/aws/dynamo-usage-store';
import { ALL_TABLES, TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import type { LocalRuntime } from '../../local/runtime';
import { connectToRuntime } from '../support/accounts';
import { startTestService, type TestService } from '../support/local-service';
import { opsProcessArgs } from '../support/ops-harness';

const ROOT = join(__dirname, '..', '..');

/** The real CLI in a child process, as `npm run ops --` runs it. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  // The runtime put its table variables in this process's environment; the CLI must find
  // its target from --data-dir alone.
  const env = { ...process.env };
  for (const name of [...ALL_TABLES.map((table) => table.envVar), 'AWS_ENDPOINT_URL_DYNAMODB']) delete env[name];
  return new Promise((resolve) => {
    execFile(process.execPath, opsProcessArgs(args), { cwd: ROOT, env }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('ops CLI end to end against the local runtime', () => {
  let service: TestService;
  let runtime: LocalRuntime;
  let dataDir: string;
  beforeAll(async () => {
    service = await startTestService();
    ({ runtime, dataDir } = service);
  });
  afterAll(async () => {
    await service.stop();
  });

  const listModels = (key: string) =>
    fetch(`${runtime.baseUrl}/models/user?limit=1`, { headers: { Authorization: `Bearer ${key}` } }).then((response) => response.status);

  it('a key created with the CLI calls the API until the CLI disables it', async () => {
    const organizationId = runtime.demo.organizationId;

    const created = await cli(['key', 'create', organizationId, '--kind', 'workspace', '--name', 'e2e', '--json', '--data-dir', dataDir]);

    expect(created.code).toBe(0);
    expect(created.stderr).toContain('The secret is shown only this once and cannot be recovered: store it now.');
    const { data, key } = JSON.parse(created.stdout);
    expect(key).toMatch(/^sk-mg-v1-[0-9a-f]{64}$/);
    expect(data).toMatchObject({ hash: hashApiKey(key), kind: 'workspace', workspace_id: runtime.demo.workspaceId, disabled: false });
    expect(await listModels(key)).toBe(200);

    const disabled = await cli(['key', 'disable', organizationId, data.hash, '--data-dir', dataDir]);

    expect(disabled).toMatchObject({ code: 0, stdout: `Disabled key ${data.hash} (e2e).\n` });
    expect(await listModels(key)).toBe(401);

    // Every change landed with its copies: the audit of the local data finds nothing to repair.
    const checked = await cli(['copies', 'check', '--data-dir', dataDir]);
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringContaining('Every copy agrees with its item.') });
  }, 120_000);

  it("key update --limit caps the limit's ledger in the change's transaction, as management's change does", async () => {
    const organizationId = runtime.demo.organizationId;
    const created = JSON.parse((await cli(['key', 'create', organizationId, '--kind', 'workspace', '--name', 'capped', '--limit', '10', '--limit-reset', 'daily', '--json', '--data-dir', dataDir])).stdout);
    expect((await cli(['key', 'update', organizationId, created.data.hash, '--limit', '4', '--data-dir', dataDir])).code).toBe(0);
    const stores = connectToRuntime(runtime);
    try {
      const limit = (await stores.accounts.getApiKey(organizationId, created.data.hash)).limit!;
      expect(limit).toMatchObject({ amountUsd: '4', heldAtChange: { fit: true } });
      const key = ledgerKey({ ledger: `K#${created.data.hash}#${limit.since}`, period: limit.heldAtChange!.periods[0]! });
      const ledger = await stores.documentClient.send(new GetCommand({ TableName: TABLE_SCHEMAS.usage.localName, Key: key }));
      expect(ledger.Item?.cap).toBe(4);
    } finally {
      stores.destroy();
    }
  }, 120_000);

  it('usage roll-up records a limited completion its function left open, where the local service spreads them, once', async () => {
    const stores = connectToRuntime(runtime);
    try {
      // Begun two hours ago, as the local service keeps a limited completion until it ends: its hour and a request's longest run are over.
      const at = new Date(Date.now() - 2 * 3600 * 1000);
      const keyHash = 'e2e0'.repeat(16);
      const usage = { organizationId: runtime.demo.organizationId, keyHash, workspaceId: null, model: { id: 'acme/chat', canonical_slug: 'acme/chat' }, endpoint: { tag: 'acme', provider_name: 'Acme' } };
      const request = { generationId: 'gen-e2e-rollup-0001', requestId: 'req-e2e', createdAt: at.toISOString(), streamed: false, origin: '', httpReferer: null, userAgent: null, externalUser: null };
      const charged = { promptTokens: 10, completionTokens: 20, cost: '0.125', costParts: { prompt: '0.025', completion: '0.1' }, date: at.toISOString().slice(0, 10), via: { credential: 'api_key' as const }, charge: 'maximum' as const };
      await new DynamoOpenCompletions(stores.documentClient, TABLE_SCHEMAS.usage.localName, { shards: LOCAL_OPEN_SHARDS }).open({ usage: { ...usage, ...charged }, request });

      const first = await cli(['usage', 'roll-up', '--json', '--data-dir', dataDir]);
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout).data).toMatchObject({ died: 1 });
      const again = await cli(['usage', 'roll-up', '--data-dir', dataDir]);
      expect(again).toMatchObject({ code: 0, stdout: expect.stringMatching(/Died completions recorded\s+0/) });
      const recorded = await new DynamoUsageStore(stores.documentClient, TABLE_SCHEMAS.usage.localName).keyUsage(runtime.demo.organizationId, [keyHash], new Date());
      expect(recorded.get(keyHash)?.usage).toBe(0.125);
    } finally {
      stores.destroy();
    }
  }, 120_000);
});
