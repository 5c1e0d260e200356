import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { connectToRuntime, type RuntimeStores } from './accounts';
import { startIdentityProvider, type TestIdentityProvider } from './identity-provider';
import { startTestService, type TestService } from './local-service';

/**
 * The Workload identity settings page in a real browser: Debian's Chromium driven through
 * playwright-core, against the local runtime over HTTP, with tokens from a real identity
 * provider. One browser, one runtime and one page per test file.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the browser tests save their screenshots. */
export const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'screenshots');
/** The audience the workload's tokens name. */
export const AUDIENCE = 'https://modelgate.example';
/** The subject the workload's tokens name. */
export const SUBJECT = 'repo:acme/app:ref:refs/heads/main';

const browserAvailable = existsSync(CHROMIUM);
if (!browserAvailable) {
  // Under CI a missing browser is a broken setup (.ci/run installs it), never a silent skip.
  if (process.env.CI === 'true') throw new Error(`Chromium is not installed at ${CHROMIUM}: the browser tests cannot run (apt-get install -y chromium)`);
  process.stderr.write(`\nNOTICE: ${CHROMIUM} not found; the settings page browser tests are skipped (apt-get install -y chromium to run them).\n\n`);
}

/** `describe` when Chromium is installed, `describe.skip` when it is not. */
export const describeInChromium = browserAvailable ? describe : describe.skip;

/** The settings page open in Chromium, the service and identity provider behind it, and what the tests do with them. */
export interface SettingsPage {
  service: TestService;
  stores: RuntimeStores;
  idp: TestIdentityProvider;
  page: Page;
  /** The page's address on the local runtime. */
  pageUrl: string;
  /** Alerts, CSP violations and script errors: each one fails the suite at the end. */
  problems: string[];
  /** A workload token from the identity provider, for SUBJECT and AUDIENCE unless `claims` say otherwise. */
  token(claims?: Record<string, unknown>): string;
  /** The body of a GET on the management API, with the read-write management key. */
  apiGet(path: string): Promise<any>;
  /** The text of `selector` once it shows `expected` (answers arrive asynchronously; the CPU is shared). */
  textWhen(selector: string, expected: string | RegExp): Promise<string | null>;
  /** Signs in on the sign-in form with `key`, by the keyboard. */
  signIn(key: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts the service, the identity provider and Chromium, and opens a tab (not yet on the page). */
export async function openSettingsPage(): Promise<SettingsPage> {
  const { chromium } = await import('playwright-core');
  const [service, idp, browser] = await Promise.all([
    startTestService(),
    startIdentityProvider(),
    chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    }),
  ]);
  const stores = connectToRuntime(service.runtime);
  const close = async () => {
    await browser.close();
    stores.destroy();
    await Promise.all([service.stop(), idp.close()]);
  };
  const pageUrl = service.runtime.baseUrl.replace(/\/api\/v1$/, '/settings/workload-identity');
  const problems: string[] = [];
  let page: Page;
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(pageUrl).origin });
    context.setDefaultTimeout(10_000);
    page = await context.newPage();
  } catch (error) {
    await close();
    throw error;
  }
  page.on('dialog', (dialog) => {
    problems.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of (400|401|403|404)/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  mkdirSync(SCREENSHOTS, { recursive: true });

  return {
    service,
    stores,
    idp,
    page,
    pageUrl,
    problems,
    token: (claims = {}) => idp.sign({ sub: SUBJECT, aud: AUDIENCE, ...claims }),
    apiGet: async (path) => (await service.call(path, { key: service.runtime.demo.keys.managementReadWrite })).body,
    async textWhen(selector, expected) {
      const locator = page.locator(selector).filter({ hasText: expected }).first();
      await locator.waitFor();
      return locator.textContent();
    },
    async signIn(key) {
      await page.getByLabel('Management key').fill(key);
      await page.keyboard.press('Enter');
      await page.getByText('Signed in with a').waitFor();
    },
    close,
  };
}
