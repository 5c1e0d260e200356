import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { API_BASE_PATH, PAGES_BASE_PATH, ROUTES, matchRoute, resourcePath } from '../../lambdas/routes';

const LAMBDAS = resolve(__dirname, '../../lambdas');

/** The modules a source loads when it runs (type-only imports are erased), transitively. */
function runtimeImports(entry: string): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    const source = readFileSync(file, 'utf8');
    for (const [, specifier] of source.matchAll(/^(?:import|export) (?!type )[^;]*? from '([^']+)';/gms)) {
      if (!specifier!.startsWith('.')) packages.add(specifier!);
      else {
        const base = resolve(dirname(file), specifier!);
        visit([`${base}.ts`, join(base, 'index.ts'), base].find((candidate) => existsSync(candidate))!);
      }
    }
  };
  visit(entry);
  return { modules: [...modules].map((file) => relative(LAMBDAS, file)), packages: [...packages] };
}

describe('route table', () => {
  it('is data the CDK stack can load: no handler, store, service or CEL engine, and no package', () => {
    const { modules, packages } = runtimeImports(join(LAMBDAS, 'routes.ts'));
    expect(modules).toContain('management/routes/keys.ts');
    expect(modules.filter((file) => /operations\/|management-api|handlers\/|functions\/|store\/|-service|condition/.test(file))).toEqual([]);
    expect(packages).toEqual([]);
  });

  it('gives every route a unique operation id', () => {
    const ids = ROUTES.map((route) => route.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

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

  it('keeps every API route under /api/v1 and only the settings page and the path-inserted discovery documents outside it', () => {
    const outside = ROUTES.filter((route) => !resourcePath(route).startsWith(`${API_BASE_PATH}/`));
    expect(outside.map((route) => [route.method, resourcePath(route), route.function])).toEqual([
      ['GET', '/settings/workload-identity', 'settingsPage'],
      ['GET', '/settings/workload-identity/assets/{file}', 'settingsPage'],
      // RFC 8414 §3.1, RFC 9728 §3.1: the well-known name, then the issuer's path.
      ['GET', '/.well-known/oauth-authorization-server/api/v1', 'jwks'],
      ['GET', '/.well-known/oauth-protected-resource/api/v1', 'jwks'],
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
