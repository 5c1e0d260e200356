import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { harnessSecret, startOpsHarness, type OpsHarness } from '../support/ops-harness';

describe('ops guardrail commands', () => {
  let ops: OpsHarness;
  const first = hashApiKey(harnessSecret(1));
  const second = hashApiKey(harnessSecret(2));

  beforeEach(async () => {
    ops = await startOpsHarness();
    await ops.run('org', 'create', '--name', 'Acme', '--plan', 'pro');
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'Batch');
  });
  afterEach(async () => {
    await ops.stop();
  });

  const noOpenAi = () =>
    ops.run('guardrail', 'create', 'id-1', '--name', 'No OpenAI', '--ignore-providers', 'openai,azure', '--allow-models', 'anthropic/claude-sonnet-4.5', '--zdr');

  it('guardrail create prints the guardrail and its restrictions', async () => {
    const result = await noOpenAi();

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'Created guardrail id-3 in organization id-1.',
        'ID           id-3',
        'Name         No OpenAI',
        'Description  -',
        'Workspace    -',
        'Models       allow anthropic/claude-sonnet-4.5',
        'Providers    ignore openai, azure',
        'ZDR only     on',
        'Budget       -',
        'Created      2026-11-21T12:00:00.000Z',
        'Updated      -',
        '',
      ].join('\n'),
    );
  });

  it('guardrail create --json prints the guardrail view', async () => {
    const result = await ops.run('guardrail', 'create', 'id-1', '--name', 'Team', '--workspace', 'id-2', '--description', 'For the team', '--json');

    expect(JSON.parse(result.stdout)).toEqual({
      data: {
        id: 'id-3',
        name: 'Team',
        description: 'For the team',
        workspace_id: 'id-2',
        allowed_models: null,
        ignored_models: null,
        allowed_providers: null,
        ignored_providers: null,
        enforce_zdr: false,
        limit_usd: null,
        reset_interval: null,
        include_byok_in_budgets: false,
        created_at: '2026-11-21T12:00:00.000Z',
        updated_at: null,
      },
    });
  });

  it('guardrail create rejects a model both allowed and ignored with exit 2, an unknown workspace with exit 1', async () => {
    const both = await ops.run('guardrail', 'create', 'id-1', '--name', 'X', '--allow-models', 'a/b', '--ignore-models', 'a/b');
    const workspace = await ops.run('guardrail', 'create', 'id-1', '--name', 'X', '--workspace', 'nope');

    expect(both.code).toBe(2);
    expect(both.stderr.split('\n').slice(0, 2)).toEqual([
      'error: Models cannot be both allowed and ignored: a/b',
      'Usage: npm run ops -- guardrail create <org> --name <name> [--description <text>] [--allow-models <models>] ' +
        '[--ignore-models <models>] [--allow-providers <providers>] [--ignore-providers <providers>] [--zdr] [--workspace <id>] ' +
        '[--limit-usd <usd>] [--reset-interval <daily|weekly|monthly>] [--include-byok]',
    ]);
    expect(workspace).toMatchObject({ code: 1, stderr: 'error: Workspace nope not found\n' });
    // The lists' bounds hold here as on the wire: an item of 129 characters names its list.
    const long = await ops.run('guardrail', 'create', 'id-1', '--name', 'X', '--ignore-providers', 'p'.repeat(129));
    expect([long.code, long.stderr.split('\n')[0]]).toEqual([2, 'error: Invalid ignored_providers: each item must be at most 128 characters']);
    expect(await ops.accounts.listGuardrails('id-1')).toEqual([]);
  });

  it('guardrail create --limit-usd and --reset-interval set a budget, shown in text and JSON', async () => {
    const result = await ops.run('guardrail', 'create', 'id-1', '--name', 'Budget', '--limit-usd', '50', '--reset-interval', 'monthly', '--include-byok');
    const json = await ops.run('guardrail', 'create', 'id-1', '--name', 'Daily', '--limit-usd', '2.5', '--reset-interval', 'daily', '--json');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('\nBudget       50 USD monthly (BYOK included)\n');
    expect(JSON.parse(json.stdout).data).toMatchObject({ limit_usd: 2.5, reset_interval: 'daily', include_byok_in_budgets: false });
    const half = await ops.run('guardrail', 'create', 'id-1', '--name', 'Half', '--limit-usd', '5');
    expect(half).toMatchObject({ code: 2, stdout: '' });
    expect(half.stderr.split('\n')[0]).toBe('error: Invalid --reset-interval: is required with limit_usd: a guardrail budget has both');
  });

  it('guardrail set-budget changes the amount or the window, and remove-budget removes it', async () => {
    await noOpenAi();
    const none = await ops.run('guardrail', 'set-budget', 'id-1', 'id-3', '--limit-usd', '20');
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr.split('\n')[0]).toBe('error: Invalid --reset-interval: is required with limit_usd: a guardrail budget has both');

    expect(await ops.run('guardrail', 'set-budget', 'id-1', 'id-3', '--limit-usd', '20', '--reset-interval', 'weekly')).toMatchObject({
      code: 0,
      stdout: 'Set the budget of guardrail id-3: 20 USD weekly.\n',
    });
    ops.clock.advance(60_000);
    const amount = await ops.run('guardrail', 'set-budget', 'id-1', 'id-3', '--limit-usd', '25', '--include-byok', 'on', '--json');
    expect(JSON.parse(amount.stdout).data).toMatchObject({ limit_usd: 25, reset_interval: 'weekly', include_byok_in_budgets: true });
    expect((await ops.accounts.getGuardrail('id-1', 'id-3')).budget).toEqual({ amountUsd: '25', reset: 'weekly', since: '2026-11-21T12:00:00.000Z' });

    expect(await ops.run('guardrail', 'remove-budget', 'id-1', 'id-3')).toMatchObject({ code: 0, stdout: 'Removed the budget of guardrail id-3.\n' });
    expect((await ops.accounts.getGuardrail('id-1', 'id-3')).budget).toBeNull();
    expect((await ops.run('guardrail', 'set-budget', 'id-1', 'id-3')).stderr.split('\n')[0]).toBe('error: nothing to change: give --limit-usd, --reset-interval or --include-byok');
    expect(await ops.run('guardrail', 'remove-budget', 'id-1', 'nope')).toMatchObject({ code: 1, stderr: 'error: Guardrail nope not found\n' });
  });

  it('guardrail list prints one line per guardrail', async () => {
    expect((await ops.run('guardrail', 'list', 'id-1')).stdout).toBe('No guardrails.\n');
    await noOpenAi();
    ops.clock.advance(1000);
    await ops.run('guardrail', 'create', 'id-1', '--name', 'Team', '--workspace', 'id-2');

    const result = await ops.run('guardrail', 'list', 'id-1');

    expect(result.stdout).toBe(
      [
        'ID    NAME       WORKSPACE  MODELS                             PROVIDERS             ZDR',
        'id-3  No OpenAI  -          allow anthropic/claude-sonnet-4.5  ignore openai, azure  on',
        'id-4  Team       id-2       any                                any                   off',
        '',
      ].join('\n'),
    );
    expect(await ops.run('guardrail', 'list', 'nope')).toMatchObject({ code: 1, stderr: 'error: Organization nope not found\n' });
  });

  it('guardrail assign-keys and unassign-keys count the keys that changed', async () => {
    await noOpenAi();

    const assigned = await ops.run('guardrail', 'assign-keys', 'id-1', 'id-3', first, second);
    const again = await ops.run('guardrail', 'assign-keys', 'id-1', 'id-3', first, '--json');
    const unassigned = await ops.run('guardrail', 'unassign-keys', 'id-1', 'id-3', first);

    expect(assigned).toMatchObject({ code: 0, stdout: 'Assigned guardrail id-3 to 2 keys.\n' });
    expect(JSON.parse(again.stdout)).toEqual({ assigned_count: 0 });
    expect(unassigned).toMatchObject({ code: 0, stdout: 'Unassigned guardrail id-3 from 1 key.\n' });
    expect((await ops.store.getApiKey(first))?.guardrailIds).toEqual([]);
    expect((await ops.store.getApiKey(second))?.guardrailIds).toEqual(['id-3']);
  });

  it('guardrail index-keys enters the assignments an earlier release left on keys, once, for every organization or those given; removes none that a key holds', async () => {
    await noOpenAi();
    await ops.run('guardrail', 'assign-keys', 'id-1', 'id-3', first, second);
    // As an earlier release left the organization: its assignments on the keys, no index.
    for (const sk of ['INDEXED', `id-3#${first}`, `id-3#${second}`]) await ops.client.send(new DeleteCommand({ TableName: TABLE_SCHEMAS.keys.localName, Key: { pk: 'ORG#id-1#GUARDRAILKEYS', sk } }));
    expect(await ops.store.guardrailKeyEntries('id-1')).toBeUndefined();

    const indexed = await ops.run('guardrail', 'index-keys');
    const again = await ops.run('guardrail', 'index-keys', '--org', 'id-1', '--json');

    expect(indexed).toMatchObject({ code: 0, stdout: 'ORGANIZATION  ENTERED  REMOVED\nid-1                2        0\n' });
    expect(JSON.parse(again.stdout)).toEqual({ data: { 'id-1': { entered: 0, removed: 0 } } });
    expect((await ops.store.guardrailKeyEntries('id-1'))?.map((entry) => entry.keyHash).sort()).toEqual([first, second].sort());
    expect(await ops.run('guardrail', 'index-keys', '--org', 'nope')).toMatchObject({ code: 1, stderr: expect.stringContaining('Organization nope not found') });
  });

  it('guardrail assign-keys without hashes exits 2; with an unknown key or guardrail exits 1', async () => {
    await noOpenAi();

    const none = await ops.run('guardrail', 'assign-keys', 'id-1', 'id-3');
    const unknownKey = await ops.run('guardrail', 'assign-keys', 'id-1', 'id-3', first, 'f'.repeat(64));
    const unknownGuardrail = await ops.run('guardrail', 'unassign-keys', 'id-1', 'nope', first);

    expect(none.code).toBe(2);
    expect(none.stderr.split('\n').slice(0, 2)).toEqual([
      'error: missing <hash...>',
      'Usage: npm run ops -- guardrail assign-keys <org> <guardrail> <hash...>',
    ]);
    expect(unknownKey).toMatchObject({ code: 1, stderr: `error: API key ${'f'.repeat(64)} not found\n` });
    expect(unknownGuardrail).toMatchObject({ code: 1, stderr: 'error: Guardrail nope not found\n' });
    expect((await ops.store.getApiKey(first))?.guardrailIds).toEqual([]);
  });

  it('guardrail attach-workspace and detach-workspace change the workspace', async () => {
    await noOpenAi();

    const attached = await ops.run('guardrail', 'attach-workspace', 'id-1', 'id-3', 'id-2');
    expect(attached).toMatchObject({ code: 0, stdout: 'Attached guardrail id-3 to workspace id-2.\n' });
    expect((await ops.accounts.getWorkspace('id-1', 'id-2')).guardrailIds).toEqual(['id-3']);

    const detached = await ops.run('guardrail', 'detach-workspace', 'id-1', 'id-3', 'id-2', '--json');
    expect(detached.code).toBe(0);
    expect(JSON.parse(detached.stdout).data).toMatchObject({ id: 'id-2', guardrail_ids: [] });
  });

  it('guardrail attach-workspace to an unknown workspace, or detach of an unknown guardrail, exits 1', async () => {
    await noOpenAi();

    expect(await ops.run('guardrail', 'attach-workspace', 'id-1', 'id-3', 'nope')).toMatchObject({
      code: 1,
      stderr: 'error: Workspace nope not found\n',
    });
    expect(await ops.run('guardrail', 'detach-workspace', 'id-1', 'nope', 'id-2')).toMatchObject({
      code: 1,
      stderr: 'error: Guardrail nope not found\n',
    });
  });

  it('guardrail delete detaches it from keys and workspaces; deleting it again exits 1', async () => {
    await noOpenAi();
    await ops.run('guardrail', 'assign-keys', 'id-1', 'id-3', first);
    await ops.run('guardrail', 'attach-workspace', 'id-1', 'id-3', 'id-2');

    const deleted = await ops.run('guardrail', 'delete', 'id-1', 'id-3');

    expect(deleted).toMatchObject({ code: 0, stdout: 'Deleted guardrail id-3.\n' });
    expect((await ops.store.getApiKey(first))?.guardrailIds).toEqual([]);
    expect((await ops.accounts.getWorkspace('id-1', 'id-2')).guardrailIds).toEqual([]);
    expect(await ops.run('guardrail', 'delete', 'id-1', 'id-3')).toMatchObject({ code: 1, stderr: 'error: Guardrail id-3 not found\n' });
  });
});
