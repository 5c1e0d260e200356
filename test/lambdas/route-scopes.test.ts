import { join } from 'node:path';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import { ACTING_KEY_CLAIM } from '../../lambdas/credentials/access-token-verifier';
import { API_BASE_PATH, ROUTES, resourcePath, type Access, type RouteDefinition } from '../../lambdas/routes';
import { LocalSigner } from '../../lambdas/signing/local-signer';
import { LOCAL_SIGNING_KEY_FILE } from '../../local/signing-keys';
import { signJwt } from '../support/access-tokens';
import { startTestService, type TestService } from '../support/local-service';
import { responseMismatch } from '../support/openapi-responses';
import { refusalBody } from '../support/refusal-shapes';

/**
 * docs/reference.md#scopes-and-access over every route of the route registry, against each kind of credential:
 * API keys of each kind and access tokens of each scope, through the real HTTP path. Each
 * route's expected refusals follow from the access its declaration gives; the first test holds
 * those declarations to the rules of docs/reference.md#scopes-and-access, so a route declared too open fails it.
 */
type Credential = 'workspace key' | 'personal key' | 'management key' | 'read-only management key' | 'inference token' | 'management token' | 'read-only management token';
const CREDENTIALS: readonly Credential[] = [
  'workspace key',
  'personal key',
  'management key',
  'read-only management key',
  'inference token',
  'management token',
  'read-only management token',
];

/** What each credential may do (docs/reference.md#federation-policies, docs/reference.md#scopes-and-access): a token has its acting key's scope and access level. */
const ABILITY: Record<Credential, { scope: 'inference' | 'management'; writes: boolean }> = {
  'workspace key': { scope: 'inference', writes: false },
  'personal key': { scope: 'inference', writes: false },
  'management key': { scope: 'management', writes: true },
  'read-only management key': { scope: 'management', writes: false },
  'inference token': { scope: 'inference', writes: false },
  'management token': { scope: 'management', writes: true },
  'read-only management token': { scope: 'management', writes: false },
};

/** The refusal a credential meets on a route, or null when it passes authorization. */
function expectedRefusal(access: Access, credential: Credential): string | null {
  const { scope, writes } = ABILITY[credential];
  switch (access) {
    case 'public':
    case 'any':
    case 'catalog':
      return null;
    case 'inference':
      return scope === 'inference' ? null : 'Management keys cannot be used for inference';
    case 'management-read':
      return scope === 'management' ? null : 'Operation reserved for management keys';
    case 'management-write':
      if (scope !== 'management') return 'Operation reserved for management keys';
      return writes ? null : 'This management key is read-only';
  }
}

/** API routes below the API base path; pages by their full path. */
const routeKey = (route: RouteDefinition) => `${route.method} ${route.base ? resourcePath(route) : route.path}`;

/** A concrete path for a route: ids that name nothing, so writes that pass authorization change nothing. */
function concretePath(route: RouteDefinition): string {
  return (route.base ? resourcePath(route) : route.path)
    .replace('{author}', 'openai')
    .replace('{slug}', 'gpt-4o-mini')
    .replace('{hash}', 'f'.repeat(64))
    .replace('{id}', '00000000-0000-4000-8000-000000000000')
    .replace('{file}', 'workload-identity.css');
}

