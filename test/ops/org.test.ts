import { startOpsHarness, type OpsHarness } from '../support/ops-harness';
import { defaultGuardrailId } from '../../lambdas/accounts/derived-ids';
import { WORKSPACE_SETTINGS } from '../../lambdas/management/views';

describe('ops org commands', () => {
  let ops: OpsHarness;
  beforeEach(async () => {
    ops = await startOpsHarness();
  });
  afterEach(async () => {
    await ops.stop();
  });

  const acme = () => ops.run('org', 'create', '--name', 'Acme', '--plan', 'pro');

  it('org create prints the organization and its default workspace', async () => {
    const result = await acme();

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'Created organization id-1 with workspace id-2 (default).',
        'ID                 id-1',
        'Name               Acme',
        'Plan               pro',
        'Allowed providers  all',
        'Ignored providers  -',
        'Training           allow',
        'Retention          allow',
        'ZDR only           off',
        'Created            2026-11-21T12:00:00.000Z',
        'Updated            -',
        '',
      ].join('\n'),
    );
    expect((await ops.accounts.listWorkspaces('id-1')).map((w) => w.name)).toEqual(['Default']);
  });

  it('org create --json prints the organization and workspace in wire names', async () => {
    const result = await ops.run('org', 'create', '--name', 'Acme', '--plan', 'enterprise', '--json');

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      data: {
        id: 'id-1',
        name: 'Acme',
        plan: 'enterprise',
        provider_preferences: { allowed_providers: null, ignored_providers: [] },
        privacy: { allow_training_providers: true, allow_retaining_providers: true, zero_data_retention_only: false },
        created_at: '2026-11-21T12:00:00.000Z',
        updated_at: null,
      },
      default_workspace: {
        id: 'id-2',
        name: 'Default',
        slug: 'default',
        description: null,
        guardrail_ids: [],
        created_at: '2026-11-21T12:00:00.000Z',
        updated_at: null,
        // Public workspace settings modelgate does not have, as the wire shape requires them.
        ...WORKSPACE_SETTINGS,
        // Set with the workspace's budgets.
        include_byok_in_budgets: false,
        // Derived from the workspace id (UUIDv5): the same for the same id.
        default_guardrail_id: defaultGuardrailId('id-2'),
      },
    });
  });

  it('org create without --plan, or with an unknown plan, exits 2 with the usage and connects to nothing', async () => {
    const missing = await ops.run('org', 'create', '--name', 'Acme');
    const unknown = await ops.run('org', 'create', '--name', 'Acme', '--plan', 'gold');

    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: [
        'error: missing --plan (free, pro, business, enterprise)',
        'Usage: npm run ops -- org create --name <name> --plan <free|pro|business|enterprise>',
        'Run "npm run ops -- org create --help" for details.',
        '',
      ].join('\n'),
      connectedWith: undefined,
    });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error: --plan must be one of free, pro, business, enterprise \(got "gold"\)\nUsage: /);
    expect(await ops.accounts.listOrganizations()).toEqual([]);
  });

  it('org list prints aligned columns, oldest first, and says so when there are none', async () => {
    expect((await ops.run('org', 'list')).stdout).toBe('No organizations.\n');
    await acme();
    ops.clock.advance(60_000);
    await ops.run('org', 'create', '--name', 'Globex Corporation', '--plan', 'free');

    const result = await ops.run('org', 'list');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'ID    NAME                PLAN  CREATED',
        'id-1  Acme                pro   2026-11-21T12:00:00.000Z',
        'id-3  Globex Corporation  free  2026-11-21T12:01:00.000Z',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await ops.run('org', 'list', '--json')).stdout).data.map((o: { id: string }) => o.id)).toEqual(['id-1', 'id-3']);
  });

  it('org show of an unknown organization exits 1 with the message', async () => {
    const result = await ops.run('org', 'show', 'nope');

    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'error: Organization nope not found\n' });
  });

  it('org set-plan changes the plan and prints the organization', async () => {
    await acme();
    ops.clock.advance(1000);

    const result = await ops.run('org', 'set-plan', 'id-1', 'business');

    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 4)).toEqual([
      'Updated organization id-1.',
      'ID                 id-1',
      'Name               Acme',
      'Plan               business',
    ]);
    expect(result.stdout).toContain('Updated            2026-11-21T12:00:01.000Z\n');
    expect((await ops.accounts.getOrganization('id-1')).plan).toBe('business');
  });

  it('org set-plan with an unknown plan exits 2, an unknown organization exits 1', async () => {
    const badPlan = await ops.run('org', 'set-plan', 'id-1', 'gold');
    const unknownOrg = await ops.run('org', 'set-plan', 'nope', 'pro');

    expect(badPlan.code).toBe(2);
    expect(badPlan.stderr).toBe(
      [
        'error: <plan> must be one of free, pro, business, enterprise (got "gold")',
        'Usage: npm run ops -- org set-plan <org> <plan>',
        'Run "npm run ops -- org set-plan --help" for details.',
        '',
      ].join('\n'),
    );
    expect(unknownOrg).toMatchObject({ code: 1, stderr: 'error: Organization nope not found\n' });
  });

  it('org set-providers sets the allowlist and ignore list, keeping what is not given', async () => {
    await acme();

    const first = await ops.run('org', 'set-providers', 'id-1', '--allow', 'anthropic, openai', '--allow', 'azure', '--ignore', 'novita');
    const second = await ops.run('org', 'set-providers', 'id-1', '--ignore', 'groq,novita', '--json');

    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Allowed providers  anthropic, openai, azure\nIgnored providers  novita\n');
    expect(JSON.parse(second.stdout).data.provider_preferences).toEqual({
      allowed_providers: ['anthropic', 'openai', 'azure'],
      ignored_providers: ['groq', 'novita'],
    });
  });

  it('org set-providers --allow-all lifts the allowlist and --ignore "" clears the ignore list', async () => {
    await acme();
    await ops.run('org', 'set-providers', 'id-1', '--allow', 'anthropic', '--ignore', 'groq');

    const result = await ops.run('org', 'set-providers', 'id-1', '--allow-all', '--ignore', '');

    expect(result.code).toBe(0);
    expect((await ops.accounts.getOrganization('id-1')).providerPreferences).toEqual({ allowedProviders: null, ignoredProviders: [] });
  });

  it('org set-providers rejects contradictions and empty requests with exit 2', async () => {
    await acme();

    const both = await ops.run('org', 'set-providers', 'id-1', '--allow', 'groq', '--allow-all');
    const nothing = await ops.run('org', 'set-providers', 'id-1');
    const overlap = await ops.run('org', 'set-providers', 'id-1', '--allow', 'groq,azure', '--ignore', 'groq');
    const emptyAllow = await ops.run('org', 'set-providers', 'id-1', '--allow', '');

    expect(both.stderr.split('\n')[0]).toBe('error: --allow and --allow-all exclude each other');
    expect(nothing.stderr.split('\n')[0]).toBe('error: nothing to change: give --allow, --allow-all or --ignore');
    expect(overlap.stderr.split('\n')[0]).toBe('error: Providers cannot be both allowed and ignored: groq');
    expect(emptyAllow.stderr.split('\n')[0]).toBe('error: --allow needs at least one provider (--allow-all lifts the allowlist)');
    for (const result of [both, nothing, overlap, emptyAllow]) {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        'Usage: npm run ops -- org set-providers <org> [--allow <providers>] [--allow-all] [--ignore <providers>]\n',
      );
    }
    expect((await ops.accounts.getOrganization('id-1')).providerPreferences).toEqual({ allowedProviders: null, ignoredProviders: [] });
  });

  it('org set-privacy sets the given settings and keeps the others', async () => {
    await acme();

    const result = await ops.run('org', 'set-privacy', 'id-1', '--training', 'deny', '--zdr-only', 'on');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Training           deny\nRetention          allow\nZDR only           on\n');
    expect((await ops.accounts.getOrganization('id-1')).privacy).toEqual({
      allowTrainingProviders: false,
      allowRetainingProviders: true,
      zeroDataRetentionOnly: true,
    });
  });

  it('org set-privacy rejects a value other than allow/deny or on/off with exit 2', async () => {
    await acme();

    const result = await ops.run('org', 'set-privacy', 'id-1', '--retention', 'yes');

    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('error: --retention must be one of allow, deny (got "yes")');
  });
});
