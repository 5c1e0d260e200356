import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { AUDIENCE, SCREENSHOTS, SUBJECT, describeInChromium, openSettingsPage, type SettingsPage } from '../../support/settings-page';

/**
 * The Workload identity settings page in a real browser (../../support/settings-page.ts), walked
 * through an admin's work in order: signing in, issuers, policies and their editor, read-only
 * and unentitled keys, signing out. The policy tester, pausing a policy and the exchange
 * events are in workload-identity-exchanges.browser.test.ts.
 */

const XSS_NAME = '<img src=x onerror=alert(1)>';

describeInChromium('Workload identity settings page in Chromium', () => {
  let ui: SettingsPage;
  let page: Page;
  let policyId = '';

  beforeAll(async () => {
    ui = await openSettingsPage();
    page = ui.page;
  }, 120_000);

  afterAll(() => ui?.close());

  it('is served with a strict content security policy, no referrer and no framing', async () => {
    const response = await page.goto(ui.pageUrl);
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
    await ui.signIn(ui.service.runtime.demo.keys.managementReadWrite);
    await page.getByText('Workload identity federation is included in your plan.').waitFor();
    expect(await page.locator('#plan').textContent()).toBe('enterprise');
    const storage = await page.evaluate('({ session: Object.values(sessionStorage), local: localStorage.length, cookie: document.cookie, url: location.href })');
    expect(storage).toEqual({ session: [ui.service.runtime.demo.keys.managementReadWrite], local: 0, cookie: '', url: ui.pageUrl });
  });

  it('shows a save-time error next to the field it names, then adds an issuer', async () => {
    await page.locator('#issuer-name').fill('CI identity provider');
    await page.locator('#issuer-url').fill(ui.idp.issuerUrl.replace('https://', 'http://'));
    await page.getByRole('button', { name: 'Add issuer' }).click();
    expect(await ui.textWhen('#issuer-url-error', 'Invalid')).toBe('Invalid issuer_url: must be an https:// URL');
    expect(await page.locator('#issuer-url').getAttribute('aria-invalid')).toBe('true');

    await page.locator('#issuer-url').fill(ui.idp.issuerUrl);
    await page.locator('#issuer-jwks').fill(JSON.stringify({ keys: ui.idp.keys.map((key) => key.publicJwk) }));
    await page.getByRole('button', { name: 'Add issuer' }).click();
    const card = page.locator('#issuer-list li', { hasText: 'CI identity provider' });
    await card.waitFor();
    await expect(card.textContent()).resolves.toContain(ui.idp.issuerUrl);
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
    expect(ui.problems).toEqual([]);
  });

  it('builds a policy: acts-as keys with their scope, claim checks one at a time, a condition checked as it is typed, DPoP required', async () => {
    await page.getByRole('button', { name: 'New policy' }).click();
    await page.locator('#policy-name').fill('Deploy from main');
    await page.locator('#policy-issuer').selectOption({ label: `CI identity provider (${ui.idp.issuerUrl})` });
    await page.locator('#policy-subject').fill(SUBJECT);
    await page.locator('#policy-audience').fill(AUDIENCE);

    // docs/reference.md#federation-policies: workspace and management keys with the scope each gives; personal keys absent.
    const options = await page.locator('#policy-key option').allTextContents();
    expect(options.some((text) => /workspace key · scope inference/.test(text))).toBe(true);
    expect(options.some((text) => /management key · scope management/.test(text))).toBe(true);
    expect(options.some((text) => /personal/i.test(text))).toBe(false);
    await page.locator('#policy-key').selectOption(hashApiKey(ui.service.runtime.demo.keys.workspace));

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
    expect(await ui.textWhen('#policy-condition-error', 'Invalid')).toBe('Invalid condition: unknown variable subjekt');

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
    const [stored] = (await ui.apiGet('/workload-identity/policies')).data;
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
    expect((await ui.apiGet(`/workload-identity/policies/${policyId}`)).data.claim_checks).toEqual({ scopes: 'deploy', token_type: 'id' });

    await edit();
    await page.getByRole('button', { name: 'Remove the scopes claim check' }).click();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('#policy-list li', { hasText: 'token_type claim equals "id"' }).filter({ hasNotText: 'Scopes claim' }).waitFor();
    expect((await ui.apiGet(`/workload-identity/policies/${policyId}`)).data.claim_checks).toEqual({ scopes: null, token_type: 'id' });
  });

  it('deletes an issuer only after a confirmation that says what happens to policies and issued tokens', async () => {
    const card = page.locator('#issuer-list li', { hasText: 'CI identity provider' });
    await card.getByRole('button', { name: 'Delete issuer CI identity provider' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.textContent()).resolves.toContain('Its 1 policy is deleted with it, and new token exchanges naming it fail at once.');
    await expect(dialog.textContent()).resolves.toContain('Access tokens already issued stay valid until they expire (at most 15 minutes).');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await ui.apiGet('/workload-identity/issuers')).data).toHaveLength(2);

    await page.getByRole('button', { name: `Delete issuer ${XSS_NAME}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete issuer' }).click();
    await page.locator('#issuer-list .issuer-name', { hasText: 'onerror' }).waitFor({ state: 'detached' });
    expect((await ui.apiGet('/workload-identity/issuers')).data.map((issuer: { name: string }) => issuer.name)).toEqual(['CI identity provider']);
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

    await ui.signIn(ui.service.runtime.demo.keys.managementReadOnly);
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
    const { organization } = await ui.stores.accounts.createOrganization({ name: 'Small team', plan: 'pro' });
    const { secret } = await ui.stores.accounts.createApiKey(organization.id, { kind: 'management', name: 'Admin' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await ui.signIn(secret);
    await expect(page.locator('#entitlement').textContent()).resolves.toBe(
      'Workload identity federation requires the Business or Enterprise plan. Your organization is on the pro plan; upgrade to configure issuers and policies.',
    );
    expect(await page.locator('form, #issuers, #policies, #tester').count()).toBe(0);
  });

  it('refuses a key that is not a management key, on the sign-in form', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Management key').fill(ui.service.runtime.demo.keys.workspace);
    await page.keyboard.press('Enter');
    expect(await ui.textWhen('[role=alert]', 'cannot manage')).toBe('This key cannot manage the organization: Operation reserved for management keys.');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  it('deletes a policy after a confirmation that says issued tokens stay valid', async () => {
    // Signed out by the refused key above.
    await ui.signIn(ui.service.runtime.demo.keys.managementReadWrite);
    await page.getByRole('button', { name: 'Delete policy Deploy from main' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.textContent()).resolves.toContain('New token exchanges naming it fail at once.');
    await expect(dialog.textContent()).resolves.toContain('Access tokens already issued under it stay valid until they expire (at most 15 minutes).');
    await dialog.getByRole('button', { name: 'Delete policy' }).click();
    await page.locator('#policy-list', { hasText: 'No policies yet.' }).waitFor();
    expect((await ui.apiGet('/workload-identity/policies')).data).toEqual([]);
  });

  it('ran no alert, broke no content security rule and threw no script error', () => {
    expect(ui.problems).toEqual([]);
  });
});
