import { connect } from 'node:net';
import { snapshotCatalog } from '../../../local/seed';
import { ROUTES, resourcePath } from '../../../lambdas/routes';
import { startTestService, type TestService } from '../../support/local-service';

/** Well formed, but nobody created it. */
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * Requests an attacker or a careless client sends, through real HTTP on the local service:
 * each gets a documented common error body (docs/reference.md#the-common-error-body) (or its normal answer), never a 500.
 */
describe('hostile and malformed requests on the local service', () => {
  let service: TestService;
  let demo: TestService['runtime']['demo'];
  let port: number;
  beforeAll(async () => {
    service = await startTestService();
    demo = service.runtime.demo;
    port = Number(new URL(service.runtime.baseUrl).port);
  });
  afterAll(async () => {
    await service.stop();
  });

  const error = (code: number, message: string, metadata?: Record<string, unknown>) => ({
    error: metadata ? { code, message, metadata } : { code, message },
  });

  /** Sends bytes as written: duplicate headers and oversized ones are out of fetch's reach. */
  function rawHttp(head: string): Promise<{ status: number; headers: string; body: any }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('error', reject);
      socket.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [headers = '', body = ''] = text.split('\r\n\r\n');
        resolve({ status: Number(headers.split(' ')[1]), headers, body: body === '' ? undefined : JSON.parse(body) });
      });
    });
  }

  describe('maps built from client input have no prototype', () => {
    it.each(['constructor=1', '__proto__=1', 'toString=x&hasOwnProperty=y', '__proto__[x]=1&constructor=2'])(
      'answers /oauth/jwks?%s normally',
      async (query) => {
        const response = await service.call(`/oauth/jwks?${query}`);
        expect(response.status).toBe(200);
        expect(response.body.keys).toHaveLength(1);
      },
    );

    it('answers headers named like Object members normally', async () => {
      const response = await service.call('/models/user?limit=1&constructor=1', {
        key: demo.keys.workspace,
        headers: { constructor: 'x', __proto__: 'y', toString: 'z', valueOf: 'w' },
      });
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(1);
    });

    it('does not take a query parameter named like an Object member for a sort order', async () => {
      const response = await service.call('/models/user?sort=constructor', { key: demo.keys.workspace });
      expect(response.status).toBe(400);
      expect(response.body.error.metadata).toEqual({ parameter: 'sort' });
    });
  });

  describe('identifiers that cannot exist', () => {
    const manage = (path: string, method = 'GET', body?: unknown) => service.call(path, { key: demo.keys.managementReadWrite, method, body });

    it.each([
      ['GET', '/workspaces/{1,100 characters}', `/workspaces/${'w'.repeat(1100)}`, 'Workspace not found'],
      ['GET', '/workspaces/{unknown UUID}', `/workspaces/${UNKNOWN_UUID}`, `Workspace ${UNKNOWN_UUID} not found`],
      ['GET', '/keys/{3,000 characters}', `/keys/${'k'.repeat(3000)}`, 'API key not found'],
      ['PATCH', '/keys/{3,000 hex digits}', `/keys/${'f'.repeat(3000)}`, 'API key not found'],
      ['DELETE', '/keys/{upper-case hash}', `/keys/${'F'.repeat(64)}`, 'API key not found'],
      ['GET', '/guardrails/{2,000 characters}', `/guardrails/${'g'.repeat(2000)}`, 'Guardrail not found'],
      ['DELETE', '/guardrails/{2,000 characters}', `/guardrails/${'g'.repeat(2000)}`, 'Guardrail not found'],
      ['POST', '/guardrails/{2,000 characters}/assignments/keys', `/guardrails/${'g'.repeat(2000)}/assignments/keys`, 'Guardrail not found'],
    ])('answers %s %s with 404', async (method, _label, path, message) => {
      const body = method === 'PATCH' ? { disabled: true } : method === 'POST' ? { key_hashes: ['a'.repeat(64)] } : undefined;
      const response = await manage(path, method, body);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(error(404, message));
    });

    it('answers ids of the wrong shape in a body with a 400 naming the field', async () => {
      const guardrail = await manage('/guardrails', 'POST', { name: 'ids' });
      expect(guardrail.status).toBe(201);
      const cases: [string, unknown, string, string][] = [
        ['/keys', { name: 'k', workspace_id: 'w'.repeat(1100) }, 'workspace_id', 'must be a lowercase UUID'],
        ['/keys', { name: 'k', kind: 'personal', user_id: '../../etc' }, 'user_id', 'must be a lowercase UUID'],
        ['/guardrails', { name: 'g', workspace_id: 'x' }, 'workspace_id', 'must be a lowercase UUID'],
        [
          `/guardrails/${guardrail.body.data.id}/assignments/keys`,
          { key_hashes: ['a'.repeat(64), 'b'.repeat(3000)] },
          'key_hashes',
          'item 1 must be a key hash (64 lowercase hexadecimal characters)',
        ],
        [
          `/guardrails/${guardrail.body.data.id}/assignments/keys/remove`,
          { key_hashes: ['c'.repeat(63)] },
          'key_hashes',
          'item 0 must be a key hash (64 lowercase hexadecimal characters)',
        ],
      ];
      for (const [path, body, field, reason] of cases) {
        const response = await manage(path, 'POST', body);
        expect({ path, status: response.status, body: response.body }).toEqual({
          path,
          status: 400,
          body: error(400, `Invalid ${field}: ${reason}`, { parameter: field }),
        });
      }
      const filtered = await manage(`/keys?workspace_id=${'w'.repeat(1100)}`);
      expect(filtered.status).toBe(400);
      expect(filtered.body).toEqual(error(400, 'Invalid workspace_id: must be a lowercase UUID', { parameter: 'workspace_id' }));
    });
  });

  describe('names and descriptions (the text rule)', () => {
    const manage = (path: string, method: string, body: unknown) => service.call(path, { key: demo.keys.managementReadWrite, method, body });
    const RULE = 'must not contain control characters or unpaired UTF-16 surrogates';

    it('refuses a lone surrogate or a NUL in every resource a request names, and stores nothing', async () => {
      const issuer = await manage('/workload-identity/issuers', 'POST', { name: 'text rule', issuer_url: 'https://text-rule.example.com' });
      expect(issuer.status).toBe(201);
      const guardrail = await manage('/guardrails', 'POST', { name: 'text rule' });
      const key = await manage('/keys', 'POST', { name: 'text rule' });
      const policy = {
        issuer_id: issuer.body.data.id,
        subject: 'repo:acme/app:ref:refs/heads/main',
        audience: 'https://modelgate.example',
        api_key_hash: key.body.data.hash,
      };
      const lists = ['/keys', '/workspaces', '/guardrails', '/workload-identity/issuers', '/workload-identity/policies'];
      const before = await Promise.all(lists.map(async (path) => (await manage(path, 'GET', undefined)).text));
      const cases: [string, string, Record<string, unknown>, string][] = [
        ['POST', '/keys', { name: 'ci \ud800' }, 'name'],
        ['POST', '/keys', { name: 'ci\u0000' }, 'name'],
        ['PATCH', `/keys/${key.body.data.hash}`, { name: '\udc00' }, 'name'],
        ['POST', '/workspaces', { name: 'team\u0000' }, 'name'],
        ['POST', '/workspaces', { name: 'team', description: 'a\ud83d' }, 'description'],
        ['POST', '/guardrails', { name: 'g\u0000' }, 'name'],
        ['PATCH', `/guardrails/${guardrail.body.data.id}`, { description: 'x\udfff' }, 'description'],
        ['POST', '/workload-identity/issuers', { name: 'idp\ud800', issuer_url: 'https://text-rule-2.example.com' }, 'name'],
        ['PATCH', `/workload-identity/issuers/${issuer.body.data.id}`, { name: 'idp\u001b[2J' }, 'name'],
        ['POST', '/workload-identity/policies', { ...policy, name: 'deploy\ud800' }, 'name'],
      ];
      for (const [method, path, body, field] of cases) {
        const response = await manage(path, method, body);
        expect({ method, path, status: response.status, body: response.body }).toEqual({
          method,
          path,
          status: 400,
          body: error(400, `Invalid ${field}: ${RULE}`, { parameter: field }),
        });
      }
      const after = await Promise.all(lists.map(async (path) => (await manage(path, 'GET', undefined)).text));
      expect(after).toEqual(before);
    });
  });

  describe('updates of nothing', () => {
    const manage = (path: string, method: string, body?: unknown) => service.call(path, { key: demo.keys.managementReadWrite, method, body });
    const UPDATES = ROUTES.filter((route) => route.method === 'PATCH' && route.body);

    it.each(UPDATES.map((route) => [resourcePath(route), route] as const))('PATCH %s refuses {} with a 400 on the body', async (_path, route) => {
      const path = resourcePath(route).replace('/api/v1', '').replace('{id}', UNKNOWN_UUID).replace('{hash}', 'f'.repeat(64));
      const response = await manage(path, 'PATCH', {});
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 400, metadata: { parameter: 'body' } });
    });

    it('refuses a guardrail update whose only field is a null enforce_zdr, and leaves updated_at alone', async () => {
      const created = await manage('/guardrails', 'POST', { name: 'unchanged' });
      const path = `/guardrails/${created.body.data.id}`;
      const before = (await manage(path, 'GET')).body.data;
      const response = await manage(path, 'PATCH', { enforce_zdr: null });
      expect([response.status, response.body]).toEqual([
        400,
        error(400, 'Invalid body: give at least one field to change (a null enforce_zdr changes nothing)', { parameter: 'body' }),
      ]);
      expect((await manage(path, 'GET')).body.data).toEqual(before);
      expect((await manage(path, 'PATCH', { enforce_zdr: null, name: 'renamed' })).status).toBe(200);
    });
  });

  describe('key expiry', () => {
    it.each([
      ['in the past', '2020-01-01T00:00:00Z', 'Invalid expires_at: must be in the future'],
      ['on a day that does not exist', '2030-02-31T00:00:00Z', 'Invalid expires_at: 2030-02-31T00:00:00Z is not a date and time that exists'],
      ['at an hour that does not exist', '2030-01-01T24:30:00Z', 'Invalid expires_at: 2030-01-01T24:30:00Z is not a date and time that exists'],
    ])('refuses an expiry %s with 400', async (_name, expiresAt, message) => {
      const response = await service.call('/keys', {
        key: demo.keys.managementReadWrite,
        method: 'POST',
        body: { name: 'expiring', expires_at: expiresAt },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(error(400, message, { parameter: 'expires_at' }));
    });

    it('accepts a real future instant', async () => {
      const response = await service.call('/keys', {
        key: demo.keys.managementReadWrite,
        method: 'POST',
        body: { name: 'expiring', expires_at: '2030-02-28T23:59:59Z' },
      });
      expect(response.status).toBe(201);
      expect(response.body.data.expires_at).toBe('2030-02-28T23:59:59Z');
    });
  });

  describe('JSON types', () => {
    const chat = (extra: Record<string, unknown>) =>
      service.call('/chat/completions', {
        key: demo.keys.workspace,
        method: 'POST',
        body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...extra },
      });

    it.each([
      [{ stream: 'true' }, 'stream', 'must be a boolean'],
      [{ stream: 1 }, 'stream', 'must be a boolean'],
      [{ temperature: '0.5' }, 'temperature', 'must be a number from 0 to 2'],
      [{ seed: 1.5 }, 'seed', 'must be an integer from -9007199254740991 to 9007199254740991'],
      [{ max_tokens: '16' }, 'max_tokens', 'must be an integer from 1 to 9007199254740991'],
    ])('answers %j with a 400 naming the field', async (extra, field, reason) => {
      const response = await chat(extra);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(error(400, `Invalid ${field}: ${reason}`, { parameter: field }));
    });

    it('still answers well-typed requests', async () => {
      const response = await chat({ stream: false, temperature: 0.2, seed: 7 });
      expect(response.status).toBe(200);
    });
  });

  describe('two credentials in one request', () => {
    const twoHeaders = (first: string, second: string) =>
      rawHttp(
        'GET /api/v1/models/user?limit=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
          `${first}: Bearer ${demo.keys.workspace}\r\n${second}: Bearer ${demo.keys.personal}\r\n\r\n`,
      );

    it.each([
      ['Authorization', 'authorization'],
      ['authorization', 'AUTHORIZATION'],
      ['Authorization', 'Authorization'],
    ])('answers %s and %s with 401', async (first, second) => {
      const response = await twoHeaders(first, second);
      expect(response.status).toBe(401);
      expect(response.body).toEqual(error(401, 'Multiple Authorization headers: send exactly one credential'));
    });

    it('refuses the same credential sent twice as well', async () => {
      const response = await rawHttp(
        'GET /api/v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n' +
          `Authorization: Bearer ${demo.keys.managementReadOnly}\r\nauthorization: Bearer ${demo.keys.managementReadOnly}\r\n\r\n`,
      );
      expect(response.status).toBe(401);
    });
  });

  it('answers a 100 KB header with the documented error body', async () => {
    const response = await rawHttp(
      `GET /api/v1/models/user HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Padding: ${'a'.repeat(100 * 1024)}\r\n\r\n`,
    );
    expect(response.status).toBe(431);
    expect(response.headers).toMatch(/\r\ncontent-type: application\/json\r\n/i);
    expect(response.body).toEqual(error(431, 'Request headers are larger than 10240 bytes'));
  });

  it('routes an EU caller to an EU endpoint when the hostname carries a trailing dot', async () => {
    const entry = snapshotCatalog().find(
      (e) =>
        !e.endpoints[0]!.regions.includes('eu') &&
        e.endpoints.some((endpoint) => endpoint.regions.includes('eu') && endpoint.provider_name !== e.endpoints[0]!.provider_name),
    )!;
    const euProvider = entry.endpoints.find((endpoint) => endpoint.regions.includes('eu'))!.provider_name;
    for (const host of ['eu.localhost', 'eu.localhost.', `EU.localhost.:${port}`]) {
      const response = await service.call('/chat/completions', {
        key: demo.keys.workspace,
        method: 'POST',
        host,
        body: { model: entry.model.id, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect({ host, status: response.status, provider: response.body.provider }).toEqual({ host, status: 200, provider: euProvider });
    }
  });
});
