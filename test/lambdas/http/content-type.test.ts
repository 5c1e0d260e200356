import { ROUTES, resourcePath, type RouteDefinition } from '../../../lambdas/routes';
import { startTestService, type TestService } from '../../support/local-service';
import { refusalBody } from '../../support/refusal-shapes';

/**
 * A JSON body is read only from a request that says it is JSON, on every route that declares
 * one (lambdas/http/request.ts jsonBody): the list comes from the route registry, so a new route
 * is covered as soon as it is declared. The token endpoint reads its form by its own rule, in
 * the OAuth error shape (docs/reference.md#oauth-errors).
 */
const JSON_ROUTES = ROUTES.filter((route) => route.body);
const FORM_ROUTES = ROUTES.filter((route) => route.form);

/** Ids that name nothing: a request that got past the media type changes nothing. */
const concretePath = (route: RouteDefinition) =>
  resourcePath(route)
    .replace('/api/v1', '')
    .replace('{id}', '00000000-0000-4000-8000-000000000000')
    .replace('{hash}', 'f'.repeat(64));

const UNSUPPORTED: readonly [string, string | undefined][] = [
  ['text/plain', 'text/plain;charset=UTF-8'],
  ['a form', 'application/x-www-form-urlencoded'],
  ['multipart', 'multipart/form-data; boundary=x'],
  ['a JSON-like type', 'application/merge-patch+json'],
  ['no Content-Type', undefined],
];

describe('the media type of request bodies', () => {
  let service: TestService;
  let keys: TestService['runtime']['demo']['keys'];
  beforeAll(async () => {
    service = await startTestService();
    keys = service.runtime.demo.keys;
  });
  afterAll(async () => {
    await service.stop();
  });

  /** A credential the route's access lets through, so the refusal is about the body. */
  const keyFor = (route: RouteDefinition) =>
    route.access === 'inference' ? keys.workspace : route.access === 'management-read' ? keys.managementReadOnly : keys.managementReadWrite;

  /** Sends `body` as written; fetch adds no Content-Type to a Uint8Array. */
  async function send(route: RouteDefinition, body: string, contentType: string | undefined) {
    const response = await fetch(`${service.runtime.baseUrl}${concretePath(route)}`, {
      method: route.method,
      headers: { Authorization: `Bearer ${keyFor(route)}`, ...(contentType ? { 'Content-Type': contentType } : {}) },
      body: new TextEncoder().encode(body),
    });
    return { status: response.status, body: await response.json() };
  }

  it('covers every route that declares a JSON body', () => {
    expect(JSON_ROUTES.map((route) => route.operationId)).toEqual(
      expect.arrayContaining(['createChatCompletion', 'createKey', 'updateKey', 'createWorkspace', 'updateGuardrail', 'createIssuer', 'evaluateFederationPolicy', 'checkCondition']),
    );
  });

  describe.each(JSON_ROUTES.map((route) => [`${route.method} ${resourcePath(route)}`, route] as const))('%s', (_name, route) => {
    it.each(UNSUPPORTED)("answers a body sent as %s with 415 in the docs/reference.md#the-common-error-body shape (or its API's own)", async (_case, contentType) => {
      const response = await send(route, '{"name":"x"}', contentType);
      const message = 'Content-Type must be application/json';
      expect(response).toEqual({ status: 415, body: refusalBody(route, 415, message) });
    });

    it.each(['application/json', 'Application/JSON; charset=utf-8', 'application/json;charset="UTF-8"'])('reads a body sent as %s', async (contentType) => {
      // An empty object: the route's schema or its resource refuses it, the media type does not.
      const response = await send(route, '{}', contentType);
      expect(response.status).not.toBe(415);
      expect(response.status).toBeLessThan(500);
    });
  });

  it('creates no key from a text/plain body (the repro: POST /keys answered 201)', async () => {
    const before = await service.call('/keys?include_disabled=true', { key: keys.managementReadOnly });
    const response = await service.call('/keys', {
      key: keys.managementReadWrite,
      method: 'POST',
      body: JSON.stringify({ name: 'cross-site' }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(response.status).toBe(415);
    const after = await service.call('/keys?include_disabled=true', { key: keys.managementReadOnly });
    expect(after.body.data).toHaveLength(before.body.data.length);
  });

  it('refuses a body sent with two Content-Type headers', async () => {
    const response = await fetch(`${service.runtime.baseUrl}/workspaces`, {
      method: 'POST',
      headers: [
        ['Authorization', `Bearer ${keys.managementReadWrite}`],
        ['Content-Type', 'application/json'],
        ['Content-Type', 'text/plain'],
      ],
      body: '{"name":"twice"}',
    });
    expect(response.status).toBe(415);
  });

  describe.each(FORM_ROUTES.map((route) => [`${route.method} ${resourcePath(route)}`, route] as const))('%s, a form', (_name, route) => {
    it.each([...UNSUPPORTED.filter(([, type]) => type !== 'application/x-www-form-urlencoded'), ['JSON', 'application/json']])(
      'answers a body sent as %s with 400 invalid_request in the OAuth shape',
      async (_case, contentType) => {
        const response = await send(route, 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange', contentType);
        expect(response.status).toBe(400);
        expect(response.body).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/^Content-Type must be application\/x-www-form-urlencoded/) });
      },
    );
  });
});
