import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHttpsJsonFetcher, parseMaxAge, type HostLookup } from '../../../lambdas/federation/https-json-fetch';
import { startIdentityProvider, type TestIdentityProvider } from '../../support/identity-provider';

let idp: TestIdentityProvider;
let port: number;

beforeAll(async () => {
  idp = await startIdentityProvider({ hostname: 'localhost', jwksHeaders: { 'cache-control': 'public, max-age=900' } });
  port = Number(new URL(idp.issuerUrl).port);
});
afterAll(() => idp.close());

const trusting = (overrides: Partial<Parameters<typeof createHttpsJsonFetcher>[0]> = {}) =>
  createHttpsJsonFetcher({ allowLoopback: true, extraCaPems: [idp.caPem], ...overrides });
const resolvesTo =
  (...addresses: string[]): HostLookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/**
 * Requests the provider saw while `action` ran. The action is the test's assertion (an
 * `expect(...).rejects`): its failure fails the test.
 */
async function seen(action: () => Promise<unknown>): Promise<string[]> {
  const before = idp.requests.length;
  await action();
  return idp.requests.slice(before);
}

describe('createHttpsJsonFetcher against a real HTTPS identity provider', () => {
  it('fetches a JSON document over TLS trusted through an added CA, with its max-age', async () => {
    const document = await trusting()(idp.jwksUri);
    expect(document).toEqual({ body: idp.jwks(), maxAgeSeconds: 900 });
  });

  it('refuses a server whose certificate no trusted CA signed', async () => {
    await expect(createHttpsJsonFetcher({ allowLoopback: true })(idp.jwksUri)).rejects.toThrow(
      `${idp.jwksUri}: TLS certificate not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)`,
    );
  });

  it('trusts the CAs in NODE_EXTRA_CA_CERTS, also when more are added at run time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'extra-ca-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), idp.caPem);
      const script = `
        const { createHttpsJsonFetcher } = require('./lambdas/federation/https-json-fetch');
        const other = ${JSON.stringify(idp.ca.issueServerCertificate(['unused']).certPem)};
        Promise.all([
          createHttpsJsonFetcher({ allowLoopback: true })(${JSON.stringify(idp.jwksUri)}),
          createHttpsJsonFetcher({ allowLoopback: true, extraCaPems: [other] })(${JSON.stringify(idp.jwksUri)}),
        ]).then((docs) => console.log(docs.map((d) => d.body.keys.length).join(',')), (e) => { console.log(e.message); process.exit(1); });`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
        cwd: join(__dirname, '../../..'),
        env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
      });
      expect(stdout.trim()).toBe('2,2');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('asks for the extra CAs on every fetch, so a CA added later is trusted without a restart', async () => {
    const cas: string[] = [];
    const fetcher = createHttpsJsonFetcher({ allowLoopback: true, extraCaPems: () => cas });
    await expect(fetcher(idp.jwksUri)).rejects.toThrow('TLS certificate not trusted');
    cas.push(idp.caPem);
    expect((await fetcher(idp.jwksUri)).body).toEqual(idp.jwks());
  });

  it('does not follow a redirect', async () => {
    idp.respond('/moved', { status: 302, headers: { location: idp.jwksUri } });
    const requests = await seen(() => expect(trusting()(`https://localhost:${port}/moved`)).rejects.toThrow(
      `https://localhost:${port}/moved: answered 302 redirecting to ${idp.jwksUri}; redirects are not followed`,
    ));
    expect(requests).toEqual(['/moved']);
  });

  it.each([
    ['an error status', { status: 500 }, 'answered HTTP 500'],
    ['a body that is not JSON', { status: 200, body: '<html>' }, 'answer is not JSON'],
    ['a declared body over 256 KB', { status: 200, body: JSON.stringify({ keys: [], pad: 'x'.repeat(256 * 1024) }) }, 'document of 262164 bytes is larger than 256 KB'],
  ])('refuses %s', async (_name, response, problem) => {
    idp.respond('/odd', response);
    await expect(trusting()(`https://localhost:${port}/odd`)).rejects.toThrow(`https://localhost:${port}/odd: ${problem}`);
  });

  it('gives up after the deadline', async () => {
    // An answer that never comes: what ends the fetch is its own deadline.
    idp.respond('/slow', { never: true });
    await expect(trusting({ timeoutMs: 200 })(`https://localhost:${port}/slow`)).rejects.toThrow(`https://localhost:${port}/slow: no complete answer within 0.2 s`);
  });

  it('defaults to a 3 s deadline and a 256 KB cap', async () => {
    const { FETCH_TIMEOUT_MS, MAX_DOCUMENT_BYTES } = await import('../../../lambdas/federation/https-json-fetch');
    expect([FETCH_TIMEOUT_MS, MAX_DOCUMENT_BYTES]).toEqual([3000, 262144]);
  });

  // The port is known once the provider listens, after the table is built: the cases are functions of it.
  it.each([
    ['http://', (at: number) => `http://localhost:${at}/x`, (at: number) => `http://localhost:${at} is not an https:// address`],
    ['credentials', (at: number) => `https://user:pw@localhost:${at}/x`, (at: number) => `localhost:${at} carries credentials in the URL`],
  ])('refuses a URL with %s without connecting', async (_name, url, problem) => {
    const requests = await seen(() => expect(trusting()(url(port))).rejects.toThrow(problem(port)));
    expect(requests).toEqual([]);
  });
});

