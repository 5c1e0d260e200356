import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { harnessSecret, startOpsHarness, type OpsHarness } from '../support/ops-harness';

const WARNING = 'The secret is shown only this once and cannot be recovered: store it now.';

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('ops key commands', () => {
  let ops: OpsHarness;
  const secret = harnessSecret(1);
  const hash = hashApiKey(secret);
  const label = `sk-mg-v1-010...0101`;

  beforeEach(async () => {
    ops = await startOpsHarness();
    await ops.run('org', 'create', '--name', 'Acme', '--plan', 'pro');
  });
  afterEach(async () => {
    await ops.stop();
  });

  it('key create prints the key, its secret exactly once and the one-time warning', async () => {
    const result = await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      [
        'Created workspace key in organization id-1.',
        `Hash        ${hash}`,
        `Label       ${label}`,
        'Name        CI',
        'Kind        workspace',
        'Workspace   id-2',
        'Access      -',
        'User        -',
        'Status      enabled',
        'Guardrails  -',
        'Limit       -',
        'Expires     never',
        'Created     2026-11-21T12:00:00.000Z',
        `Secret      ${secret}`,
        '',
        WARNING,
        '',
      ].join('\n'),
    );
    expect(occurrences(result.stdout, secret)).toBe(1);
  });

  it('key create --json puts the secret under "key" and the warning on stderr', async () => {
    const result = await ops.run('key', 'create', 'id-1', '--kind', 'management', '--name', 'Admin', '--access', 'read-only', '--json');

    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`${WARNING}\n`);
    expect(JSON.parse(result.stdout)).toEqual({
      data: {
        hash,
        name: 'Admin',
        label,
        kind: 'management',
        access_level: 'read-only',
        disabled: false,
        workspace_id: null,
        creator_user_id: null,
        guardrail_ids: [],
        external_user: null,
        expires_at: null,
        created_at: '2026-11-21T12:00:00.000Z',
        updated_at: null,
        // A new key has spent nothing; no limits, no bring-your-own-key usage.
        usage: 0,
        usage_daily: 0,
        usage_weekly: 0,
        usage_monthly: 0,
        byok_usage: 0,
        byok_usage_daily: 0,
        byok_usage_weekly: 0,
        byok_usage_monthly: 0,
        include_byok_in_limit: false,
        limit: null,
        limit_remaining: null,
        limit_reset: null,
      },
      key: secret,
    });
    expect(occurrences(result.stdout, secret)).toBe(1);
  });

  it('key create makes a personal key for a user, with an expiry', async () => {
    await ops.run('user', 'create', 'id-1', '--email', 'ada@example.com', '--name', 'Ada');

    const result = await ops.run(
      'key', 'create', 'id-1', '--kind', 'personal', '--name', 'Ada laptop', '--user', 'id-3', '--expires', '2027-01-01T00:00:00Z', '--json',
    );

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).data).toMatchObject({
      kind: 'personal',
      workspace_id: 'id-2',
      creator_user_id: 'id-3',
      expires_at: '2027-01-01T00:00:00Z',
    });
  });

  it('key create reports invalid values under the flag names with exit 2', async () => {
    const expires = await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI', '--expires', 'tomorrow');
    const access = await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI', '--access', 'read-only');
    const noUser = await ops.run('key', 'create', 'id-1', '--kind', 'personal', '--name', 'CI');
    const kind = await ops.run('key', 'create', 'id-1', '--kind', 'root', '--name', 'CI');

    expect(expires.stderr).toBe(
      [
        'error: Invalid --expires: must be an ISO 8601 UTC timestamp ending in Z',
        'Usage: npm run ops -- key create <org> --kind <workspace|management|personal> --name <name> [--workspace <id>] ' +
          '[--access <read-write|read-only>] [--user <id>] [--expires <ISO time>] [--limit <usd>] [--limit-reset <daily|weekly|monthly>] [--include-byok]',
        'Run "npm run ops -- key create --help" for details.',
        '',
      ].join('\n'),
    );
    expect(access.stderr.split('\n')[0]).toBe('error: Invalid --access: applies to management keys only');
    expect(noUser.stderr.split('\n')[0]).toBe('error: Invalid --user: is required for a personal key');
    expect(kind.stderr.split('\n')[0]).toBe('error: --kind must be one of workspace, management, personal (got "root")');
    for (const result of [expires, access, noUser, kind]) expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(await ops.accounts.listApiKeys('id-1')).toEqual([]);
  });

  it('key create in an unknown organization or workspace exits 1', async () => {
    const org = await ops.run('key', 'create', 'nope', '--kind', 'workspace', '--name', 'CI');
    const workspace = await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI', '--workspace', 'nope');

    expect(org).toMatchObject({ code: 1, stderr: 'error: Organization nope not found\n' });
    expect(workspace).toMatchObject({ code: 1, stderr: 'error: Workspace nope not found\n' });
  });

  it('key list shows hashes and labels but never a secret', async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');
    ops.clock.advance(1000);
    await ops.run('key', 'create', 'id-1', '--kind', 'management', '--name', 'Admin');
    const second = hashApiKey(harnessSecret(2));

    const text = await ops.run('key', 'list', 'id-1');
    const json = await ops.run('key', 'list', 'id-1', '--json');

    expect(text.code).toBe(0);
    const pad = ' '.repeat(hash.length - 'HASH'.length);
    expect(text.stdout).toBe(
      [
        `HASH${pad}  NAME   KIND        WORKSPACE  ACCESS      STATUS   EXPIRES  LABEL`,
        `${hash}  CI     workspace   id-2       -           enabled  never    ${label}`,
        `${second}  Admin  management  -          read-write  enabled  never    sk-mg-v1-020...0202`,
        '',
      ].join('\n'),
    );
    expect(JSON.parse(json.stdout).data.map((k: { hash: string }) => k.hash)).toEqual([hash, second]);
    for (const output of [text.stdout, json.stdout]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(harnessSecret(2));
    }
  });

  it('key list of an organization without keys says so; of an unknown one exits 1', async () => {
    expect((await ops.run('key', 'list', 'id-1')).stdout).toBe('No keys.\n');
    expect(await ops.run('key', 'list', 'nope')).toMatchObject({ code: 1, stderr: 'error: Organization nope not found\n' });
  });

  it('key disable and key enable flip the key and print it', async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');

    const disabled = await ops.run('key', 'disable', 'id-1', hash);
    expect(disabled).toMatchObject({ code: 0, stdout: `Disabled key ${hash} (CI).\n` });
    expect((await ops.store.getApiKey(hash))?.disabled).toBe(true);

    const enabled = await ops.run('key', 'enable', 'id-1', hash, '--json');
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.stdout).data).toMatchObject({ hash, disabled: false, updated_at: '2026-11-21T12:00:00.000Z' });
    expect((await ops.store.getApiKey(hash))?.disabled).toBe(false);
  });

  it("key disable of an unknown key, or of another organization's key, exits 1", async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');
    await ops.run('org', 'create', '--name', 'Other', '--plan', 'free');

    expect(await ops.run('key', 'disable', 'id-1', 'f'.repeat(64))).toMatchObject({
      code: 1,
      stderr: `error: API key ${'f'.repeat(64)} not found\n`,
    });
    expect(await ops.run('key', 'disable', 'id-3', hash)).toMatchObject({ code: 1, stderr: `error: API key ${hash} not found\n` });
    expect((await ops.store.getApiKey(hash))?.disabled).toBe(false);
  });

  it('key delete removes the key; deleting it again exits 1', async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');

    expect(await ops.run('key', 'delete', 'id-1', hash)).toMatchObject({ code: 0, stdout: `Deleted key ${hash}.\n` });
    expect(await ops.store.getApiKey(hash)).toBeUndefined();
    expect(await ops.run('key', 'delete', 'id-1', hash, '--json')).toMatchObject({ code: 1, stdout: '' });
  });

  it('key create --limit sets a spending limit with its window, shown in text and JSON', async () => {
    const result = await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI', '--limit', '25.50', '--limit-reset', 'weekly', '--include-byok');
    const json = await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'Batch', '--limit', '10', '--json');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('\nLimit       25.5 USD weekly (BYOK included)\n');
    expect((await ops.store.getApiKey(hash))?.limit).toEqual({ amountUsd: '25.5', reset: 'weekly', since: '2026-11-21T12:00:00.000Z' });
    expect(JSON.parse(json.stdout).data).toMatchObject({ limit: 10, limit_remaining: 10, limit_reset: null, include_byok_in_limit: false });
  });

  it('key update changes the limit, its window and the BYOK flag, and removes it with none', async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI', '--limit', '5', '--limit-reset', 'daily');
    ops.clock.advance(60_000);

    const amount = await ops.run('key', 'update', 'id-1', hash, '--limit', '7.5');
    expect(amount).toMatchObject({ code: 0, stderr: '' });
    expect(amount.stdout.split('\n')[0]).toBe(`Updated key ${hash}.`);
    expect(amount.stdout).toContain('\nLimit       7.5 USD daily\n');
    // A new amount keeps the window.
    expect((await ops.store.getApiKey(hash))?.limit).toEqual({ amountUsd: '7.5', reset: 'daily', since: '2026-11-21T12:00:00.000Z' });

    const window = await ops.run('key', 'update', 'id-1', hash, '--limit-reset', 'none', '--include-byok', 'on', '--name', 'CI main', '--json');
    expect(JSON.parse(window.stdout).data).toMatchObject({ name: 'CI main', limit: 7.5, limit_reset: null, include_byok_in_limit: true });
    expect((await ops.store.getApiKey(hash))?.limit).toEqual({ amountUsd: '7.5', reset: null, since: '2026-11-21T12:01:00.000Z' });

    const removed = await ops.run('key', 'update', 'id-1', hash, '--limit', 'none', '--json');
    expect(JSON.parse(removed.stdout).data).toMatchObject({ limit: null, limit_remaining: null, limit_reset: null });
  });

  it('key update refuses bad limits under the flag names with exit 2, and a missing key with exit 1', async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');

    const nothing = await ops.run('key', 'update', 'id-1', hash);
    const text = await ops.run('key', 'update', 'id-1', hash, '--limit', '1e3');
    const decimals = await ops.run('key', 'update', 'id-1', hash, '--limit', '0.0000001');
    const huge = await ops.run('key', 'update', 'id-1', hash, '--limit', '9'.repeat(20));
    const resetAlone = await ops.run('key', 'update', 'id-1', hash, '--limit-reset', 'monthly');

    expect(nothing.stderr.split('\n')[0]).toBe('error: nothing to change: give --name, --limit, --limit-reset or --include-byok');
    expect(text.stderr.split('\n')[0]).toBe('error: --limit must be an amount in USD such as 25 or 12.50, or none (got "1e3")');
    expect(decimals.stderr.split('\n')[0]).toBe('error: Invalid --limit: must have at most 6 decimal places');
    expect(huge.stderr.split('\n')[0]).toBe('error: Invalid --limit: must be at most 1000000000');
    expect(resetAlone.stderr.split('\n')[0]).toBe('error: Invalid --limit-reset: needs a limit: give limit with it');
    for (const result of [nothing, text, decimals, huge, resetAlone]) expect(result).toMatchObject({ code: 2, stdout: '' });
    expect((await ops.store.getApiKey(hash))?.limit).toBeUndefined();
    expect(await ops.run('key', 'update', 'id-1', 'f'.repeat(64), '--limit', '1')).toMatchObject({ code: 1, stderr: `error: API key ${'f'.repeat(64)} not found\n` });
  });

  it('key delete --json prints {deleted: true}', async () => {
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');

    const result = await ops.run('key', 'delete', 'id-1', hash, '--json');

    expect(JSON.parse(result.stdout)).toEqual({ deleted: true });
  });
});
