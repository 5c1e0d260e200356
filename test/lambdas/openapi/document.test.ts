import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { API_VERSION, OPENAPI_DOCUMENT, OPERATIONS, routeKeys } from '../../../lambdas/openapi/document';
import publicSchemas from '../../../lambdas/openapi/public-schemas.json';

type Operation = {
  operationId: string;
  security: unknown[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref?: string } }> }>;
};
const paths = OPENAPI_DOCUMENT.paths as Record<string, Record<string, Operation>>;
const documented = Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
const operation = (method: string, path: string) => paths[path]![method]!;

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
  it('documents exactly the routes of the route table: a route added without documentation fails', () => {
    expect(documented.sort()).toEqual(routeKeys().sort());
    expect(Object.keys(OPERATIONS).sort()).toEqual(routeKeys().sort());
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

  it('requires a bearer API key or access token everywhere but the exchange, its keys, this document and the pages', () => {
    const open = documented.filter((key) => {
      const [method, path] = key.split(' ');
      return operation(method!.toLowerCase(), path!).security.length === 0;
    });
    expect(open.sort()).toEqual([
      'GET /api/v1/oauth/jwks',
      'GET /api/v1/openapi.json',
      'GET /settings/workload-identity',
      'GET /settings/workload-identity/assets/{file}',
      'POST /api/v1/oauth/token',
    ]);
    expect(operation('get', '/api/v1/keys').security).toEqual([{ apiKey: [] }, { accessToken: [] }]);
  });

  it('describes the token endpoint as a form with every SPEC 4.2 field and RFC 6749 errors', () => {
    const token = operation('post', '/api/v1/oauth/token');
    expect(Object.keys(token.requestBody!.content)).toEqual(['application/x-www-form-urlencoded']);
    const schemas = (OPENAPI_DOCUMENT.components as { schemas: Record<string, { properties: object; required: string[] }> }).schemas;
    expect(Object.keys(schemas.TokenRequest!.properties).sort()).toEqual(
      ['audience', 'federation_policy_id', 'grant_type', 'requested_token_type', 'resource', 'scope', 'subject_token', 'subject_token_type'],
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

  it('gives the other API operations the SPEC 7.1 error body, 413 where a body is read, 429 with Retry-After', () => {
    const create = operation('post', '/api/v1/keys');
    expect(create.responses['403']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
    expect(create.responses).toHaveProperty('413');
    expect(create.responses['429']!.headers).toHaveProperty('Retry-After');
    expect(operation('get', '/api/v1/models/user').responses['200']!.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ModelsListResponse' });
  });

  it("reuses the public document's catalog schemas verbatim, under their names", () => {
    const publicDocument = parse(readFileSync(join(__dirname, '../../fixtures/openapi.yaml'), 'utf8'));
    const names = Object.keys(publicSchemas);
    expect(names).toEqual(expect.arrayContaining(['ModelsListResponse', 'Model']));
    for (const name of names) expect(publicSchemas[name as keyof typeof publicSchemas]).toEqual(publicDocument.components.schemas[name]);
  });
});
