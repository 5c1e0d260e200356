import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { API_VERSION, OPENAPI_DOCUMENT, routeKeys } from '../../../lambdas/document/document';
import { ROUTES, resourcePath } from '../../../lambdas/routes';
import {
  ADAPTED,
  CREATE_KEY_ADAPTATION,
  CURRENT_KEY_ADAPTATION,
  KEY_ADAPTATION,
  PUBLIC_INLINE,
  PUBLIC_SCHEMAS,
  UPDATE_KEY_ADAPTATION,
  type Adaptation,
  type Json,
} from '../../../lambdas/document/schemas';
import { inlineSchema } from '../../../scripts/copy-public-schemas';

type Operation = {
  operationId: string;
  security: unknown[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref?: string } }> }>;
};
const paths = OPENAPI_DOCUMENT.paths as Record<string, Record<string, Operation>>;
const documented = Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
const operation = (method: string, path: string) => paths[path]![method]!;

/** A schema without its examples, at any depth. */
function withoutExamples(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutExamples);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).filter(([keyword]) => keyword !== 'example').map(([keyword, value]) => [keyword, withoutExamples(value)]));
}

/**
 * The validator is an ES module that reads its schemas relative to its own file; it runs
 * in a plain Node process, the document on stdin.
 */
function validate(document: unknown): { valid: boolean; errors?: unknown } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors }));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(document), cwd: join(__dirname, '../../..') });
  const result = JSON.parse(output.toString('utf8'));
  return { valid: result.valid && result.version === '3.1', errors: result.errors };
}

