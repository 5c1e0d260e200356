import type { APIGatewayProxyEvent } from 'aws-lambda';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { parseCatalogQuery, parseModelCountQuery, parseModelListQuery } from '../../../lambdas/catalog/catalog-query';
import type { ApiKeyRecord } from '../../../lambdas/accounts/types';
import { KeyPlacements } from '../../../lambdas/credentials/authenticate';
import { DomainError, TooManyRequestsError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import {
  Representation,
  compiledQueries,
  createDispatcher,
  requestAdmission,
  type AdmittedRequest,
  type Answer,
  type Operations,
  type RateDecision,
} from '../../../lambdas/http/dispatcher';
import { bodyValidators as inferenceBodies } from '../../../lambdas/openapi/validators/inference.generated';
import { bodyValidators, queryValidators } from '../../../lambdas/openapi/validators/management.generated';
import { ROUTES, routesOf, type FunctionId, type RouteOfFunction } from '../../../lambdas/routes';
import { authenticationRecords } from '../../support/accounts';
import { makeOrganization, makeWorkspaceKey } from '../../support/federation-fixtures';
import { FixedClock } from '../../support/fixed-clock';

const secret = (digit: string) => `sk-mg-v1-${digit.repeat(64)}`;
const organization = makeOrganization({ id: 'org-1' });
const key = (digit: string, overrides: Partial<ApiKeyRecord>) => makeWorkspaceKey({ hash: hashApiKey(secret(digit)), organizationId: 'org-1', ...overrides });
const KEYS = {
  workspace: secret('1'),
  readOnly: secret('2'),
  readWrite: secret('3'),
};
const accounts = authenticationRecords(
  organization,
  key('1', {}),
  key('2', { kind: 'management', workspaceId: null, accessLevel: 'read-only' }),
  key('3', { kind: 'management', workspaceId: null, accessLevel: 'read-write' }),
);

/** Counts the key reads authentication makes: a request refused before them costs no I/O. */
function counted() {
  const reads = { count: 0 };
  const store = { ...accounts, getRecords: (ids: Parameters<typeof accounts.getRecords>[0]) => (reads.count++, accounts.getRecords(ids)) };
  return { reads, authentication: { accounts: store as typeof accounts, clock: new FixedClock(), placements: new KeyPlacements() } };
}

/** A REST API proxy event as API Gateway sends it for the route at `resource`. */
function event(method: string, resource: string, options: { key?: string; query?: Record<string, string>; body?: unknown; params?: Record<string, string> } = {}): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  return {
    resource,
    path: resource,
    httpMethod: method,
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: options.query ?? null,
    multiValueQueryStringParameters: options.query ? Object.fromEntries(Object.entries(options.query).map(([name, value]) => [name, [value]])) : null,
    pathParameters: options.params ?? null,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestContext: { identity: { sourceIp: '203.0.113.7' } },
  } as unknown as APIGatewayProxyEvent;
}

/** Every operation of a function answers what it was handed, so the tests see the admitted request. */
function echoing<F extends FunctionId>(fn: F): Operations<RouteOfFunction<F>, unknown> {
  const echo = ({ route, principal, params, query, body }: AdmittedRequest) => ({ operation: route.operationId, key: principal?.key.hash ?? null, params: { ...params }, query, body: body ?? null });
  return Object.fromEntries(ROUTES.filter((route) => route.function === fn).map((route) => [route.operationId, echo])) as unknown as Operations<RouteOfFunction<F>, unknown>;
}

/** What the caller sees of a refusal: the docs/reference.md#the-common-error-body status and message. */
async function refusal(answer: Promise<unknown>): Promise<[number, string]> {
  const error = await answer.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  const { status, body } = toErrorBody(error);
  return [status, body.error.message];
}

