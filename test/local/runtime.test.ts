import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { API_BASE_PATH, ROUTES, resourcePath } from '../../lambdas/routes';
import { startTestService, type TestService } from '../support/local-service';

describe('local runtime', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.stop();
  });

  it('writes demo.json with one working key of each kind, readable only by its owner', async () => {
    const file = join(service.dataDir, 'demo.json');
    const demo = JSON.parse(readFileSync(file, 'utf8'));
    expect(Object.keys(demo).sort()).toEqual(['baseUrl', 'keys', 'organizationId', 'workspaceId']);
    expect(demo.baseUrl).toBe(service.runtime.baseUrl);
    expect(Object.keys(demo.keys).sort()).toEqual(['managementReadOnly', 'managementReadWrite', 'personal', 'workspace']);
    expect(statSync(file).mode & 0o077).toBe(0);
    for (const key of Object.values(demo.keys) as string[]) {
      expect(key).toMatch(/^sk-mg-v1-[0-9a-f]{64}$/);
      const response = await service.call('/models/user?limit=1', { key });
      expect(response.status).toBe(200);
    }
  });

  it('answers an unknown route with a 404 error body and a wrong method with 405', async () => {
    const missing = await service.call('/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: 404, message: 'Resource not found' } });
    const wrongMethod = await service.call('/oauth/jwks', { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
  });

  // RFC 9110 §9.3.2: the discovery documents, the key set, the document, the pages and every API GET.
  it.each(ROUTES.filter((route) => route.method === 'GET').map((route) => [resourcePath(route)]))('answers HEAD %s as its GET, without a body', async (resource) => {
    const path = resource.replace('{author}', 'openai').replace('{slug}', 'gpt-4o-mini').replace('{file}', 'workload-identity.css').replace('{hash}', 'f'.repeat(64)).replace('{id}', '00000000-0000-4000-8000-000000000000');
    const url = `${service.runtime.baseUrl.slice(0, -API_BASE_PATH.length)}${path}`;
    const headers = { Authorization: `Bearer ${service.runtime.demo.keys.managementReadOnly}` };
    const get = await fetch(url, { headers });
    const body = Buffer.from(await get.arrayBuffer());
    const head = await fetch(url, { method: 'HEAD', headers });
    expect([head.status, head.headers.get('content-type'), head.headers.get('content-length'), (await head.arrayBuffer()).byteLength]).toEqual([
      get.status,
      get.headers.get('content-type'),
      String(body.length),
      0,
    ]);
  });

  it('serves its OpenAPI document, version 1.0.0, without authentication', async () => {
    const response = await service.call('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(response.body).toMatchObject({ openapi: '3.1.0', info: { title: 'modelgate', version: '1.0.0' } });
    expect(Object.keys((response.body as { paths: object }).paths)).toContain('/api/v1/openapi.json');
    // Its server is the local origin: the paths are absolute below it.
    expect((response.body as { servers: unknown }).servers).toEqual([{ url: new URL(service.runtime.baseUrl).origin }]);
  });

  it('publishes the local signing key in the JWKS', async () => {
    const response = await service.call('/oauth/jwks');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(response.body.keys).toHaveLength(1);
    expect(response.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(Object.keys(response.body.keys[0]).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });
});