describe('the OpenAPI document of modelgate', () => {
  // The document's operations are derived from the route registry (there is no table of
  // operations beside it any more): every declared route is documented under its operation id.
  it('documents exactly the routes of the route registry, each under its declared operation id', () => {
    expect(documented.sort()).toEqual(routeKeys().sort());
    for (const route of ROUTES) expect([route.operationId, operation(route.method.toLowerCase(), resourcePath(route)).operationId]).toEqual([route.operationId, route.operationId]);
  });

  it('is a valid OpenAPI 3.1 document, version 1.0.0', () => {
    expect(OPENAPI_DOCUMENT).toMatchObject({ openapi: '3.1.0', info: { title: 'modelgate', version: '1.0.0' } });
    expect(API_VERSION).toBe('1.0.0');
    expect(validate(OPENAPI_DOCUMENT)).toEqual({ valid: true });
  });

  it('is refused by the validator when broken, so the check above can fail', () => {
    const broken = { ...OPENAPI_DOCUMENT, info: { title: 'modelgate' } };
    expect(validate(broken).valid).toBe(false);
  });

  it('gives every operation a unique operationId and resolves every $ref', () => {
    const ids = Object.values(paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    const schemas = (OPENAPI_DOCUMENT.components as { schemas: Record<string, unknown> }).schemas;
    const refs = [...JSON.stringify(OPENAPI_DOCUMENT).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.filter((name) => !(name in schemas))).toEqual([]);
  });

  it('requires a bearer API key or access token everywhere but the exchange, its keys, this document, the discovery documents and the pages', () => {
    const open = documented.filter((key) => {
      const [method, path] = key.split(' ');
      return operation(method!.toLowerCase(), path!).security.length === 0;
    });
    expect(open.sort()).toEqual([
      'GET /.well-known/oauth-authorization-server/api/v1',
      'GET /.well-known/oauth-protected-resource/api/v1',
      'GET /api/v1/.well-known/oauth-authorization-server',
      'GET /api/v1/.well-known/oauth-protected-resource',
      'GET /api/v1/.well-known/openid-configuration',
      'GET /api/v1/oauth/jwks',
      'GET /api/v1/openapi.json',
      'GET /settings/workload-identity',
      'GET /settings/workload-identity/assets/{file}',
      'POST /api/v1/oauth/token',
    ]);
    expect(operation('get', '/api/v1/keys').security).toEqual([{ apiKey: [] }, { accessToken: [] }, { dpopAccessToken: [] }]);
  });

  it("documents the Bearer challenge of every protected route's 401 and of no public route", () => {
    for (const key of documented) {
      const [method, path] = key.split(' ');
      const { security, responses } = operation(method!.toLowerCase(), path!);
      const challenged = Object.keys(responses['401']?.headers ?? {}).includes('WWW-Authenticate');
      expect([key, challenged]).toEqual([key, security.length > 0]);
    }
  });

  it('describes the token endpoint as a form with every docs/reference.md#the-token-exchange field and RFC 6749 errors', () => {
    const token = operation('post', '/api/v1/oauth/token');
    expect(Object.keys(token.requestBody!.content)).toEqual(['application/x-www-form-urlencoded']);
    const schemas = (OPENAPI_DOCUMENT.components as { schemas: Record<string, { properties: object; required: string[] }> }).schemas;
    expect(Object.keys(schemas.TokenRequest!.properties).sort()).toEqual(
      ['audience', 'client_id', 'federation_policy_id', 'grant_type', 'requested_token_type', 'resource', 'scope', 'subject_token', 'subject_token_type'],
    );
    expect(schemas.TokenRequest!.required.sort()).toEqual(['federation_policy_id', 'grant_type', 'subject_token', 'subject_token_type']);
    expect(Object.keys(token.responses).sort()).toEqual(['200', '400', '413', '429', '500', '503']);
    expect(token.responses['400']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/OAuthError' });
    expect(token.responses['429']!.headers).toHaveProperty('Retry-After');
  });

  it('documents the Cache-Control header of the public, cacheable documents', () => {
    for (const path of ['/api/v1/oauth/jwks', '/api/v1/openapi.json']) {
      expect(operation('get', path).responses['200']!.headers).toEqual({
        'Cache-Control': { description: 'Caches may keep the answer 5 minutes.', schema: { type: 'string', const: 'public, max-age=300' } },
      });
    }
  });

  it('gives the other API operations the common error body (docs/reference.md#the-common-error-body), 413 where a body is read, 429 with Retry-After', () => {
    const create = operation('post', '/api/v1/keys');
    expect(create.responses['403']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    expect(create.responses).toHaveProperty('413');
    expect(create.responses['429']!.headers).toHaveProperty('Retry-After');
    expect(operation('get', '/api/v1/models/user').responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ModelsListResponse' });
  });

  describe("reuse of the public document's schemas", () => {
    const publicDocument = parse(readFileSync(join(__dirname, '../../fixtures/openapi.yaml'), 'utf8'));
    const components = (OPENAPI_DOCUMENT.components as { schemas: Record<string, Json> }).schemas;

    it('keeps a verbatim copy of the public schemas it reuses', () => {
      for (const [name, schema] of Object.entries(PUBLIC_SCHEMAS)) expect([name, schema]).toEqual([name, publicDocument.components.schemas[name]]);
      for (const [entry, schema] of Object.entries(PUBLIC_INLINE)) expect([entry, schema]).toEqual([entry, inlineSchema(publicDocument, entry)]);
    });

    it('serves the public schemas it uses under their names, unchanged unless adapted but for examples made to fit', () => {
      // Examples are held to their schemas by lint.test.ts; which public schemas are used, there too.
      const served = Object.keys(PUBLIC_SCHEMAS).filter((name) => !(name in ADAPTED) && name in components);
      expect(served.length).toBeGreaterThan(40);
      for (const name of served) expect([name, withoutExamples(components[name])]).toEqual([name, withoutExamples(PUBLIC_SCHEMAS[name])]);
      expect(Object.keys(components)).toEqual(expect.arrayContaining(['ModelsListResponse', 'Model', 'Workspace', 'Guardrail', 'ActivityResponse', 'ApiKey']));
    });

    const adaptations: [string, Json, Json, Adaptation][] = [
      ...Object.entries(ADAPTED).map(([name, adaptation]): [string, Json, Json, Adaptation] => [name, PUBLIC_SCHEMAS[name]!, components[name]!, adaptation]),
      ...['GET /keys 200', 'GET /keys/{hash} 200', 'PATCH /keys/{hash} 200'].map((entry): [string, Json, Json, Adaptation] => [
        `ApiKey (${entry})`,
        PUBLIC_INLINE[entry]!.properties.data.items ?? PUBLIC_INLINE[entry]!.properties.data,
        components.ApiKey!,
        KEY_ADAPTATION,
      ]),
      ['ApiKey (POST /keys 201)', PUBLIC_INLINE['POST /keys 201']!.properties.data, components.ApiKey!, KEY_ADAPTATION],
      ['CreateKeyRequest', PUBLIC_INLINE['POST /keys request']!, components.CreateKeyRequest!, CREATE_KEY_ADAPTATION],
      ['UpdateKeyRequest', PUBLIC_INLINE['PATCH /keys/{hash} request']!, components.UpdateKeyRequest!, UPDATE_KEY_ADAPTATION],
      ['CurrentKey', PUBLIC_INLINE['GET /key 200']!.properties.data, components.CurrentKey!, CURRENT_KEY_ADAPTATION],
    ];

    it.each(adaptations)('%s: every public field is served as the public document defines it, unless stated', (_name, original, served, adaptation) => {
      const { omit = [], change = {}, add = {}, optional = [] } = adaptation;
      for (const [field, definition] of Object.entries(original.properties as Json)) {
        if (omit.includes(field)) expect([field, served.properties[field]]).toEqual([field, undefined]);
        else if (field in change) expect([field, served.properties[field]]).toEqual([field, change[field]]);
        else expect([field, served.properties[field]]).toEqual([field, definition]);
      }
      // Additions are new fields: a public one changes through `change`, where the test sees it.
      for (const field of Object.keys(add)) expect([field, field in original.properties]).toEqual([field, false]);
      const stillRequired = ((original.required ?? []) as string[]).filter((field) => !omit.includes(field) && !optional.includes(field));
      expect(served.required ?? []).toEqual(expect.arrayContaining(stillRequired));
      // Every stated difference is a real one.
      for (const field of [...omit, ...Object.keys(change), ...optional]) expect([field, field in original.properties]).toEqual([field, true]);
    });
  });
});
