import { OPENAPI_DOCUMENT } from '../../../lambdas/document/document';
import type { Json } from '../../../lambdas/openapi/json-schema';
import { invalidRequest, type RequestValidator } from '../../../lambdas/openapi/request-validation';
import * as catalog from '../../../lambdas/openapi/validators/catalog.generated';
import * as inference from '../../../lambdas/openapi/validators/inference.generated';
import * as management from '../../../lambdas/openapi/validators/management.generated';
import { ROUTES, resourcePath } from '../../../lambdas/routes';

/**
 * The text rule (lambdas/openapi/json-schema.ts `text`) over every name and description a
 * request body may carry: each `name` and `description` string property of each JSON request
 * body of the OpenAPI document, found by walking the schemas, so a route or field added later
 * is held to it without a line here.
 */
const BODY_VALIDATORS: Record<string, RequestValidator<unknown>> = {
  ...catalog.bodyValidators,
  ...inference.bodyValidators,
  ...management.bodyValidators,
};
const TEXT_FIELDS = ['name', 'description'];
const components = (OPENAPI_DOCUMENT.components as { schemas: Record<string, Json> }).schemas;
const resolved = (schema: Json): Json => (typeof schema.$ref === 'string' ? resolved(components[schema.$ref.replace('#/components/schemas/', '')]!) : schema);
const types = (schema: Json): string[] => [schema.type ?? []].flat();

/** The paths (below the body) of the `name` and `description` strings of a schema, through nested objects. */
function textFields(schema: Json, path: readonly string[] = []): string[][] {
  const own = resolved(schema);
  return Object.entries((own.properties ?? {}) as Record<string, Json>).flatMap(([field, member]) => {
    const property = resolved(member);
    const here = [...path, field];
    if (TEXT_FIELDS.includes(field) && types(property).includes('string')) return [here];
    return types(property).includes('object') ? textFields(property, here) : [];
  });
}

/** Every operation with a JSON body, with the text fields of that body. */
const CASES = ROUTES.filter((route) => route.body).flatMap((route) => {
  const operation = (OPENAPI_DOCUMENT.paths as Record<string, Record<string, Json>>)[resourcePath(route)]![route.method.toLowerCase()]!;
  const schema = operation.requestBody.content['application/json'].schema as Json;
  return textFields(schema).map((path) => [`${route.operationId} ${path.join('.')}`, route.operationId, path] as const);
});

const nested = (path: readonly string[], value: unknown): Record<string, unknown> =>
  path.reduceRight<Record<string, unknown>>((inner, field, index) => (index === path.length - 1 ? { [field]: value } : { [field]: inner }), {});

/** The refusal of the field at `path` among the validator's errors, in docs/reference.md#the-common-error-body words; null when the field passes. */
function refusalOf(operationId: string, path: readonly string[], value: unknown): string | null {
  const validate = BODY_VALIDATORS[operationId]!;
  validate(nested(path, value));
  const pointer = `/${path.join('/')}`;
  const errors = (validate.errors ?? []).filter((error) => error.instancePath === pointer);
  return errors.length ? invalidRequest(errors).message : null;
}

const RULE = 'must not contain control characters or unpaired UTF-16 surrogates';

describe('the text rule of names and descriptions', () => {
  it('finds the names and descriptions of every resource a request creates or changes', () => {
    expect(CASES.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'createKey name',
        'updateKey name',
        'createWorkspace name',
        'createWorkspace description',
        'createGuardrail name',
        'createGuardrail description',
        'updateGuardrail name',
        'updateGuardrail description',
        'createIssuer name',
        'updateIssuer name',
        'createFederationPolicy name',
        'updateFederationPolicy name',
      ]),
    );
  });

  describe.each(CASES)('%s', (_name, operationId, path) => {
    const field = path.join('.');

    it.each([
      ['a NUL', 'a\u0000b'],
      ['an escape sequence', '\u001b[31mred'],
      ['a line feed', 'two\nlines'],
      ['a tab', 'a\tb'],
      ['DEL', 'a\u007fb'],
      ['a C1 control', 'a\u0085b'],
      ['a lone high surrogate', 'a\ud800b'],
      ['a lone low surrogate', '\udc00'],
      ['a high surrogate at the end', 'rocket \ud83d'],
      ['a pair in the wrong order', '\ude80\ud83d'],
    ])('refuses %s with a 400 naming the field', (_case, value) => {
      expect(refusalOf(operationId, path, value)).toBe(`Invalid ${field}: ${RULE}`);
    });

    it.each([
      ['letters of any script', 'Zoë, 東京, Ελλάδα'],
      ['an emoji (a surrogate pair)', 'Deploy 🚀'],
      ['spaces and punctuation', "CI – prod (eu-west-1) #2 'x'"],
    ])('accepts %s', (_case, value) => {
      expect(refusalOf(operationId, path, value)).toBeNull();
    });
  });
});
