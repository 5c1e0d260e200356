import { ROUTES, resourcePath, type RouteDefinition } from '../../../lambdas/routes';
import { startTestService, type TestService } from '../../support/local-service';

/**
 * The query string rules of lambdas/openapi/request-validation.ts `queryValues`, over every
 * route that declares query parameters (the route registry's list, so a new listing is covered
 * when declared), through real HTTP: a declared parameter given twice is a 400 naming it, and an
 * empty integer (`limit=`) is a 400 rather than "not given".
 */
const QUERY_ROUTES = ROUTES.filter((route) => route.query?.length);

const integerParameters = (route: RouteDefinition) => route.query!.filter((parameter) => [parameter.schema.type ?? []].flat().includes('integer'));

const path = (route: RouteDefinition) => resourcePath(route).replace('/api/v1', '');

describe('query strings', () => {
  let service: TestService;
  let demo: TestService['runtime']['demo'];
  beforeAll(async () => {
    service = await startTestService();
    demo = service.runtime.demo;
  });
  afterAll(async () => {
    await service.stop();
  });

  const keyFor = (route: RouteDefinition) => (route.access === 'management-read' ? demo.keys.managementReadOnly : demo.keys.workspace);
  const badRequest = (parameter: string, reason: string) => ({ error: { code: 400, message: `Invalid ${parameter}: ${reason}`, metadata: { parameter } } });

  it('covers the catalog and every management listing', () => {
    expect(QUERY_ROUTES.map((route) => route.operationId)).toEqual(
      expect.arrayContaining(['getUserModels', 'listKeys', 'listWorkspaces', 'listGuardrails', 'listTokenExchangeEvents', 'getUserActivity']),
    );
  });

  describe.each(QUERY_ROUTES.map((route) => [`${route.method} ${resourcePath(route)}`, route] as const))('%s', (_name, route) => {
    it.each(route.query!.map((parameter) => [parameter.name]))('refuses %s given twice with a 400 naming it', async (name) => {
      const response = await service.call(`${path(route)}?${name}=1&${name}=2`, { key: keyFor(route) });
      expect([response.status, response.body]).toEqual([400, badRequest(name, 'must be given once')]);
    });

    const integers = integerParameters(route);
    if (integers.length) {
      it.each(integers.map((parameter) => [parameter.name]))('refuses an empty %s with a 400 naming it', async (name) => {
        const response = await service.call(`${path(route)}?${name}=`, { key: keyFor(route) });
        expect(response.status).toBe(400);
        expect(response.body.error).toEqual({ code: 400, message: expect.stringMatching(new RegExp(`^Invalid ${name}: must be an integer`)), metadata: { parameter: name } });
      });
    }
  });

  it('answers the repro: GET /workspaces?limit= no longer returns the whole list, and a repeated offset is no longer taken', async () => {
    const empty = await service.call('/workspaces?limit=', { key: demo.keys.managementReadOnly });
    expect([empty.status, empty.body]).toEqual([400, badRequest('limit', 'must be an integer from 1 to 100')]);
    const twice = await service.call('/guardrails?offset=0&offset=1&limit=1', { key: demo.keys.managementReadOnly });
    expect([twice.status, twice.body]).toEqual([400, badRequest('offset', 'must be given once')]);
  });

  it('still takes each parameter once, and offset=null for not given', async () => {
    const page = await service.call('/workspaces?offset=null&limit=1', { key: demo.keys.managementReadOnly });
    expect(page.status).toBe(200);
    const catalog = await service.call('/models/user?offset=0&limit=2&sort=newest', { key: demo.keys.workspace });
    expect([catalog.status, catalog.body.data.length]).toEqual([200, 2]);
  });
});
