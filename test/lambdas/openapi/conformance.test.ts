import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { WORKSPACE_SETTINGS } from '../../../lambdas/management/views';
import { OPENAPI_DOCUMENT } from '../../../lambdas/document/document';
import type { ObservedExchange } from '../../../local/http-server';
import { startTestService, type TestService } from '../../support/local-service';
import { acceptedQueryMismatch, acceptedRequestMismatch, responseMismatch } from '../../support/openapi-responses';

type Schema = { $ref?: string; properties?: Record<string, unknown>; additionalProperties?: unknown };
type OperationObject = { requestBody?: { content: Record<string, { schema: Schema }> } };
const paths = OPENAPI_DOCUMENT.paths as Record<string, Record<string, OperationObject>>;
const schemas = (OPENAPI_DOCUMENT.components as { schemas: Record<string, Schema> }).schemas;
const resolve = (schema: Schema): Schema => (schema.$ref ? schemas[schema.$ref.split('/').pop()!]! : schema);

/** Every operation whose JSON request body the document describes as closed. */
const closedBodies = Object.entries(paths).flatMap(([path, methods]) =>
  Object.entries(methods).flatMap(([method, operation]) => {
    const schema = operation.requestBody?.content['application/json']?.schema;
    if (!schema || resolve(schema).additionalProperties !== false) return [];
    return [{ method: method.toUpperCase(), path, fields: Object.keys(resolve(schema).properties ?? {}) }];
  }),
);

/**
 * Well-formed ids of nothing where the body is read before the resource is looked up; an
 * issuer and a policy that exist where it is read after; a budget's interval.
 */
const concrete = (path: string, existing: Record<string, string>) =>
  path
    .replace('/api/v1', '')
    .replace('{hash}', '0'.repeat(64))
    .replace('{interval}', 'monthly')
    .replace('{id}', Object.entries(existing).find(([prefix]) => path.includes(prefix))?.[1] ?? '00000000-0000-4000-8000-000000000000');

describe('the service and its OpenAPI document agree', () => {
  let service: TestService;
  let admin: string;
  const existing: Record<string, string> = {};

  beforeAll(async () => {
    service = await startTestService();
    admin = service.runtime.demo.keys.managementReadWrite;
    const issuer = await service.call('/workload-identity/issuers', { key: admin, method: 'POST', body: { name: 'CI', issuer_url: 'https://idp.example.com' } });
    const policy = await service.call('/workload-identity/policies', {
      key: admin,
      method: 'POST',
      body: { name: 'Deploy', issuer_id: issuer.body.data.id, subject: 'repo:acme/app', audience: 'modelgate', api_key_hash: hashApiKey(service.runtime.demo.keys.workspace) },
    });
    expect([issuer.status, policy.status]).toEqual([201, 201]);
    existing['/issuers/{id}'] = issuer.body.data.id;
    existing['/policies/{id}'] = policy.body.data.id;
  });
  afterAll(() => service.stop());

  it('describes a closed body for every management write that reads JSON', () => {
    expect(closedBodies.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
      [
        'PATCH /api/v1/guardrails/{id}',
        'PATCH /api/v1/keys/{hash}',
        'PATCH /api/v1/workload-identity/issuers/{id}',
        'PATCH /api/v1/workload-identity/policies/{id}',
        'PATCH /api/v1/workspaces/{id}',
        'PUT /api/v1/workspaces/{id}/budgets/{interval}',
        'POST /api/v1/guardrails',
        'POST /api/v1/guardrails/{id}/assignments/keys',
        'POST /api/v1/guardrails/{id}/assignments/keys/remove',
        'POST /api/v1/keys',
        'POST /api/v1/workload-identity/conditions/check',
        'POST /api/v1/workload-identity/issuers',
        'POST /api/v1/workload-identity/policies',
        'POST /api/v1/workload-identity/policies/{id}/evaluate',
        'POST /api/v1/workspaces',
      ].sort(),
    );
  });

  it.each(closedBodies)('$method $path refuses a field its document does not list, and knows every field it lists', async ({ method, path, fields }) => {
    const undocumented = await service.call(concrete(path, existing), { key: admin, method, body: { x_undocumented: 1 } });
    expect(undocumented.status).toBe(400);
    expect(undocumented.body.error.metadata).toEqual({ parameter: 'x_undocumented' });
    expect(undocumented.body.error.message).toBe('Invalid x_undocumented: is not a known field');
    for (const field of fields) {
      const answer = await service.call(concrete(path, existing), { key: admin, method, body: { [field]: 'x' } });
      expect(`${field}: ${answer.body?.error?.message}`).not.toBe(`${field}: Invalid ${field}: is not a known field`);
    }
  });
});