describe('every route against every kind of credential', () => {
  let service: TestService;
  const secrets = {} as Record<Credential, string>;

  beforeAll(async () => {
    service = await startTestService();
    const { keys } = service.runtime.demo;
    // The runtime's own signing key, as the token exchange signs with it.
    const signer = await LocalSigner.fromFile(join(service.dataDir, LOCAL_SIGNING_KEY_FILE));
    const now = Math.floor(Date.now() / 1000);
    const token = (secret: string, scope: string) =>
      signJwt(signer, {
        iss: service.runtime.baseUrl,
        aud: service.runtime.baseUrl,
        sub: 'workload',
        iat: now,
        exp: now + 900,
        scope,
        federation_policy_id: '00000000-0000-4000-8000-00000000000a',
        [ACTING_KEY_CLAIM]: hashApiKey(secret),
      });
    Object.assign(secrets, {
      'workspace key': keys.workspace,
      'personal key': keys.personal,
      'management key': keys.managementReadWrite,
      'read-only management key': keys.managementReadOnly,
      'inference token': await token(keys.workspace, 'inference'),
      'management token': await token(keys.managementReadWrite, 'management'),
      'read-only management token': await token(keys.managementReadOnly, 'management'),
    });
  });
  afterAll(async () => {
    await service?.stop();
  });

  // Was a table of every route's access beside the route table; the registry declares it now,
  // and this holds each declaration to the rule it follows.
  it('declares for every route the access docs/reference.md#scopes-and-access gives it: writes need a management key that may write', () => {
    /** What changes nothing though it is a POST: the policy tester and the condition checker. */
    const readsByPost = ['evaluateFederationPolicy', 'checkCondition'];
    const rule = (route: RouteDefinition): Access => {
      switch (route.function) {
        case 'tokenExchange':
        case 'jwks':
        case 'settingsPage':
          return 'public';
        case 'catalog':
          // The public catalog's operations: any credential, or none where the deployment opens them.
          return ['getModels', 'listModelsCount', 'getModel', 'listProviders'].includes(route.operationId) ? 'catalog' : 'any';
        case 'inference':
          return 'inference';
        case 'management':
          // A key's own metadata and its generations, whatever the key (public getCurrentKey, getGeneration).
          if (route.operationId === 'getCurrentKey' || route.operationId === 'getGeneration') return 'any';
          return route.method === 'GET' || readsByPost.includes(route.operationId) ? 'management-read' : 'management-write';
      }
    };
    expect(ROUTES.map((route) => [routeKey(route), route.access])).toEqual(ROUTES.map((route) => [routeKey(route), rule(route)]));
  });

  const cases = ROUTES.flatMap((route) => CREDENTIALS.map((credential) => [routeKey(route), credential, route] as const));
  it.each(cases)('%s with a %s', async (_key, credential, route) => {
    const access = route.access;
    const completion = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const bodies: Readonly<Record<string, unknown>> = { '/chat/completions': completion, '/messages': { ...completion, max_tokens: 8 }, '/messages/count_tokens': completion, '/responses': { model: completion.model, input: 'hi' } };
    const body = bodies[route.path] ?? (route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
    // A page, or a discovery document at its path-inserted location, is outside the API base path: the same server, from its root.
    const path = route.base ? `${service.runtime.baseUrl.slice(0, -API_BASE_PATH.length)}${concretePath(route)}` : concretePath(route);
    const response = route.base
      ? await fetch(path, { method: route.method, headers: { Authorization: `Bearer ${secrets[credential]}` } }).then(async (answer) => {
          const text = await answer.text();
          return { status: answer.status, body: answer.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text, headers: answer.headers };
        })
      : await service.call(path, { key: secrets[credential], method: route.method, body });
    // Every answer is one the OpenAPI document describes for the route.
    expect(responseMismatch(route.method, resourcePath(route), response.status, response.headers.get('content-type'), response.body)).toBeNull();
    const refusal = expectedRefusal(access, credential);
    if (refusal) {
      // Another API's route refuses in its own shape (the Messages and Responses APIs').
      expect([response.status, response.body]).toEqual([403, refusalBody(route, 403, refusal)]);
    } else {
      expect(response.status).not.toBe(401);
      expect(response.status).not.toBe(403);
      expect(response.status).toBeLessThan(500);
      // Called without its query string: a route that requires one answers 400 once the caller is let in.
      const needsQuery = route.query?.some((parameter) => parameter.required) === true;
      // One that names a kept thing by an id that names none (a response) answers 404 once the caller is let in.
      const namesNothing = route.path.includes('{id}');
      if (access === 'any' || access === 'catalog' || access === 'inference') expect(response.status).toBe(needsQuery ? 400 : namesNothing ? 404 : 200);
    }
  });
});