describe('createHttpsJsonFetcher: the address connected to (SSRF)', () => {
  it('refuses loopback by name and by literal unless allowed, before any request', async () => {
    const refusing = trusting({ allowLoopback: false });
    const requests = await seen(async () => {
      await expect(refusing(idp.jwksUri)).rejects.toThrow(/localhost resolves only to refused addresses: (127\.0\.0\.1|::1) \(loopback\)/);
      await expect(refusing(`https://127.0.0.1:${port}/.well-known/jwks.json`)).rejects.toThrow(`https://127.0.0.1:${port}: 127.0.0.1 is a loopback address, which is refused`);
      await expect(refusing(`https://[::1]:${port}/x`)).rejects.toThrow(`https://[::1]:${port}: ::1 is a loopback address, which is refused`);
    });
    expect(requests).toEqual([]);
  });

  it.each([
    ['the cloud metadata address', ['169.254.169.254'], '169.254.169.254 (link-local)'],
    ['a private address', ['10.0.0.7'], '10.0.0.7 (private)'],
    ['an IPv4-mapped IPv6 loopback', ['::ffff:127.0.0.1'], '::ffff:127.0.0.1 (loopback)'],
    ['an IPv4-mapped metadata address', ['::ffff:a9fe:a9fe'], '::ffff:a9fe:a9fe (link-local)'],
    ['a unique-local IPv6 address', ['fd12::1'], 'fd12::1 (private)'],
    ['a link-local IPv6 address', ['fe80::1'], 'fe80::1 (link-local)'],
    ['the unspecified address', ['0.0.0.0'], '0.0.0.0 (unspecified)'],
    ['only refused addresses among several', ['10.1.1.1', '192.168.0.9'], '10.1.1.1 (private), 192.168.0.9 (private)'],
  ])('refuses a name resolving to %s', async (_name, addresses, listed) => {
    const fetcher = trusting({ allowLoopback: false, resolveHost: resolvesTo(...addresses) });
    const requests = await seen(() =>
      expect(fetcher(idp.jwksUri)).rejects.toThrow(`${idp.jwksUri}: localhost resolves only to refused addresses: ${listed}`),
    );
    expect(requests).toEqual([]);
  });

  it.each([
    ['169.254.169.254', '169.254.169.254 is a link-local address'],
    ['[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe is a link-local address'],
    ['[fd00::1]', 'fd00::1 is a private address'],
    ['192.168.1.1', '192.168.1.1 is a private address'],
    ['2130706433', '127.0.0.1 is a loopback address'],
  ])('refuses the literal address %s even with loopback allowed for the local runtime', async (host, problem) => {
    const literal = trusting({ allowLoopback: host === '2130706433' ? false : true });
    await expect(literal(`https://${host}/latest/meta-data/`)).rejects.toThrow(problem);
  });

  it('connects to the allowed address when a name resolves to refused and allowed ones', async () => {
    const fetcher = trusting({ allowLoopback: true, resolveHost: resolvesTo('10.0.0.1', '127.0.0.1') });
    expect((await fetcher(idp.jwksUri)).body).toEqual(idp.jwks());
  });

  it('connects through an IPv4-mapped address when loopback is allowed (the check is on what is connected to)', async () => {
    const fetcher = trusting({ allowLoopback: true, resolveHost: resolvesTo('::ffff:127.0.0.1') });
    expect((await fetcher(idp.jwksUri)).body).toEqual(idp.jwks());
  });
});

describe('createHttpsJsonFetcher: bodies without a declared length', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const cert = idp.ca.issueServerCertificate(['localhost']);
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/big') {
        const chunk = 'x'.repeat(64 * 1024);
        for (let i = 0; i < 5; i++) res.write(chunk);
        res.end();
      } else if (req.url === '/drip') {
        res.write('{"keys":[');
        const timer = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(timer));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://localhost:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  it('stops reading a chunked body once it passes 256 KB', async () => {
    await expect(trusting()(`${base}/big`)).rejects.toThrow(`${base}/big: document is larger than 256 KB`);
  });

  it('holds a body that drips slowly to the same deadline', async () => {
    await expect(trusting({ timeoutMs: 300 })(`${base}/drip`)).rejects.toThrow(`${base}/drip: no complete answer within 0.3 s`);
  });
});

describe('parseMaxAge', () => {
  it.each([
    ['max-age=600', 600],
    ['public, max-age=86400, must-revalidate', 86400],
    ['s-maxage=10, max-age="30"', 30],
    ['no-store', null],
    ['max-age=abc', null],
    [undefined, null],
  ])('reads %s as %s', (header, expected) => {
    expect(parseMaxAge(header)).toBe(expected);
  });
});
