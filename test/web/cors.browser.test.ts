import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startTestService, type TestService } from '../support/local-service';

/**
 * A web app on another origin calling the API from Chromium (Debian's, through playwright-core):
 * the browser's own CORS checks decide what its page may send and read. The service allows
 * one origin (`corsAllowedOrigins`); a page there lists models, streams a completion and reads
 * a 401 and a 429 with its `Retry-After`; a page on an origin not on the list reads nothing.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const browserAvailable = existsSync(CHROMIUM);
if (!browserAvailable) {
  // Under CI a missing browser is a broken setup (.ci/run installs it), never a silent skip.
  if (process.env.CI === 'true') throw new Error(`Chromium is not installed at ${CHROMIUM}: the browser tests cannot run (apt-get install -y chromium)`);
  process.stderr.write(`\nNOTICE: ${CHROMIUM} not found; the CORS browser tests are skipped (apt-get install -y chromium to run them).\n\n`);
}

/** A web app's origin: an HTTP server with one empty page, on a port of its own. */
async function startAppOrigin(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

(browserAvailable ? describe : describe.skip)('a page on another origin calling the API in Chromium (CORS)', () => {
  let service: TestService;
  let app: { origin: string; server: Server };
  let stranger: { origin: string; server: Server };
  let browser: Browser;
  let page: Page;
  let key: string;
  const problems: string[] = [];

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    [app, stranger] = await Promise.all([startAppOrigin(), startAppOrigin()]);
    [service, browser] = await Promise.all([
      // Two token exchanges a minute: the third is refused with a 429 the page must read.
      startTestService({ corsAllowedOrigins: [app.origin], exchangeRateLimit: 2 }),
      chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
      }),
    ]);
    key = service.runtime.demo.keys.workspace;
    page = await (await browser.newContext()).newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    await page.goto(`${app.origin}/`);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const origin of [app, stranger]) origin?.server.close();
    await service?.stop();
    expect(problems).toEqual([]);
  });

  it('lists models with a key, after the preflight its Authorization header needs', async () => {
    const listed = await page.evaluate(async ({ base, key }) => {
      const response = await fetch(`${base}/models?limit=3`, { headers: { Authorization: `Bearer ${key}` } });
      return { status: response.status, ids: ((await response.json()) as { data: { id: string }[] }).data.map((model) => model.id) };
    }, { base: service.runtime.baseUrl, key });
    expect(listed.status).toBe(200);
    expect(listed.ids).toEqual((await service.call('/models?limit=3', { key })).body.data.map((model: { id: string }) => model.id));
  });

  it('streams a completion, read as it comes, ending with its usage', async () => {
    const streamed = await page.evaluate(async ({ base, key }) => {
      const response = await fetch(`${base}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'streamed to a browser' }], stream: true }),
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      let reads = 0;
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        text += read.value;
        reads++;
      }
      return { status: response.status, type: response.headers.get('content-type'), text, reads };
    }, { base: service.runtime.baseUrl, key });
    expect([streamed.status, streamed.type]).toEqual([200, 'text/event-stream; charset=utf-8']);
    const events = streamed.text.split('\n\n').filter((event) => event.startsWith('data: {')).map((event) => JSON.parse(event.slice(6)));
    expect(events.map((event) => event.choices[0]?.delta?.content ?? '').join('')).toBe('streamed to a browser');
    expect(events.at(-1).usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 4, is_byok: false });
    expect(streamed.text.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('reads a 401, its body and its WWW-Authenticate challenge', async () => {
    const refused = await page.evaluate(async ({ base }) => {
      const response = await fetch(`${base}/models/user`, { headers: { Authorization: 'Bearer sk-mg-v1-unknown' } });
      return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.json() };
    }, { base: service.runtime.baseUrl });
    expect(refused).toEqual({
      status: 401,
      challenge: `Bearer error="invalid_token", resource_metadata="${service.runtime.baseUrl}/.well-known/oauth-protected-resource"`,
      body: { error: { code: 401, message: 'Invalid API key' } },
    });
  });

  it('reads a 429 of the token endpoint, its Retry-After and the request id', async () => {
    const answers = await page.evaluate(async ({ base }) => {
      const seen: { status: number; retryAfter: string | null; requestId: string | null; error: string }[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${base}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password' }) });
        seen.push({ status: response.status, retryAfter: response.headers.get('retry-after'), requestId: response.headers.get('x-request-id'), error: ((await response.json()) as { error: string }).error });
      }
      return seen;
    }, { base: service.runtime.baseUrl });
    expect(answers.map(({ status, error }) => [status, error])).toEqual([
      [400, 'unsupported_grant_type'],
      [400, 'unsupported_grant_type'],
      [429, 'invalid_request'],
    ]);
    expect(Number(answers[2]!.retryAfter)).toBeGreaterThan(0);
    expect(answers.every(({ requestId }) => requestId !== null && requestId.length > 0)).toBe(true);
  });

  it('lets a page on an origin not on the list read nothing', async () => {
    const other = await (await browser.newContext()).newPage();
    await other.goto(`${stranger.origin}/`);
    const outcome = await other.evaluate(async ({ base, key }) => {
      try {
        await fetch(`${base}/models?limit=1`, { headers: { Authorization: `Bearer ${key}` } });
        return 'read';
      } catch (error) {
        return (error as Error).name;
      }
    }, { base: service.runtime.baseUrl, key });
    expect(outcome).toBe('TypeError');
    await other.close();
  });
});
