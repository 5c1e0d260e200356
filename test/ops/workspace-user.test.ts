import { startOpsHarness, type OpsHarness } from '../support/ops-harness';
import { defaultGuardrailId } from '../../lambdas/accounts/derived-ids';
import { WORKSPACE_SETTINGS } from '../../lambdas/management/views';

describe('ops workspace and user commands', () => {
  let ops: OpsHarness;
  beforeEach(async () => {
    ops = await startOpsHarness();
    await ops.run('org', 'create', '--name', 'Acme', '--plan', 'pro');
  });
  afterEach(async () => {
    await ops.stop();
  });

  it('workspace create prints the workspace with its derived slug', async () => {
    const result = await ops.run('workspace', 'create', 'id-1', '--name', 'Research Lab', '--description', 'Experiments');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'Created workspace id-3 in organization id-1.',
        'ID           id-3',
        'Name         Research Lab',
        'Slug         research-lab',
        'Description  Experiments',
        'Guardrails   -',
        'Created      2026-11-21T12:00:00.000Z',
        'Updated      -',
        '',
      ].join('\n'),
    );
  });

  it('workspace create --json prints the workspace view', async () => {
    const result = await ops.run('workspace', 'create', 'id-1', '--name', 'Research', '--json');

    expect(JSON.parse(result.stdout)).toEqual({
      data: {
        id: 'id-3',
        name: 'Research',
        slug: 'research',
        description: null,
        default_guardrail_id: defaultGuardrailId('id-3'),
        guardrail_ids: [],
        created_at: '2026-11-21T12:00:00.000Z',
        updated_at: null,
        // Public workspace settings modelgate does not have, as the wire shape requires them.
        ...WORKSPACE_SETTINGS,
        // Set with the workspace's budgets.
        include_byok_in_budgets: false,
      },
    });
  });

  it('workspace create in an unknown organization exits 1 and creates nothing', async () => {
    const result = await ops.run('workspace', 'create', 'nope', '--name', 'Research');

    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'error: Organization nope not found\n' });
    expect(await ops.accounts.listWorkspaces('nope')).toEqual([]);
  });

  it('workspace create with a taken slug exits 1 (conflict); a name without letters exits 2', async () => {
    const taken = await ops.run('workspace', 'create', 'id-1', '--name', 'default');
    const symbols = await ops.run('workspace', 'create', 'id-1', '--name', '***');

    expect(taken).toMatchObject({ code: 1, stderr: 'error: A workspace with slug "default" already exists\n' });
    expect(symbols.code).toBe(2);
    expect(symbols.stderr).toBe(
      [
        'error: Invalid --name: must contain a letter or digit',
        'Usage: npm run ops -- workspace create <org> --name <name> [--description <text>]',
        'Run "npm run ops -- workspace create --help" for details.',
        '',
      ].join('\n'),
    );
  });

  it('workspace list prints the workspaces oldest first', async () => {
    ops.clock.advance(1000);
    await ops.run('workspace', 'create', 'id-1', '--name', 'Research');

    const result = await ops.run('workspace', 'list', 'id-1');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'ID    SLUG      NAME      GUARDRAILS  CREATED',
        'id-2  default   Default   -           2026-11-21T12:00:00.000Z',
        'id-3  research  Research  -           2026-11-21T12:00:01.000Z',
        '',
      ].join('\n'),
    );
  });

  it('workspace list of an unknown organization exits 1; without <org> exits 2', async () => {
    expect(await ops.run('workspace', 'list', 'nope')).toMatchObject({ code: 1, stderr: 'error: Organization nope not found\n' });
    const missing = await ops.run('workspace', 'list');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      [
        'error: missing <org>',
        'Usage: npm run ops -- workspace list <org>',
        'Run "npm run ops -- workspace list --help" for details.',
        '',
      ].join('\n'),
    );
  });

  it('workspace budget-put sets budgets, budget-list lists them, budget-delete removes one', async () => {
    expect((await ops.run('workspace', 'budget-list', 'id-1', 'default')).stdout).toBe('No budgets.\nInclude BYOK: off\n');

    expect(await ops.run('workspace', 'budget-put', 'id-1', 'default', 'monthly', '--limit-usd', '100')).toMatchObject({
      code: 0,
      stdout: 'Set the monthly budget of workspace id-2 to 100 USD.\n',
    });
    ops.clock.advance(60_000);
    const lifetime = await ops.run('workspace', 'budget-put', 'id-1', 'default', 'lifetime', '--limit-usd', '1000.5', '--include-byok', 'on', '--json');
    expect(JSON.parse(lifetime.stdout)).toEqual({
      data: { id: 'id-4', workspace_id: 'id-2', limit_usd: 1000.5, reset_interval: null, created_at: '2026-11-21T12:01:00.000Z', updated_at: '2026-11-21T12:01:00.000Z' },
      include_byok_in_budgets: true,
    });

    expect((await ops.run('workspace', 'budget-list', 'id-1', 'default')).stdout).toBe(
      [
        'INTERVAL  LIMIT USD  ID    UPDATED',
        'monthly         100  id-3  2026-11-21T12:00:00.000Z',
        'lifetime     1000.5  id-4  2026-11-21T12:01:00.000Z',
        'Include BYOK: on',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await ops.run('workspace', 'budget-list', 'id-1', 'default', '--json')).stdout).data.map((b: { id: string }) => b.id)).toEqual(['id-3', 'id-4']);

    expect(await ops.run('workspace', 'budget-delete', 'id-1', 'default', 'monthly')).toMatchObject({ code: 0, stdout: 'Removed the monthly budget of workspace default.\n' });
    expect(JSON.parse((await ops.run('workspace', 'budget-delete', 'id-1', 'default', 'monthly', '--json')).stdout)).toEqual({ deleted: true });
    expect(Object.keys((await ops.accounts.getWorkspace('id-1', 'id-2')).budgets ?? {})).toEqual(['lifetime']);
  });

  it('workspace budget-put refuses a bad interval or amount with exit 2, an unknown workspace with exit 1', async () => {
    const interval = await ops.run('workspace', 'budget-put', 'id-1', 'default', 'yearly', '--limit-usd', '5');
    const zero = await ops.run('workspace', 'budget-put', 'id-1', 'default', 'daily', '--limit-usd', '0');
    const missing = await ops.run('workspace', 'budget-put', 'id-1', 'default', 'daily');
    await ops.run('workspace', 'budget-put', 'id-1', 'default', 'weekly', '--limit-usd', '5');
    const wider = await ops.run('workspace', 'budget-put', 'id-1', 'default', 'monthly', '--limit-usd', '5');
    const unknown = await ops.run('workspace', 'budget-put', 'id-1', 'nope', 'daily', '--limit-usd', '5');

    expect(interval.stderr.split('\n')[0]).toBe('error: Invalid <interval>: must be one of daily, weekly, monthly, lifetime');
    expect(zero.stderr.split('\n')[0]).toBe('error: Invalid --limit-usd: must be greater than 0');
    expect(missing.stderr.split('\n')[0]).toBe('error: missing --limit-usd');
    expect(wider.stderr.split('\n')[0]).toBe('error: Invalid --limit-usd: must be more than the weekly budget (5): lifetime > monthly > weekly > daily');
    for (const result of [interval, zero, missing, wider]) expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(unknown).toMatchObject({ code: 1, stderr: 'error: Workspace nope not found\n' });
  });

  it('user create prints the user', async () => {
    const result = await ops.run('user', 'create', 'id-1', '--email', 'ada@example.com', '--name', 'Ada');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'Created user id-3 in organization id-1.',
        'ID       id-3',
        'Email    ada@example.com',
        'Name     Ada',
        'Created  2026-11-21T12:00:00.000Z',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await ops.run('user', 'create', 'id-1', '--email', 'bo@example.com', '--name', 'Bo', '--json')).stdout)).toEqual({
      data: { id: 'id-4', email: 'bo@example.com', name: 'Bo', created_at: '2026-11-21T12:00:00.000Z' },
    });
  });

  it('user create with a malformed email exits 2; in an unknown organization exits 1', async () => {
    const badEmail = await ops.run('user', 'create', 'id-1', '--email', 'ada', '--name', 'Ada');
    const unknownOrg = await ops.run('user', 'create', 'nope', '--email', 'ada@example.com', '--name', 'Ada');

    expect(badEmail.code).toBe(2);
    expect(badEmail.stderr.split('\n')[0]).toBe('error: --email must be an email address (got "ada")');
    expect(unknownOrg).toMatchObject({ code: 1, stderr: 'error: Organization nope not found\n' });
  });
});
