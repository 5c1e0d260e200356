import { OperationError } from '../../ops/errors';
import { runOps } from '../../ops/run';
import { startOpsHarness, type OpsHarness } from '../support/ops-harness';

describe('ops command dispatch, help and usage errors', () => {
  let ops: OpsHarness;
  beforeAll(async () => {
    ops = await startOpsHarness();
  });
  afterAll(async () => {
    await ops.stop();
  });

  it('--help prints every command, the target rules and the exit codes, without connecting', async () => {
    const result = await ops.run('--help');

    expect(result).toMatchObject({ code: 0, stderr: '', connectedWith: undefined });
    const lines = result.stdout.split('\n');
    expect(lines[2]).toBe('Usage: npm run ops -- <command> [arguments] [options]');
    for (const command of ['org create', 'org set-privacy', 'workspace list', 'user create', 'key disable', 'guardrail detach-workspace', 'catalog import']) {
      expect(lines.some((line) => line.startsWith(`  ${command} `))).toBe(true);
    }
    expect(result.stdout).toContain('With --aws, or when KEYS_TABLE or MODELS_TABLE is set (and no data directory named), a deployed stack:');
    expect(result.stdout).toContain('KEYS_TABLE and MODELS_TABLE, as the stack outputs KeysTableName and ModelsTableName give them');
    expect(result.stdout).toContain('(issuer and policy commands also need POLICIES_TABLE, the output PoliciesTableName).');
    expect(result.stdout).toContain('Exit status: 0 done; 1 the operation failed');
    expect((await ops.run('help')).stdout).toBe(result.stdout);
  });

  it('a command --help prints its usage, arguments and options', async () => {
    const result = await ops.run('org', 'set-providers', '--help');

    expect(result).toMatchObject({ code: 0, stderr: '', connectedWith: undefined });
    expect(result.stdout).toBe(
      [
        'Usage: npm run ops -- org set-providers <org> [--allow <providers>] [--allow-all] [--ignore <providers>]',
        '',
        'Set which providers may serve an organization.',
        '',
        'Providers are endpoint tags, e.g. anthropic or amazon-bedrock. Options not given keep their current value; ' +
          '--allow and --allow-all exclude each other.',
        '',
        'Arguments:',
        '  <org>  organization id',
        '',
        'Options:',
        '  --allow <providers>   use only these providers (comma-separated, repeatable)',
        '  --allow-all           lift the allowlist: every provider that is not ignored',
        '  --ignore <providers>  never use these providers; --ignore "" clears the list (comma-separated, repeatable)',
        '',
        'Global options:',
        '  --json            print machine-readable JSON on stdout',
        '  --aws             use a deployed stack (KEYS_TABLE, MODELS_TABLE, default AWS credentials)',
        '  --data-dir <dir>  the local service data directory holding runtime.json (default MODELGATE_DATA_DIR, else .local)',
        '  -h, --help        show help',
        '',
      ].join('\n'),
    );
    expect((await ops.run('help', 'org', 'set-providers')).stdout).toBe(result.stdout);
    expect((await ops.run('org', 'set-providers', '-h')).stdout).toBe(result.stdout);
  });

  it('a group alone, with --help, lists its commands', async () => {
    const result = await ops.run('key', '--help');

    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 4)).toEqual([
      'key: API keys',
      '',
      '  npm run ops -- key create <org> --kind <workspace|management|personal> --name <name> [--workspace <id>] ' +
        '[--access <read-write|read-only>] [--user <id>] [--expires <ISO time>] [--limit <usd>] [--limit-reset <daily|weekly|monthly>] [--include-byok]',
      '  npm run ops -- key list <org>',
    ]);
  });

  it('no command exits 2 with the overall help on stderr', async () => {
    const result = await ops.run();

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').slice(0, 3)).toEqual([
      'error: missing command',
      '',
      'modelgate operator CLI: organizations, plans, workspaces, users, API keys, guardrails, workload identity and the model catalog.',
    ]);
  });

  it('an unknown command exits 2 and points to the help', async () => {
    expect(await ops.run('tenant', 'create')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: unknown command "tenant"\nRun "npm run ops -- --help" for the list of commands.\n',
      connectedWith: undefined,
    });
  });

  it('an unknown or missing subcommand exits 2 with the group commands', async () => {
    const unknown = await ops.run('org', 'frobnicate');
    const missing = await ops.run('org');

    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n').slice(0, 3)).toEqual(['error: unknown command "org frobnicate"', '', 'org: organizations: plan, provider preferences, privacy']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe('error: missing org command');
  });

  it('unknown options, missing option values, values on flags and extra arguments exit 2 with the usage', async () => {
    const cases: [string[], string][] = [
      [['org', 'list', '--colour'], 'error: unknown option --colour'],
      [['org', 'create', '--plan', 'pro', '--name'], 'error: --name needs a value'],
      [['org', 'create', '--name', '--plan', 'pro'], 'error: --name needs a value (write --name=<value> for one starting with "-")'],
      [['org', 'create', '--name', '  ', '--plan', 'pro'], 'error: --name needs a non-empty value'],
      [['guardrail', 'create', 'o', '--name', 'G', '--zdr=yes'], 'error: --zdr takes no value'],
      [['org', 'show', 'a', 'b'], 'error: unexpected argument "b"'],
    ];
    for (const [argv, message] of cases) {
      const result = await ops.run(...argv);
      expect({ argv, code: result.code, first: result.stderr.split('\n')[0], connected: result.connectedWith }).toEqual({
        argv,
        code: 2,
        first: message,
        connected: undefined,
      });
      expect(result.stderr.split('\n')[1]).toMatch(new RegExp(`^Usage: npm run ops -- ${argv[0]} ${argv[1]}( |$)`));
    }
  });

  it('global options may come before the command and reach the target selection', async () => {
    const result = await ops.run('--json', '--data-dir', '/tmp/somewhere', 'org', 'list');

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ data: [] });
    expect(result.connectedWith).toEqual({ json: true, aws: false, dataDir: '/tmp/somewhere' });
  });

  it('a target that cannot be reached exits 1 with its message', async () => {
    const io = { out: jest.fn(), err: jest.fn() };

    const unreachable = await runOps(['org', 'list'], io, async () => {
      throw new OperationError('the local service is not running: start it with npm start');
    });
    const failing = await runOps(['org', 'list'], io, async () => ({
      accounts: { listOrganizations: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:9')) } as never,
      catalog: {} as never,
    }));

    expect([unreachable, failing]).toEqual([1, 1]);
    expect(io.err.mock.calls).toEqual([
      ['error: the local service is not running: start it with npm start'],
      ['error: connect ECONNREFUSED 127.0.0.1:9'],
    ]);
    expect(io.out).not.toHaveBeenCalled();
  });

  it('closes the target after the command, also when it fails', async () => {
    const close = jest.fn();
    const io = { out: jest.fn(), err: jest.fn() };

    await runOps(['org', 'show', 'nope'], io, async () => ({ accounts: ops.accounts, catalog: ops.catalog, close }));

    expect(close).toHaveBeenCalledTimes(1);
    expect(io.err).toHaveBeenCalledWith('error: Organization nope not found');
  });
});
