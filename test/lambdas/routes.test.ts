import { ROUTES, matchRoute } from '../../lambdas/routes';

describe('route table', () => {
  it('has no duplicate method and path', () => {
    const seen = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
    expect(seen.size).toBe(ROUTES.length);
  });

  it('matches static segments before parameters, as API Gateway does', () => {
    expect(matchRoute('GET', '/api/v1/models/user')).toMatchObject({ route: { function: 'catalog', path: '/models/user' }, pathParameters: {} });
    expect(matchRoute('GET', '/api/v1/models/openai/gpt-4o%3Afree/endpoints')).toMatchObject({
      resource: '/api/v1/models/{author}/{slug}/endpoints',
      pathParameters: { author: 'openai', slug: 'gpt-4o:free' },
    });
    expect(matchRoute('POST', '/api/v1/guardrails/g1/assignments/keys/remove')).toMatchObject({ pathParameters: { id: 'g1' } });
  });

  it('tells a missing resource from a method the resource does not allow', () => {
    expect(matchRoute('GET', '/api/v1/nothing')).toBeUndefined();
    expect(matchRoute('GET', '/api/v2/models/user')).toBeUndefined();
    expect(matchRoute('GET', '/api/v1/keys/')).toBeUndefined();
    expect(matchRoute('PUT', '/api/v1/keys/abc')).toEqual({ allowed: ['GET', 'PATCH', 'DELETE'] });
  });
});
