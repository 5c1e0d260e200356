import { localRuntimeOptionsFromEnvironment } from '../../../local/environment';
import { startTestService, type TestService } from '../../support/local-service';

/** The local runtime started as `MODELGATE_ALLOW_LOOPBACK_ISSUERS=0 npm start`: hosts as a deployed stack judges them. */
describe('workload identity issuers when loopback hosts are not allowed', () => {
  let service: TestService;
  beforeAll(async () => {
    // What `npm start` reads from that environment (local/environment.ts); port and data folder are the suite's own.
    const { allowLoopbackIssuers } = localRuntimeOptionsFromEnvironment({ MODELGATE_ALLOW_LOOPBACK_ISSUERS: '0' });
    expect(allowLoopbackIssuers).toBe(false);
    service = await startTestService({ allowLoopbackIssuers });
  });
  afterAll(async () => {
    await service.stop();
  });

  const post = (body: unknown) =>
    service.call('/workload-identity/issuers', { key: service.runtime.demo.keys.managementReadWrite, method: 'POST', body });

  it.each([
    ['127.0.0.1', 'https://127.0.0.1:8443', '127.0.0.1'],
    ['127.1.2.3', 'https://127.1.2.3', '127.1.2.3'],
    ['a hex-written 127.0.0.1', 'https://0x7f.1', '127.0.0.1'],
    ['::1', 'https://[::1]:8443', '[::1]'],
    ['a mapped IPv4 loopback', 'https://[::ffff:127.0.0.1]', '[::ffff:7f00:1]'],
    ['localhost', 'https://localhost:8443', 'localhost'],
    ['a .localhost name', 'https://idp.localhost', 'idp.localhost'],
    // The host as a resolver sees it: case, one trailing dot and the port do not hide it.
    ['localhost with a trailing dot', 'https://localhost.', 'localhost.'],
    ['localhost with a trailing dot and a port', 'https://LocalHost.:8443', 'localhost.'],
    ['a .localhost name with a trailing dot', 'https://IdP.LOCALHOST.', 'idp.localhost.'],
    ['127.0.0.1 with a trailing dot', 'https://127.0.0.1.', '127.0.0.1'],
  ])('refuses %s in issuer_url and jwks_url with 400', async (_name, url, shown) => {
    const issuer = await post({ name: 'Dev IdP', issuer_url: url });
    expect([issuer.status, issuer.body]).toEqual([
      400,
      { error: { code: 400, message: `Invalid issuer_url: the host ${shown} is not a public address (loopback)`, metadata: { parameter: 'issuer_url' } } },
    ]);
    const jwks = await post({ name: 'Dev IdP', issuer_url: 'https://idp.example.com', jwks_url: `${url}/keys` });
    expect([jwks.status, jwks.body]).toEqual([
      400,
      { error: { code: 400, message: `Invalid jwks_url: the host ${shown} is not a public address (loopback)`, metadata: { parameter: 'jwks_url' } } },
    ]);
  });

  it.each([
    ['an empty label at the end', 'https://localhost..', 'localhost..'],
    ['an empty label inside', 'https://idp..localhost', 'idp..localhost'],
  ])('refuses a host with %s with 400', async (_name, url, shown) => {
    const issuer = await post({ name: 'Dev IdP', issuer_url: url });
    expect([issuer.status, issuer.body]).toEqual([
      400,
      { error: { code: 400, message: `Invalid issuer_url: the host ${shown} is not a valid host name`, metadata: { parameter: 'issuer_url' } } },
    ]);
  });

  it('still accepts a public host', async () => {
    expect((await post({ name: 'IdP', issuer_url: 'https://idp.example.com' })).status).toBe(201);
  });
});
