import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { runOps } from '../../ops/run';
import { federationUuid, harnessSecret, startOpsHarness, type OpsHarness } from '../support/ops-harness';

describe('ops issuer and policy commands', () => {
  let ops: OpsHarness;
  const workspaceKey = hashApiKey(harnessSecret(1));
  const managementKey = hashApiKey(harnessSecret(2));
  const issuerId = federationUuid(1);
  const policyId = federationUuid(2);

  beforeEach(async () => {
    ops = await startOpsHarness();
    await ops.run('org', 'create', '--name', 'Acme', '--plan', 'business');
    await ops.run('key', 'create', 'id-1', '--kind', 'workspace', '--name', 'CI');
    await ops.run('key', 'create', 'id-1', '--kind', 'management', '--name', 'Ops');
  });
  afterEach(async () => {
    await ops.stop();
  });

  const createIssuer = () =>
    ops.run('issuer', 'create', 'id-1', '--name', 'GitHub Actions', '--issuer-url', 'https://token.actions.githubusercontent.com');
  const createPolicy = (...extra: string[]) =>
    ops.run(
      'policy', 'create', 'id-1', '--name', 'Deploy', '--issuer', issuerId, '--audience', 'https://modelgate.example',
      '--key', workspaceKey, ...extra,
    );

  it('issuer create prints the issuer; issuer show and list find it', async () => {
    const created = await createIssuer();
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const fields = [
      `ID          ${issuerId}`,
      'Name        GitHub Actions',
      'Issuer URL  https://token.actions.githubusercontent.com',
      'Keys        discovery',
      'Check jti   off',
      'Created     2026-11-21T12:00:00.000Z',
      'Updated     -',
    ];
    expect(created.stdout).toBe([`Created issuer ${issuerId} in organization id-1.`, ...fields, ''].join('\n'));
    expect((await ops.run('issuer', 'show', 'id-1', issuerId)).stdout).toBe([...fields, ''].join('\n'));
    expect((await ops.run('issuer', 'list', 'id-1')).stdout).toBe(
      [
        'ID                                    NAME            ISSUER URL                                   KEYS       JTI',
        `${issuerId}  GitHub Actions  https://token.actions.githubusercontent.com  discovery  off`,
        '',
      ].join('\n'),
    );
  });

  it('issuer create reads inline keys from --jwks-file and prints the API shape with --json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'modelgate-jwks-'));
    try {
      const jwk = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }), kid: 'cluster-1' };
      writeFileSync(join(dir, 'keys.json'), JSON.stringify({ keys: [jwk] }));
      const result = await ops.run(
        'issuer', 'create', 'id-1', '--name', 'Cluster', '--issuer-url', 'https://k8s.internal.example', '--jwks-file', join(dir, 'keys.json'),
        '--check-jti', '--json',
      );
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({
        data: {
          id: issuerId,
          name: 'Cluster',
          issuer_url: 'https://k8s.internal.example',
          jwks_url: null,
          jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: 'cluster-1' }] },
          check_jti: true,
          created_at: '2026-11-21T12:00:00.000Z',
          updated_at: null,
        },
      });
      writeFileSync(join(dir, 'bad.json'), '{"keys": [');
      const bad = await ops.run('issuer', 'create', 'id-1', '--name', 'x', '--issuer-url', 'https://x.example', '--jwks-file', join(dir, 'bad.json'));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`error: --jwks-file: ${join(dir, 'bad.json')} is not JSON`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what the API refuses, with the API message naming the flag (exit 2)', async () => {
    const http = await ops.run('issuer', 'create', 'id-1', '--name', 'x', '--issuer-url', 'http://idp.example');
    expect(http).toMatchObject({ code: 2, stdout: '' });
    expect(http.stderr.split('\n')[0]).toBe('error: Invalid --issuer-url: must be an https:// URL');
    const loopback = await ops.run('issuer', 'create', 'id-1', '--name', 'x', '--issuer-url', 'https://169.254.169.254');
    expect(loopback.stderr.split('\n')[0]).toBe('error: Invalid --issuer-url: the host 169.254.169.254 is not a public address (link-local)');

    await createIssuer();
    const unknownVariable = await createPolicy('--condition', 'claims.sub == "x"');
    expect(unknownVariable.stderr.split('\n')[0]).toBe('error: Invalid --condition: unknown variable claims');
    const matches = await createPolicy('--condition', 'subject.matches("^repo:acme/")');
    expect(matches.stderr.split('\n')[0]).toBe('error: Invalid --condition: matches() is not available');
    const neither = await createPolicy();
    expect(neither.stderr.split('\n')[0]).toBe('error: Invalid --subject: a policy needs a subject or a condition, or both');
    const personal = await createPolicy('--subject', 'repo:acme/api:ref:refs/heads/main', '--key', 'f'.repeat(64));
    expect(personal.stderr.split('\n')[0]).toBe('error: Invalid --key: no key with this hash in the organization');
    const shared = await createPolicy('--condition', '"deploy" in scopes');
    expect(shared.stderr.split('\n')[0]).toMatch(
      /^error: Invalid --condition: https:\/\/token\.actions\.githubusercontent\.com issues tokens to every GitHub Actions customer/,
    );
    const emptyCheck = await createPolicy('--subject', 'a', '--scopes-check', ' ');
    expect(emptyCheck.stderr.split('\n')[0]).toBe('error: --scopes-check needs a non-empty value');
  });

  it('refuses configuration below the Business plan (exit 1)', async () => {
    const { organization } = await ops.accounts.createOrganization({ name: 'Small', plan: 'pro' });
    const result = await ops.run('issuer', 'create', organization.id, '--name', 'x', '--issuer-url', 'https://idp.example');
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'error: Workload identity federation requires the Business or Enterprise plan\n' });
  });

  it('policy create, show, pause, enable, list and delete', async () => {
    await createIssuer();
    const created = await createPolicy(
      '--subject', 'repo:acme/api:ref:refs/heads/main', '--condition', 'token_type == ""', '--scopes-check', 'deploy', '--paused',
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const fields = (status: string, updated: string) => [
      `ID                ${policyId}`,
      'Name              Deploy',
      `Status            ${status}`,
      `Issuer            ${issuerId}`,
      'Subject           repo:acme/api:ref:refs/heads/main',
      'Audience          https://modelgate.example',
      'Condition         token_type == ""',
      `Acts as key       ${workspaceKey}`,
      'Scope             inference',
      'Scopes check      deploy',
      'Token type check  -',
      'DPoP              optional',
      'Created           2026-11-21T12:00:00.000Z',
      `Updated           ${updated}`,
    ];
    expect(created.stdout).toBe([`Created policy ${policyId} in organization id-1.`, ...fields('paused', '-'), ''].join('\n'));

    ops.clock.advance(60_000);
    expect((await ops.run('policy', 'enable', 'id-1', policyId)).stdout).toBe(`Enabled policy ${policyId} (Deploy).\n`);
    expect((await ops.run('policy', 'show', 'id-1', policyId)).stdout).toBe([...fields('enabled', '2026-11-21T12:01:00.000Z'), ''].join('\n'));
    expect((await ops.run('policy', 'pause', 'id-1', policyId)).stdout).toBe(`Paused policy ${policyId} (Deploy).\n`);

    const list = await ops.run('policy', 'list', 'id-1', '--issuer', issuerId);
    expect(list.stdout).toBe(
      [
        'ID                                    NAME    STATUS  ISSUER                                SUBJECT                            AUDIENCE                   SCOPE      DPOP',
        `${policyId}  Deploy  paused  ${issuerId}  repo:acme/api:ref:refs/heads/main  https://modelgate.example  inference  optional`,
        '',
      ].join('\n'),
    );
    expect((await ops.run('policy', 'delete', 'id-1', policyId)).stdout).toBe(`Deleted policy ${policyId}.\n`);
    expect((await ops.run('policy', 'list', 'id-1')).stdout).toBe('No policies.\n');
    expect(await ops.run('policy', 'show', 'id-1', policyId)).toMatchObject({ code: 1, stderr: `error: Policy ${policyId} not found\n` });
  });

  it('policy create --require-dpop issues bound tokens only; policy update changes only the fields it is given', async () => {
    await createIssuer();
    const created = await createPolicy('--subject', 'repo:acme/api:ref:refs/heads/main', '--scopes-check', 'deploy', '--require-dpop');
    expect(created.stdout).toContain('\nDPoP              required\n');
    expect((await ops.run('policy', 'list', 'id-1')).stdout.split('\n')[1]).toMatch(/  inference  required$/);

    ops.clock.advance(60_000);
    const renamed = await ops.run('policy', 'update', 'id-1', policyId, '--name', 'Deploy API', '--token-type-check', 'id');
    expect(renamed).toMatchObject({ code: 0, stderr: '' });
    expect(renamed.stdout).toBe(
      [
        `Updated policy ${policyId} (Deploy API).`,
        `ID                ${policyId}`,
        'Name              Deploy API',
        'Status            enabled',
        `Issuer            ${issuerId}`,
        'Subject           repo:acme/api:ref:refs/heads/main',
        'Audience          https://modelgate.example',
        'Condition         -',
        `Acts as key       ${workspaceKey}`,
        'Scope             inference',
        'Scopes check      deploy',
        'Token type check  id',
        'DPoP              required',
        'Created           2026-11-21T12:00:00.000Z',
        'Updated           2026-11-21T12:01:00.000Z',
        '',
      ].join('\n'),
    );

    const optional = await ops.run('policy', 'update', 'id-1', policyId, '--no-require-dpop', '--json');
    expect(JSON.parse(optional.stdout).data).toMatchObject({
      name: 'Deploy API',
      claim_checks: { scopes: 'deploy', token_type: 'id' },
      require_dpop: false,
    });
    expect((await ops.run('policy', 'show', 'id-1', policyId)).stdout).toContain('\nDPoP              optional\n');
    const required = await ops.run('policy', 'update', 'id-1', policyId, '--require-dpop', '--key', managementKey, '--json');
    expect(JSON.parse(required.stdout).data).toMatchObject({ require_dpop: true, api_key_hash: managementKey, scope: 'management' });
  });

  it('policy update refuses no change, both DPoP flags, and what the API refuses, naming the flag', async () => {
    await createIssuer();
    await createPolicy('--subject', 'repo:acme/api:ref:refs/heads/main');
    const nothing = await ops.run('policy', 'update', 'id-1', policyId);
    expect(nothing).toMatchObject({ code: 2, stdout: '' });
    expect(nothing.stderr.split('\n')[0]).toBe(
      'error: nothing to change: give --name, --issuer, --audience, --key, --subject, --condition, --scopes-check, --token-type-check, --require-dpop, --no-require-dpop or a --clear- flag',
    );
    const both = await ops.run('policy', 'update', 'id-1', policyId, '--require-dpop', '--no-require-dpop');
    expect(both).toMatchObject({ code: 2, stdout: '' });
    expect(both.stderr.split('\n')[0]).toBe('error: --require-dpop and --no-require-dpop exclude each other');
    const condition = await ops.run('policy', 'update', 'id-1', policyId, '--condition', 'claims.sub == "x"');
    expect(condition).toMatchObject({ code: 2, stdout: '' });
    expect(condition.stderr.split('\n')[0]).toBe('error: Invalid --condition: unknown variable claims');
    const missing = await ops.run('policy', 'update', 'id-1', federationUuid(9), '--require-dpop');
    expect(missing).toMatchObject({ code: 1, stderr: `error: Policy ${federationUuid(9)} not found\n` });
    expect(JSON.parse((await ops.run('policy', 'show', 'id-1', policyId, '--json')).stdout).data).toMatchObject({ require_dpop: false, updated_at: null });
  });

  it('policy update --clear- flags remove a subject, a condition or a claim check, and the policy rules still hold', async () => {
    await createIssuer();
    await createPolicy('--subject', 'repo:acme/api:ref:refs/heads/main', '--condition', 'subject.startsWith("repo:acme/")', '--scopes-check', 'deploy', '--token-type-check', 'id');
    const cleared = await ops.run('policy', 'update', 'id-1', policyId, '--clear-condition', '--clear-scopes-check', '--json');
    expect(cleared).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(cleared.stdout).data).toMatchObject({
      subject: 'repo:acme/api:ref:refs/heads/main',
      condition: null,
      claim_checks: { scopes: null, token_type: 'id' },
    });
    // Subject or condition (docs/reference.md#federation-policies rule 1): the last of them cannot go.
    const lastRule = await ops.run('policy', 'update', 'id-1', policyId, '--clear-subject');
    expect(lastRule).toMatchObject({ code: 2, stdout: '' });
    const both = await ops.run('policy', 'update', 'id-1', policyId, '--subject', 'x', '--clear-subject');
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([2, 'error: --subject and --clear-subject exclude each other']);
    const replaced = await ops.run('policy', 'update', 'id-1', policyId, '--condition', 'subject == "repo:acme/api:ref:refs/heads/main"', '--clear-subject', '--clear-token-type-check', '--json');
    expect(JSON.parse(replaced.stdout).data).toMatchObject({ subject: null, condition: 'subject == "repo:acme/api:ref:refs/heads/main"', claim_checks: { scopes: null, token_type: null } });
  });

  it('a management key gives scope management', async () => {
    await createIssuer();
    const result = await createPolicy('--subject', 'repo:acme/ops:ref:refs/heads/main', '--key', managementKey, '--json');
    expect(JSON.parse(result.stdout).data).toMatchObject({ api_key_hash: managementKey, scope: 'management', enabled: true });
  });

  it('issuer delete deletes its policies', async () => {
    await createIssuer();
    await createPolicy('--subject', 'repo:acme/api:ref:refs/heads/main');
    expect((await ops.run('issuer', 'delete', 'id-1', issuerId)).stdout).toBe(`Deleted issuer ${issuerId} and its policies.\n`);
    expect((await ops.run('issuer', 'list', 'id-1')).stdout).toBe('No issuers.\n');
    expect((await ops.run('policy', 'list', 'id-1')).stdout).toBe('No policies.\n');
    expect(await ops.run('issuer', 'delete', 'id-1', issuerId)).toMatchObject({ code: 1, stderr: `error: Issuer ${issuerId} not found\n` });
  });

  it('on a deployed stack without POLICIES_TABLE, says which variable the commands need (exit 2)', async () => {
    const err: string[] = [];
    const code = await runOps(['issuer', 'list', 'id-1'], { out: () => undefined, err: (line) => err.push(line) }, async () => ({
      accounts: ops.accounts,
      catalog: ops.catalog,
    }));
    expect(code).toBe(2);
    expect(err[0]).toBe('error: issuer and policy commands on a deployed stack need POLICIES_TABLE (the stack output PoliciesTableName)');
  });
});
