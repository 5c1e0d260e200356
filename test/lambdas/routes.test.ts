import { API_BASE_PATH, PAGES_BASE_PATH, ROUTES, matchRoute, resourcePath } from '../../lambdas/routes';

describe('route table', () => {
  it('has no duplicate method and path', () => {
    const seen = new Set(ROUTES.map((r) => `${r.method} ${resourcePath(r)}`));
    expect(seen.size).toBe(ROUTES.length);
  });

  it('matches static segments before parameters, as API Gateway does, and passes parameters on as the client encoded them', () => {
    expect(matchRoute('GET', '/api/v1/models/user')).toMatchObject({ route: { function: 'catalog', path: '/models/user' }, pathParameters: {} });
    expect(matchRoute('GET', '/api/v1/models/openai/gpt-4o%3Afree/endpoints')).toMatchObject({
      resource: '/api/v1/models/{author}/{slug}/endpoints',
      pathParameters: { author: 'openai', slug: 'gpt-4o%3Afree' },
    });
    expect(matchRoute('POST', '/api/v1/guardrails/g1/assignments/keys/remove')).toMatchObject({ pathParameters: { id: 'g1' } });
  });

  it('tells a missing resource from a method the resource does not allow', () => {
    expect(matchRoute('GET', '/api/v1/nothing')).toBeUndefined();
    expect(matchRoute('GET', '/api/v2/models/user')).toBeUndefined();
    expect(matchRoute('GET', '/api/v1/keys/')).toBeUndefined();
    expect(matchRoute('PUT', '/api/v1/keys/abc')).toEqual({ allowed: ['GET', 'PATCH', 'DELETE'] });
  });

  it('keeps every API route under /api/v1 and only the settings page function outside it', () => {
    const outside = ROUTES.filter((route) => !resourcePath(route).startsWith(`${API_BASE_PATH}/`));
    expect(outside.map((route) => [route.method, resourcePath(route), route.function])).toEqual([
      ['GET', '/settings/workload-identity', 'settingsPage'],
      ['GET', '/settings/workload-identity/assets/{file}', 'settingsPage'],
    ]);
    expect(ROUTES.filter((route) => route.function === 'settingsPage').every((route) => route.base === PAGES_BASE_PATH && route.method === 'GET')).toBe(true);
  });

  it('matches the settings page and its assets, and nothing else under /settings', () => {
    expect(matchRoute('GET', '/settings/workload-identity')).toEqual({
      route: expect.objectContaining({ function: 'settingsPage' }),
      resource: '/settings/workload-identity',
      pathParameters: {},
    });
    expect(matchRoute('GET', '/settings/workload-identity/assets/workload-identity.js')).toMatchObject({
      resource: '/settings/workload-identity/assets/{file}',
      pathParameters: { file: 'workload-identity.js' },
    });
    expect(matchRoute('POST', '/settings/workload-identity')).toEqual({ allowed: ['GET'] });
    expect(matchRoute('GET', '/settings/other')).toBeUndefined();
    expect(matchRoute('GET', '/api/v1/settings/workload-identity')).toBeUndefined();
    // The API's own paths are not found under the page prefix.
    expect(matchRoute('GET', '/settings/workload-identity/issuers')).toBeUndefined();
  });
});
