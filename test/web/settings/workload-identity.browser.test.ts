import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { connectToRuntime, type RuntimeStores } from '../../support/accounts';
import { proofKey, signProof, type ProofKey } from '../../support/dpop';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * The Workload identity settings page in a real browser: Debian's Chromium driven through
 * playwright-core, against the local runtime over HTTP, with tokens from a real identity
 * provider. One browser, one runtime, one page walked through an admin's work in order.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = join(__dirname, '..', '..', '..', 'test-output', 'screenshots');
const AUDIENCE = 'https://modelgate.example';
const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
const XSS_NAME = '<img src=x onerror=alert(1)>';

const browserAvailable = existsSync(CHROMIUM);
if (!browserAvailable) {
  // Under CI a missing browser is a broken setup (.ci/run installs it), never a silent skip.
  if (process.env.CI === 'true') throw new Error(`Chromium is not installed at ${CHROMIUM}: the browser tests cannot run (apt-get install -y chromium)`);
  process.stderr.write(`\nNOTICE: ${CHROMIUM} not found; the settings page browser tests are skipped (apt-get install -y chromium to run them).\n\n`);
}

(browserAvailable ? describe : describe.skip)('Workload identity settings page in Chromium', () => {
  let service: TestService;
  let stores: RuntimeStores;
  let idp: TestIdentityProvider;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let pageUrl: string;
  /** Alerts, CSP violations and script errors: each one fails the suite at the end. */
  const problems: string[] = [];
  let policyId = '';
  /** The workload's DPoP key (RFC 9449), whose proofs bind the tokens it gets. */
  let workloadKey: ProofKey;

  const token = (claims: Record<string, unknown> = {}) => idp.sign({ sub: SUBJECT, aud: AUDIENCE, ...claims });
  /** A DPoP proof for the token exchange, as the workload sends it. */
  const proof = () => signProof(workloadKey, { htu: `${service.runtime.baseUrl}/oauth/token` });
  const exchange = (subjectToken: string, dpopProof?: string) =>
    service.call('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(dpopProof ? { DPoP: dpopProof } : {}) },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        subject_token: subjectToken,
        federation_policy_id: policyId,
      }).toString(),
    });
  /** The cells of the exchange events table from Outcome to Subject, newest first. */
  const eventRows = async () => {
    await page.getByRole('button', { name: 'Show exchanges of policy Deploy from main' }).click();
    await page.locator('#events-table').waitFor();
    return (await page.evaluate(
      "Array.from(document.querySelectorAll('#events-table tbody tr')).map((row) => Array.from(row.children).slice(1, 5).map((cell) => cell.textContent))",
    )) as string[][];
  };
  const apiGet = async (path: string) => (await service.call(path, { key: service.runtime.demo.keys.managementReadWrite })).body;

  /** The text of `selector` once it shows `expected` (answers arrive asynchronously; the CPU is shared). */
  async function textWhen(selector: string, expected: string | RegExp): Promise<string | null> {
    const locator = page.locator(selector).filter({ hasText: expected }).first();
    await locator.waitFor();
    return locator.textContent();
  }

  async function signIn(key: string): Promise<void> {
    await page.getByLabel('Management key').fill(key);
    await page.keyboard.press('Enter');
    await page.getByText('Signed in with a').waitFor();
  }

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    [service, idp, browser, workloadKey] = await Promise.all([
      startTestService(),
      startIdentityProvider(),
      chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      }),
      proofKey(),
    ]);
    stores = connectToRuntime(service.runtime);
    pageUrl = service.runtime.baseUrl.replace(/\/api\/v1$/, '/settings/workload-identity');
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(pageUrl).origin });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
    page.on('dialog', (dialog) => {
      problems.push(`${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of (400|401|403|404)/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    stores?.destroy();
    await Promise.all([service?.stop(), idp?.close()]);
  });

  it('is served with a strict content security policy, no referrer and no framing', async () => {
    const response = await page.goto(pageUrl);
    expect(response!.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toMatch(/^default-src 'self';/);
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(headers['referrer-policy']).toBe('no-referrer');
    // Nothing runs inline: every script is the page's own file.
    expect(await page.locator('script:not([src])').count()).toBe(0);
    expect(await page.locator('style').count()).toBe(0);
  });

  it('signs in with the keyboard and keeps the key in sessionStorage only', async () => {
    await expect(page.getByLabel('Management key').evaluate((element) => element === element.ownerDocument.activeElement)).resolves.toBe(true);
    await signIn(service.runtime.demo.keys.managementReadWrite);
    await page.getByText('Workload identity federation is included in your plan.').waitFor();
    expect(await page.locator('#plan').textContent()).toBe('enterprise');
    const storage = await page.evaluate('({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie, url: location.href })');
    expect(storage).toEqual({ session: [service.runtime.demo.keys.managementReadWrite], local: 0, cookie: '', url: pageUrl });
  });

  it('shows a save-time error next to the field it names, then adds an issuer', async () => {
    await page.locator('#issuer-name').fill('CI identity provider');
    await page.locator('#issuer-url').fill(idp.issuerUrl.replace('https://', 'http://'));
    await page.getByRole('button', { name: 'Add issuer' }).click();
    expect(await textWhen('#issuer-url-error', 'Invalid')).toBe('Invalid issuer_url: must be an https:// URL');
    expect(await page.locator('#issuer-url').getAttribute('aria-invalid')).toBe('true');

    await page.locator('#issuer-url').fill(idp.issuerUrl);
    await page.locator('#issuer-jwks').fill(JSON.stringify({ keys: idp.keys.map((key) => key.publicJwk) }));
    await page.getByRole('button', { name: 'Add issuer' }).click();
    const card = page.locator('#issuer-list li', { hasText: 'CI identity provider' });
    await card.waitFor();
    await expect(card.textContent()).resolves.toContain(idp.issuerUrl);
    await expect(card.textContent()).resolves.toContain('Inline key set (2 keys)');
  });

  it('shows an issuer named like markup as those characters, running nothing', async () => {
    await page.locator('#issuer-name').fill(XSS_NAME);
    await page.locator('#issuer-url').fill('https://xss.example.com');
    await page.getByRole('button', { name: 'Add issuer' }).click();
    const heading = page.locator('#issuer-list .issuer-name', { hasText: 'onerror' });
    await heading.waitFor();
    expect(await heading.textContent()).toBe(XSS_NAME);
    expect(await page.locator('#issuer-list img').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('builds a policy: acts-as keys with their scope, claim checks one at a time, a condition checked as it is typed, DPoP required', async () => {
    await page.getByRole('button', { name: 'New policy' }).click();
    await page.locator('#policy-name').fill('Deploy from main');
    await page.locator('#policy-issuer').selectOption({ label: `CI identity provider (${idp.issuerUrl})` });
    await page.locator('#policy-subject').fill(SUBJECT);
    await page.locator('#policy-audience').fill(AUDIENCE);

    // docs/reference.md#federation-policies: workspace and management keys with the scope each gives; personal keys absent.
    const options = await page.locator('#policy-key option').allTextContents();
    expect(options.some((text) => /workspace key · scope inference/.test(text))).toBe(true);
    expect(options.some((text) => /management key · scope management/.test(text))).toBe(true);
    expect(options.some((text) => /personal/i.test(text))).toBe(false);
    await page.locator('#policy-key').selectOption(hashApiKey(service.runtime.demo.keys.workspace));

    // docs/reference.md#federation-policies rule 3: the add menu offers only the checks not yet present.
    const menu = () => page.locator('#claim-check-add option').allTextContents();
    await expect(menu()).resolves.toEqual(['Scopes claim contains', 'token_type claim equals']);
    await page.getByRole('button', { name: 'Add claim check' }).click();
    await page.locator('#claim-check-scopes').fill('deploy');
    await expect(menu()).resolves.toEqual(['token_type claim equals']);
    await page.getByRole('button', { name: 'Add claim check' }).click();
    expect(await page.locator('#claim-check-add').count()).toBe(0);
    await page.getByRole('button', { name: 'Remove the scopes claim check' }).click();
    await expect(menu()).resolves.toEqual(['Scopes claim contains']);
    await expect(page.locator('#claim-check-token_type').count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'Remove the token_type claim check' }).click();
    await expect(menu()).resolves.toEqual(['Scopes claim contains', 'token_type claim equals']);

    // Checked through the API as it is typed (debounced), with the checker's own message.
    await page.locator('#policy-condition').fill('subjekt.startsWith("repo:acme/")');
    await page.getByText('Not valid: unknown variable subjekt').waitFor();
    await page.getByRole('button', { name: 'Create policy' }).click();
    expect(await textWhen('#policy-condition-error', 'Invalid')).toBe('Invalid condition: unknown variable subjekt');

    await page.locator('#policy-condition').fill('subject.startsWith("repo:acme/")');
    await page.getByText('The condition is valid.').waitFor();

    // RFC 9449: off by default, explained in one sentence beside the box.
    const requireDpop = page.getByRole('checkbox', { name: 'Require DPoP' });
    expect(await requireDpop.isChecked()).toBe(false);
    await expect(requireDpop.getAttribute('aria-describedby').then((id) => page.locator(`#${id}`).textContent())).resolves.toBe(
      'Issue only sender-constrained tokens: an exchange must carry a DPoP proof (RFC 9449), and the token is then useless without the workload’s private key.',
    );
    await requireDpop.check();
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.locator('#policy-list .policy-name', { hasText: 'Deploy from main' }).waitFor();
    const [stored] = (await apiGet('/workload-identity/policies')).data;
    expect(stored).toMatchObject({
      name: 'Deploy from main',
      subject: SUBJECT,
      audience: AUDIENCE,
      condition: 'subject.startsWith("repo:acme/")',
      scope: 'inference',
      enabled: true,
      claim_checks: { scopes: null, token_type: null },
      require_dpop: true,
    });
    policyId = stored.id;
    expect(await page.locator(`#policy-list li[data-policy-id="${policyId}"] .policy-dpop`).textContent()).toBe('Required: only DPoP-bound tokens are issued');
  });

  it('shows the policy id under its name and copies it', async () => {
    const card = page.locator(`#policy-list li[data-policy-id="${policyId}"]`);
    expect(await card.locator('.policy-id').textContent()).toBe(policyId);
    await card.getByRole('button', { name: 'Copy the id of policy Deploy from main' }).click();
    await card.getByText('Copied').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(policyId);
  });

  it('runs the tester: a good token without a proof fails at DPoP, with a proof passes bound, the wrong audience fails at aud', async () => {
    const statuses = () => page.locator('#tester-steps li').evaluateAll((items) => items.map((item) => item.getAttribute('data-status')));
    await page.locator('#tester-policy').selectOption(policyId);
    await page.locator('#tester-token').fill(token({ exp: Math.floor(Date.now() / 1000) + 600 }));
    await page.getByRole('button', { name: 'Run test' }).click();
    expect(await textWhen('#tester-summary', /^(Pass|Fail)/)).toBe('Fail: the exchange would be refused at the step “DPoP proof (token binding)”.');
    expect(await statuses()).toEqual([...Array(9).fill('passed'), 'failed']);
    expect(await page.locator('#tester-steps li[data-step="dpop"] .detail').textContent()).toBe('The policy issues DPoP-bound tokens only: the exchange needs a DPoP proof');

    await page.locator('#tester-dpop-proof').fill(await proof());
    await page.getByRole('button', { name: 'Run test' }).click();
    expect(await textWhen('#tester-summary', /^Pass/)).toMatch(/^Pass: the exchange would issue a DPoP-bound access token valid for (59[89]|600) seconds\.$/);
    expect(await page.locator('#tester-binding').textContent()).toBe(`Token type: DPoP, bound to the proof key with thumbprint ${workloadKey.jkt}`);
    expect(await statuses()).toEqual(Array(10).fill('passed'));
    expect(await page.locator('#tester-steps li[data-step="dpop"] .step-name').textContent()).toBe('DPoP proof (token binding)');
    await page.screenshot({ path: join(SCREENSHOTS, 'workload-identity-desktop.png'), fullPage: true });

    await page.locator('#tester-token').fill(token({ aud: 'https://wrong.example' }));
    await page.getByRole('button', { name: 'Run test' }).click();
    expect(await textWhen('#tester-summary', /^Fail/)).toBe('Fail: the exchange would be refused at the step “Audience (aud)”.');
    const failed = page.locator('#tester-steps li[data-status="failed"]');
    expect(await failed.getAttribute('data-step')).toBe('aud');
    expect(await failed.locator('.detail').textContent()).toBe(`No aud value of the token ("https://wrong.example") equals the policy audience "${AUDIENCE}" exactly.`);
    expect(await page.locator('#tester-steps li[data-status="not_reached"]').count()).toBe(5);
    await page.locator('#tester').screenshot({ path: join(SCREENSHOTS, 'policy-tester-wrong-audience.png') });
    await page.locator('#tester-dpop-proof').fill('');
  });

  it('reads the recent exchanges of a policy, newest first, with the reason of each refusal and the binding of each token', async () => {
    const bound = await exchange(token(), await proof());
    expect([bound.status, bound.body.token_type]).toEqual([200, 'DPoP']);
    expect((await exchange(token())).status).toBe(400);
    expect((await exchange(token({ aud: 'https://wrong.example' }), await proof())).status).toBe(400);

    const binding = `DPoP-bound to ${workloadKey.jkt.slice(0, 12)}…`;
    expect(await eventRows()).toEqual([
      ['refused', 'Audience (aud) mismatch aud_mismatch', `DPoP proof key ${workloadKey.jkt.slice(0, 12)}…`, SUBJECT],
      ['refused', 'DPoP proof required by the policy dpop_proof_required', '', SUBJECT],
      ['issued', '', binding, SUBJECT],
    ]);
    expect(await page.locator('#events-table td.token-binding', { hasText: binding }).getAttribute('title')).toBe(workloadKey.jkt);
    await page.locator('#events').screenshot({ path: join(SCREENSHOTS, 'exchange-events.png') });
  });

  it('edits a policy to stop requiring DPoP: the card says so, and an exchange without a proof gets a Bearer token', async () => {
    await page.getByRole('button', { name: 'Edit policy Deploy from main' }).click();
    await page.locator('#policy-form').waitFor();
    const requireDpop = page.getByRole('checkbox', { name: 'Require DPoP' });
    expect(await requireDpop.isChecked()).toBe(true);
    await requireDpop.uncheck();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator(`#policy-list li[data-policy-id="${policyId}"] .policy-dpop[data-required="false"]`).waitFor();
    expect(await page.locator(`#policy-list li[data-policy-id="${policyId}"] .policy-dpop`).textContent()).toBe(
      'Optional: Bearer tokens without a proof, bound tokens with one',
    );
    expect((await apiGet(`/workload-identity/policies/${policyId}`)).data.require_dpop).toBe(false);

    const bearer = await exchange(token());
    expect([bearer.status, bearer.body.token_type]).toEqual([200, 'Bearer']);
    expect((await eventRows())[0]).toEqual(['issued', '', 'Bearer', SUBJECT]);
  });

  it('edits a policy: claim checks added and removed independently, each saved as its own field', async () => {
    const edit = async () => {
      await page.getByRole('button', { name: 'Edit policy Deploy from main' }).click();
      await page.locator('#policy-form').waitFor();
    };
    await edit();
    expect(await page.locator('#policy-name').inputValue()).toBe('Deploy from main');
    expect(await page.locator('#policy-condition').inputValue()).toBe('subject.startsWith("repo:acme/")');
    await page.getByRole('button', { name: 'Add claim check' }).click();
    await page.locator('#claim-check-scopes').fill('deploy');
    await page.getByRole('button', { name: 'Add claim check' }).click();
    await page.locator('#claim-check-token_type').fill('id');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#policy-list li', { hasText: 'Scopes claim contains "deploy"; token_type claim equals "id"' }).waitFor();
    expect((await apiGet(`/workload-identity/policies/${policyId}`)).data.claim_checks).toEqual({ scopes: 'deploy', token_type: 'id' });

    await edit();
    await page.getByRole('button', { name: 'Remove the scopes claim check' }).click();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#policy-list li', { hasText: 'token_type claim equals "id"' }).filter({ hasNotText: 'Scopes claim' }).waitFor();
    expect((await apiGet(`/workload-identity/policies/${policyId}`)).data.claim_checks).toEqual({ scopes: null, token_type: 'id' });
  });

  it('pauses the policy with the Enabled switch, and the tester names the policy state', async () => {
    const card = page.locator(`#policy-list li[data-policy-id="${policyId}"]`);
    await card.getByRole('switch', { name: 'Enabled' }).uncheck();
    await page.locator(`#policy-list li.paused[data-policy-id="${policyId}"]`).waitFor();
    expect((await apiGet(`/workload-identity/policies/${policyId}`)).data.enabled).toBe(false);

    await page.locator('#tester-policy').selectOption(policyId);
    await page.locator('#tester-token').fill(token());
    await page.getByRole('button', { name: 'Run test' }).click();
    await textWhen('#tester-summary', /^(Pass|Fail)/);
    await expect(page.locator('#tester-steps li[data-status="failed"]').getAttribute('data-step')).resolves.toBe('policy_state');
    await expect(page.locator('#tester-steps li[data-status="failed"] .detail').textContent()).resolves.toBe('The policy "Deploy from main" is paused.');
  });

  it('deletes an issuer only after a confirmation that says what happens to policies and issued tokens', async () => {
    const card = page.locator('#issuer-list li', { hasText: 'CI identity provider' });
    await card.getByRole('button', { name: 'Delete issuer CI identity provider' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.textContent()).resolves.toContain('Its 1 policy is deleted with it, and new token exchanges naming it fail at once.');
    await expect(dialog.textContent()).resolves.toContain('Access tokens already issued stay valid until they expire (at most 15 minutes).');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await apiGet('/workload-identity/issuers')).data).toHaveLength(2);

    await page.getByRole('button', { name: `Delete issuer ${XSS_NAME}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete issuer' }).click();
    await page.locator('#issuer-list .issuer-name', { hasText: 'onerror' }).waitFor({ state: 'detached' });
    expect((await apiGet('/workload-identity/issuers')).data.map((issuer: { name: string }) => issuer.name)).toEqual(['CI identity provider']);
  });

  it('labels every control', async () => {
    const unlabelled = await page.locator('input, select, textarea').evaluateAll((controls) =>
      controls.filter((control) => ((control as unknown as { labels: unknown[] | null }).labels?.length ?? 0) === 0 && !control.getAttribute('aria-label')).map((control) => control.outerHTML),
    );
    expect(unlabelled).toEqual([]);
  });

  it('signs out, forgetting the key; a read-only key sees everything with the write controls disabled', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await signIn(service.runtime.demo.keys.managementReadOnly);
    await page.locator('#read-only-note').waitFor();
    expect(await page.getByRole('button', { name: 'Add issuer' }).isDisabled()).toBe(true);
    expect(await page.locator('#issuer-name').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'New policy' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete issuer CI identity provider' }).isDisabled()).toBe(true);
    expect(await page.getByRole('switch', { name: 'Enabled' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete policy Deploy from main' }).isDisabled()).toBe(true);
    // Reading and testing need no write access.
    expect(await page.locator('#policy-list .policy-name').allTextContents()).toEqual(['Deploy from main']);
    expect(await page.getByRole('button', { name: 'Run test' }).isDisabled()).toBe(false);
  });

  it('fits a 360 px wide screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 360, height: 800 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.screenshot({ path: join(SCREENSHOTS, 'workload-identity-360px.png'), fullPage: true });
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  it('tells an organization without the entitlement that Business or Enterprise is required, and offers nothing else', async () => {
    const { organization } = await stores.accounts.createOrganization({ name: 'Small team', plan: 'pro' });
    const { secret } = await stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(secret);
    await expect(page.locator('#entitlement').textContent()).resolves.toBe(
      'Workload identity federation requires the Business or Enterprise plan. Your organization is on the pro plan; upgrade to configure issuers and policies.',
    );
    expect(await page.locator('form, #issuers, #policies, #tester').count()).toBe(0);
  });

  it('refuses a key that is not a management key, on the sign-in form', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key').fill(service.runtime.demo.keys.workspace);
    await page.keyboard.press('Enter');
    expect(await textWhen('[role=alert]', 'cannot manage')).toBe('This key cannot manage the organization: Operation reserved for management keys.');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('deletes a policy after a confirmation that says issued tokens stay valid', async () => {
    // Signed out by the refused key above.
    await signIn(service.runtime.demo.keys.managementReadWrite);
    await page.getByRole('button', { name: 'Delete policy Deploy from main' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.textContent()).resolves.toContain('New token exchanges naming it fail at once.');
    await expect(dialog.textContent()).resolves.toContain('Access tokens already issued under it stay valid until they expire (at most 15 minutes).');
    await dialog.getByRole('button', { name: 'Delete policy' }).click();
    await page.locator('#policy-list', { hasText: 'No policies yet.' }).waitFor();
    expect((await apiGet('/workload-identity/policies')).data).toEqual([]);
  });

  it('ran no alert, broke no content security rule and threw no script error', () => {
    expect(problems).toEqual([]);
  });
});
