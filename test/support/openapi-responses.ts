import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OPENAPI_DOCUMENT } from '../../lambdas/openapi/document';

type Responses = Record<string, { content?: Record<string, { schema: object }> }>;
const paths = OPENAPI_DOCUMENT.paths as Record<string, Record<string, { responses: Responses }>>;

// OpenAPI keywords beside JSON Schema (example, discriminator) are annotations here.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();

/**
 * Why a response does not match what the OpenAPI document promises for its route, or null:
 * the status must be documented, and a JSON body must match the documented schema.
 */
export function responseMismatch(method: string, resource: string, status: number, contentType: string | null, body: unknown): string | null {
  const responses = paths[resource]?.[method.toLowerCase()]?.responses;
  if (!responses) return `${method} ${resource} is not documented`;
  const documented = responses[String(status)];
  if (!documented) return `${method} ${resource} answered ${status}, which is not documented`;
  if (!contentType?.startsWith('application/json')) return null;
  const schema = documented.content?.['application/json']?.schema;
  if (!schema) return `${method} ${resource} ${status} answered JSON, documented otherwise`;
  const key = `${method} ${resource} ${status}`;
  let validate = compiled.get(key);
  if (!validate) {
    // The document's components travel with the schema so its `#/components/...` references resolve.
    validate = ajv.compile({ ...schema, components: OPENAPI_DOCUMENT.components });
    compiled.set(key, validate);
  }
  return validate(body) ? null : `${key}: ${ajv.errorsText(validate.errors)}`;
}