describe('the dispatcher', () => {
  const management = (options: { exchangeRate?: (sourceIp: string) => Promise<RateDecision> } = {}) => {
    const { reads, authentication } = counted();
    const rate = options.exchangeRate ?? (async () => ({ allowed: true }) as const);
    const dispatch = createDispatcher({ routes: routesOf('management'), authentication, queries: compiledQueries(routesOf('management'), queryValidators), bodies: bodyValidators, exchangeRate: rate, operations: echoing('management'), deps: undefined });
    return { dispatch, reads };
  };

  describe('finds the route from the method and the resource', () => {
    it('serves HEAD by the GET route, and answers with its declared status', async () => {
      const { dispatch } = management();
      const head = await dispatch(event('HEAD', '/api/v1/key', { key: KEYS.workspace }));
      expect(head.statusCode).toBe(200);
      expect(JSON.parse(head.body)).toMatchObject({ operation: 'getCurrentKey' });
      const created = await dispatch(event('POST', '/api/v1/workspaces', { key: KEYS.readWrite, body: { name: 'Team' } }));
      expect(created).toEqual({
        statusCode: 201,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ operation: 'createWorkspace', key: hashApiKey(KEYS.readWrite), params: {}, query: {}, body: { name: 'Team' } }),
      });
    });

    it('is a 404 for a resource or method of another function, or none', async () => {
      const { dispatch, reads } = management();
      expect(await refusal(dispatch(event('GET', '/api/v1/models', { key: KEYS.workspace })))).toEqual([404, 'Resource not found']);
      expect(await refusal(dispatch(event('PUT', '/api/v1/workspaces', { key: KEYS.readWrite })))).toEqual([404, 'Resource not found']);
      expect(reads.count).toBe(0);
    });

    it('hands the operation its path parameters decoded', async () => {
      const { dispatch } = management();
      const answer = await dispatch(event('GET', '/api/v1/keys/{hash}', { key: KEYS.readOnly, params: { hash: 'a%3Ab' } }));
      expect(JSON.parse(answer.body)).toMatchObject({ operation: 'getKey', params: { hash: 'a:b' } });
    });
  });

  describe("checks the credential against the route's access", () => {
    it.each([
      ['management-read', 'GET', '/api/v1/workspaces', KEYS.workspace, [403, 'Operation reserved for management keys']],
      ['management-write', 'POST', '/api/v1/workspaces', KEYS.readOnly, [403, 'This management key is read-only']],
      ['any', 'GET', '/api/v1/key', undefined, [401, 'Missing Authentication header']],
    ] as const)('%s refuses what it must', async (_access, method, resource, secret, expected) => {
      const { dispatch } = management();
      expect(await refusal(dispatch(event(method, resource, { key: secret, body: method === 'POST' ? { name: 'x' } : undefined })))).toEqual(expected);
    });

    it('inference takes inference credentials only', async () => {
      const { authentication } = counted();
      const admit = requestAdmission({ routes: routesOf('inference'), authentication, bodies: inferenceBodies });
      const body = { model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] };
      expect(await refusal(admit(event('POST', '/api/v1/chat/completions', { key: KEYS.readWrite, body })))).toEqual([403, 'Management keys cannot be used for inference']);
      const admitted = await admit(event('POST', '/api/v1/chat/completions', { key: KEYS.workspace, body }));
      expect([admitted.principal.key.hash, admitted.body]).toEqual([hashApiKey(KEYS.workspace), body]);
    });

    it('public routes never read a credential, not even two Authorization headers', async () => {
      const dispatch = createDispatcher({ routes: routesOf('jwks'), operations: echoing('jwks'), deps: undefined });
      const twoCredentials = { ...event('GET', '/api/v1/oauth/jwks'), multiValueHeaders: { Authorization: ['Bearer a', 'Bearer b'] } };
      expect((await dispatch(twoCredentials)).statusCode).toBe(200);
    });

    it('the public catalog answers without a credential only where the deployment opens it, and checks one that is sent', async () => {
      const open = counted();
      const dispatch = (publicCatalog: boolean, authentication = open.authentication) =>
        createDispatcher({ routes: routesOf('catalog'), authentication, publicCatalog, queries: catalogQueries(), operations: echoing('catalog'), deps: undefined });
      expect(JSON.parse((await dispatch(true)(event('GET', '/api/v1/providers'))).body)).toMatchObject({ key: null });
      expect(open.reads.count).toBe(0);
      expect(await refusal(dispatch(true)(event('GET', '/api/v1/providers', { key: secret('9') })))).toEqual([401, 'Invalid API key']);
      expect(await refusal(dispatch(false)(event('GET', '/api/v1/providers')))).toEqual([401, 'Missing Authentication header']);
      // The per-caller list is never public.
      expect(await refusal(dispatch(true)(event('GET', '/api/v1/models/user')))).toEqual([401, 'Missing Authentication header']);
    });
  });

  describe('runs the checks in order', () => {
    it('authenticates before the query and the body, unless the function parses its query first', async () => {
      const { dispatch, reads } = management();
      expect(await refusal(dispatch(event('GET', '/api/v1/workspaces', { query: { limit: '0' } })))).toEqual([401, 'Missing Authentication header']);
      expect(await refusal(dispatch(event('POST', '/api/v1/workspaces', { body: {} })))).toEqual([401, 'Missing Authentication header']);
      expect(await refusal(dispatch(event('GET', '/api/v1/workspaces', { key: KEYS.readOnly, query: { limit: '0' } })))).toEqual([400, 'Invalid limit: must be an integer from 1 to 100']);
      // The credential was read (the key, then its organization and workspace, first seen) before the query was refused.
      expect(reads.count).toBe(2);

      const first = counted();
      const catalog = createDispatcher({ routes: routesOf('catalog'), authentication: first.authentication, queries: catalogQueries(), queryFirst: true, operations: echoing('catalog'), deps: undefined });
      expect(await refusal(catalog(event('GET', '/api/v1/models/user', { query: { limit: '0' } })))).toEqual([400, 'Invalid limit: must be an integer from 1 to 1000']);
      // A bad request cost no I/O.
      expect(first.reads.count).toBe(0);
    });

    it('counts a route that verifies subject tokens against the per-address budget once the caller is admitted, before its body is read', async () => {
      const counts: string[] = [];
      const { dispatch } = management({
        exchangeRate: async (sourceIp) => (counts.push(sourceIp), counts.length > 1 ? { allowed: false, retryAfterSeconds: 17 } : { allowed: true }),
      });
      const evaluate = (secret: string | undefined, body: unknown) => event('POST', '/api/v1/workload-identity/policies/{id}/evaluate', { key: secret, body, params: { id: 'p' } });
      expect(await refusal(dispatch(evaluate(undefined, {})))).toEqual([401, 'Missing Authentication header']);
      expect(counts).toEqual([]);
      expect(await refusal(dispatch(evaluate(KEYS.readOnly, {})))).toEqual([400, 'Invalid subject_token: is required']);
      const refused = await dispatch(evaluate(KEYS.readOnly, {})).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TooManyRequestsError);
      expect(toErrorBody(refused)).toMatchObject({ status: 429, headers: { 'Retry-After': '17' } });
      expect(counts).toEqual(['203.0.113.7', '203.0.113.7']);
    });
  });

  describe('answers what the operation returns', () => {
    const pages = (result: Answer) => createDispatcher({ routes: routesOf('settingsPage'), operations: { getWorkloadIdentitySettingsPage: () => result, getWorkloadIdentitySettingsAsset: () => result }, deps: undefined });

    it('a pre-serialized JSON body as it is, and a cacheable route with Cache-Control', async () => {
      const jwks = createDispatcher({ routes: routesOf('jwks'), operations: { ...echoing('jwks'), getJwks: () => '{"keys":[]}' }, deps: undefined });
      expect(await jwks(event('GET', '/api/v1/oauth/jwks'))).toEqual({
        statusCode: 200,
        headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' },
        body: '{"keys":[]}',
      });
    });

    it('a representation with its media type and headers', async () => {
      const page = new Representation('<p>hi</p>', 'text/html; charset=utf-8', { 'X-Frame-Options': 'DENY' });
      expect(await pages(page)(event('GET', '/settings/workload-identity'))).toEqual({
        statusCode: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'X-Frame-Options': 'DENY' },
        body: '<p>hi</p>',
      });
    });

    it('nothing as an empty body', async () => {
      expect(await pages(undefined)(event('GET', '/settings/workload-identity'))).toEqual({ statusCode: 200, headers: {}, body: '' });
    });
  });

  describe('fails the cold start', () => {
    it.each([
      ['a credential reader', () => requestAdmission({ routes: routesOf('inference'), bodies: inferenceBodies })],
      ['a body schema', () => requestAdmission({ routes: routesOf('inference'), authentication: counted().authentication })],
      ['a query parser', () => requestAdmission({ routes: routesOf('catalog'), authentication: counted().authentication })],
      ['the per-address exchange budget', () => requestAdmission({ routes: routesOf('management'), authentication: counted().authentication, queries: compiledQueries(routesOf('management'), queryValidators), bodies: bodyValidators })],
      ['a form body, which only the token endpoint reads', () => requestAdmission({ routes: routesOf('tokenExchange') })],
    ])('when a route needs %s the function did not give', (need, build) => {
      expect(build).toThrow(`needs ${need}`);
    });
  });
});

/** The catalog's own query parsers, which it hands the dispatcher. */
const catalogQueries = () => ({ getUserModels: parseCatalogQuery, getModels: parseModelListQuery, listModelsCount: parseModelCountQuery });
