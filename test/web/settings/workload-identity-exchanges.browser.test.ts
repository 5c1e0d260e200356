import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { proofKey, signProof, type ProofKey } from '../../support/dpop';
import { AUDIENCE, SCREENSHOTS, SUBJECT, describeInChromium, openSettingsPage, type SettingsPage } from '../../support/settings-page';

/**
 * The Workload identity settings page in a real browser (../../support/settings-page.ts): the
 * policy tester and the recent exchanges of a policy that requires DPoP, with exchanges made
 * at the token endpoint, then the policy edited to issue Bearer tokens too, and paused.
 */

describeInChromium('Workload identity policy tester and exchange events in Chromium', () => {
  let ui: SettingsPage;
  let page: Page;
  let policyId = '';
  /** The workload's DPoP key (RFC 9449), whose proofs bind the tokens it gets. */
  let workloadKey: ProofKey;

  /** A DPoP proof for the token exchange, as the workload sends it. */
  const proof = () => signProof(workloadKey, { htu: `${ui.service.runtime.baseUrl}/oauth/token` });
  /** A token exchange at the token endpoint, with a DPoP proof when one is given. */
  const exchange = (subjectToken: string, dpopProof?: string) =>
    ui.service.call('/oauth/token', {
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

  /** Adds, through the management API, the issuer and the DPoP-requiring policy the admin walkthrough builds on the page. */
  async function addPolicy(): Promise<string> {
    const key = ui.service.runtime.demo.keys.managementReadWrite;
    const issuer = await ui.service.call('/workload-identity/issuers', {
      method: 'POST',
      key,
      body: { name: 'CI identity provider', issuer_url: ui.idp.issuerUrl, jwks: { keys: ui.idp.keys.map((idpKey) => idpKey.publicJwk) }, check_jti: false },
    });
    expect(issuer.status).toBe(201);
    const policy = await ui.service.call('/workload-identity/policies', {
      method: 'POST',
      key,
      body: {
        name: 'Deploy from main',
        issuer_id: issuer.body.data.id,
        subject: SUBJECT,
        audience: AUDIENCE,
        condition: 'subject.startsWith("repo:acme/")',
        api_key_hash: hashApiKey(ui.service.runtime.demo.keys.workspace),
        enabled: true,
        claim_checks: { scopes: null, token_type: null },
        require_dpop: true,
      },
    });
    expect(policy.status).toBe(201);
    return policy.body.data.id;
  }

  beforeAll(async () => {
    [ui, workloadKey] = await Promise.all([openSettingsPage(), proofKey()]);
    page = ui.page;
    policyId = await addPolicy();
    await page.goto(ui.pageUrl);
    await ui.signIn(ui.service.runtime.demo.keys.managementReadWrite);
  }, 120_000);

  afterAll(() => ui?.close());

  it('runs the tester: a good token without a proof fails at DPoP, with a proof passes bound, the wrong audience fails at aud', async () => {
    const statuses = () => page.locator('#tester-steps li').evaluateAll((items) => items.map((item) => item.getAttribute('data-status')));
    await page.locator('#tester-policy').selectOption(policyId);
    await page.locator('#tester-token').fill(ui.token({ exp: Math.floor(Date.now() / 1000) + 600 }));
    await page.getByRole('button', { name: 'Run test' }).click();
    expect(await ui.textWhen('#tester-summary', /^(Pass|Fail)/)).toBe('Fail: the exchange would be refused at the step “DPoP proof (token binding)”.');
    expect(await statuses()).toEqual([...Array(9).fill('passed'), 'failed']);
    expect(await page.locator('#tester-steps li[data-step="dpop"] .detail').textContent()).toBe('The policy issues DPoP-bound tokens only: the exchange needs a DPoP proof');

    await page.locator('#tester-dpop-proof').fill(await proof());
    await page.getByRole('button', { name: 'Run test' }).click();
    expect(await ui.textWhen('#tester-summary', /^Pass/)).toMatch(/^Pass: the exchange would issue a DPoP-bound access token valid for (59\d|600) seconds\.$/);
    expect(await page.locator('#tester-binding').textContent()).toBe(`Token type: DPoP, bound to the proof key with thumbprint ${workloadKey.jkt}`);
    expect(await statuses()).toEqual(Array(10).fill('passed'));
    expect(await page.locator('#tester-steps li[data-step="dpop"] .step-name').textContent()).toBe('DPoP proof (token binding)');
    await page.screenshot({ path: join(SCREENSHOTS, 'workload-identity-desktop.png'), fullPage: true });

    await page.locator('#tester-token').fill(ui.token({ aud: 'https://wrong.example' }));
    await page.getByRole('button', { name: 'Run test' }).click();
    expect(await ui.textWhen('#tester-summary', /^Fail/)).toBe('Fail: the exchange would be refused at the step “Audience (aud)”.');
    const failed = page.locator('#tester-steps li[data-status="failed"]');
    expect(await failed.getAttribute('data-step')).toBe('aud');
    expect(await failed.locator('.detail').textContent()).toBe(`No aud value of the token ("https://wrong.example") equals the policy audience "${AUDIENCE}" exactly.`);
    expect(await page.locator('#tester-steps li[data-status="not_reached"]').count()).toBe(5);
    await page.locator('#tester').screenshot({ path: join(SCREENSHOTS, 'policy-tester-wrong-audience.png') });
    await page.locator('#tester-dpop-proof').fill('');
  });

  it('reads the recent exchanges of a policy, newest first, with the reason of each refusal and the binding of each token', async () => {
    const bound = await exchange(ui.token(), await proof());
    expect([bound.status, bound.body.token_type]).toEqual([200, 'DPoP']);
    expect((await exchange(ui.token())).status).toBe(400);
    expect((await exchange(ui.token({ aud: 'https://wrong.example' }), await proof())).status).toBe(400);

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
    expect((await ui.apiGet(`/workload-identity/policies/${policyId}`)).data.require_dpop).toBe(false);

    const bearer = await exchange(ui.token());
    expect([bearer.status, bearer.body.token_type]).toEqual([200, 'Bearer']);
    expect((await eventRows())[0]).toEqual(['issued', '', 'Bearer', SUBJECT]);
  });

  it('pauses the policy with the Enabled switch, and the tester names the policy state', async () => {
    const card = page.locator(`#policy-list li[data-policy-id="${policyId}"]`);
    await card.getByRole('switch', { name: 'Enabled' }).uncheck();
    await page.locator(`#policy-list li.paused[data-policy-id="${policyId}"]`).waitFor();
    expect((await ui.apiGet(`/workload-identity/policies/${policyId}`)).data.enabled).toBe(false);

    await page.locator('#tester-policy').selectOption(policyId);
    await page.locator('#tester-token').fill(ui.token());
    await page.getByRole('button', { name: 'Run test' }).click();
    await ui.textWhen('#tester-summary', /^(Pass|Fail)/);
    await expect(page.locator('#tester-steps li[data-status="failed"]').getAttribute('data-step')).resolves.toBe('policy_state');
    await expect(page.locator('#tester-steps li[data-status="failed"] .detail').textContent()).resolves.toBe('The policy "Deploy from main" is paused.');
  });

  it('ran no alert, broke no content security rule and threw no script error', () => {
    expect(ui.problems).toEqual([]);
  });
});