describe('the conformance check the suites run on every answer', () => {
  const workspace = {
    id: '5b0c1f8e-4a35-4c41-9d7b-1c0f3c0d5e11',
    name: 'Default',
    slug: 'default',
    description: null,
    default_guardrail_id: '0b3c4bde-1cf4-5d2e-9a4f-5b8e0c6d7f21',
    guardrail_ids: [],
    created_at: '2026-11-21T12:00:00.000Z',
    updated_at: null,
    ...WORKSPACE_SETTINGS,
    include_byok_in_budgets: false,
  };
  const get = (body: unknown, status = 200, type = 'application/json') => responseMismatch('GET', '/api/v1/workspaces/{id}', status, type, body);

  it('accepts a documented answer', () => {
    expect(get({ data: workspace })).toBeNull();
  });

  it('fails an undocumented field, at any depth', () => {
    expect(get({ data: { ...workspace, secret: 'x' } })).toBe('GET /api/v1/workspaces/{id} 200: /data has the undocumented field "secret"');
    expect(get({ data: workspace, extra: true })).toBe('GET /api/v1/workspaces/{id} 200: / has the undocumented field "extra"');
  });

  it('fails a missing required field and a wrong type', () => {
    const { slug: _slug, ...noSlug } = workspace;
    expect(get({ data: noSlug })).toContain("must have required property 'slug'");
    expect(get({ data: { ...workspace, guardrail_ids: 'none' } })).toContain('/data/guardrail_ids must be array');
  });

  it('fails an undocumented status and an undocumented media type', () => {
    expect(get({ error: { code: 409, message: 'x' } }, 409)).toBe('GET /api/v1/workspaces/{id} answered 409, which is not documented');
    expect(get('<html>', 200, 'text/html')).toBe('GET /api/v1/workspaces/{id} 200 answered text/html, documented: application/json');
  });

  it('fails an accepted query value the document would refuse, and leaves unnamed parameters alone', () => {
    expect(acceptedQueryMismatch('GET', '/api/v1/models/user', '?limit=5&offset=0&sort=newest&output_modalities=text,image&utm_source=x')).toBeNull();
    expect(acceptedQueryMismatch('GET', '/api/v1/models/user', '?limit=1001')).toBe(
      'GET /api/v1/models/user accepted ?limit=1001, which the document refuses: / must be <= 1000 (got "1001")',
    );
    expect(acceptedQueryMismatch('GET', '/api/v1/models/user', '?sort=cheapest')).toContain('accepted ?sort=cheapest, which the document refuses: / must be equal to one of the allowed values');
    expect(acceptedQueryMismatch('GET', '/api/v1/keys', '?include_disabled=yes')).toContain('/ must be boolean');
  });

  it('reads an accepted token request as its form fields', () => {
    const form = 'application/x-www-form-urlencoded';
    const request = {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      subject_token: 'eyJ.x.y',
      federation_policy_id: '00000000-0000-4000-8000-000000000000',
    };
    expect(acceptedRequestMismatch('POST', '/api/v1/oauth/token', request, form)).toBeNull();
    const { subject_token: _token, ...noToken } = request;
    expect(acceptedRequestMismatch('POST', '/api/v1/oauth/token', noToken, form)).toContain("must have required property 'subject_token'");
    expect(acceptedRequestMismatch('POST', '/api/v1/oauth/token', request)).toBe('POST /api/v1/oauth/token accepted a application/json body, but documents none');
  });

  it('fails an accepted request body the document would refuse', () => {
    expect(acceptedRequestMismatch('POST', '/api/v1/workspaces', { name: 'Research' })).toBeNull();
    expect(acceptedRequestMismatch('POST', '/api/v1/workspaces', { name: 'Research', color: 'red' })).toBe(
      'POST /api/v1/workspaces accepted a request body the document refuses: / has the undocumented field "color"',
    );
  });
});

describe('the local server shows the suites every answer, whatever the client', () => {
  it('hands over a streamed completion whole, which the check reads event by event', async () => {
    const seen: ObservedExchange[] = [];
    // Its own observer in place of the suites' document check, which this test exercises by hand.
    const service = await startTestService({ observe: (exchange) => seen.push(exchange) });
    const { runtime } = service;
    try {
      const response = await fetch(`${runtime.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${runtime.demo.keys.workspace}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], stream: true }),
      });
      const text = await response.text();
      await new Promise((resolve) => setImmediate(resolve));
      expect(seen).toHaveLength(1);
      const [exchange] = seen;
      expect(exchange).toMatchObject({ method: 'POST', resource: '/api/v1/chat/completions', status: 200, contentType: 'text/event-stream; charset=utf-8', body: text });
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(responseMismatch('POST', exchange!.resource, 200, exchange!.contentType!, exchange!.body)).toBeNull();
      expect(responseMismatch('POST', exchange!.resource, 200, exchange!.contentType!, `data: not json\n\n${exchange!.body}`)).toBe(
        'POST /api/v1/chat/completions 200: event 0 is not JSON: not json',
      );
      expect(responseMismatch('POST', exchange!.resource, 200, exchange!.contentType!, `${exchange!.body}data: {"choices":[]}\n\n`)).toBe(
        'POST /api/v1/chat/completions 200: an event follows [DONE]',
      );
    } finally {
      await service.stop();
    }
  });
});
