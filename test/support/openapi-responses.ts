import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OPENAPI_DOCUMENT } from '../../lambdas/document/document';
import { routeMethod } from '../../lambdas/routes';

type Json = Record<string, any>;
type Content = Record<string, { schema: Json }>;
type Parameter = { name: string; in: string; schema: Json };
type OperationObject = { parameters?: Parameter[]; requestBody?: { content: Content }; responses: Record<string, { content?: Content }> };
const paths = OPENAPI_DOCUMENT.paths as Record<string, Record<string, OperationObject>>;

/**
 * The document's schemas as the suites hold answers to them: every object schema that lists
 * its properties and says nothing about others is closed (`unevaluatedProperties: false`),
 * so a field the document does not describe fails. Members of an object's `allOf` are left
 * open: the object, which sees what every member evaluated, is closed instead.
 */
export function closed(schema: unknown, allOfOf?: 'object' | 'any'): unknown {
  if (Array.isArray(schema)) return schema.map((item) => closed(item));
  if (!schema || typeof schema !== 'object') return schema;
  const node = schema as Json;
  const isObject = node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'));
  const out: Json = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === 'properties' || keyword === '$defs' || keyword === 'schemas') {
      out[keyword] = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, closed(sub)]));
    } else if (keyword === 'allOf') {
      out[keyword] = (value as unknown[]).map((sub) => closed(sub, isObject ? 'object' : 'any'));
    } else if (keyword === 'example' || keyword === 'const' || keyword === 'enum' || keyword === 'default') {
      out[keyword] = value;
    } else {
      out[keyword] = closed(value);
    }
  }
  // A member of allOf that lists properties describes an object: say so, as strict types want.
  if (allOfOf && !('type' in node) && (node.properties || node.required)) out.type = 'object';
  const open = 'additionalProperties' in node || 'unevaluatedProperties' in node;
  if (isObject && allOfOf !== 'object' && !open && (node.properties || node.allOf)) out.unevaluatedProperties = false;
  return out;
}

// Strict: an unknown keyword or a loose type is an error, except the document's annotations.
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats(ajv);
for (const keyword of annotationKeywords(OPENAPI_DOCUMENT)) ajv.addKeyword(keyword);
// The document's components ride along with each schema (see {@link validator}).
ajv.addKeyword('components');
const components = closed(OPENAPI_DOCUMENT.components);
const compiled = new Map<string, ValidateFunction>();

/** OpenAPI keywords beside JSON Schema (`example`, `discriminator`, `x-…` extensions): annotations here. */
function annotationKeywords(document: unknown): string[] {
  const found = new Set<string>(['example']);
  const walk = (value: unknown) => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== 'object') return;
    for (const [key, sub] of Object.entries(value)) {
      if (key.startsWith('x-') || key === 'discriminator') found.add(key);
      walk(sub);
    }
  };
  walk((document as Json).components);
  walk((document as Json).paths);
  return [...found];
}

function validator(key: string, schema: Json): ValidateFunction {
  let validate = compiled.get(key);
  if (!validate) {
    // The document's components travel with the schema so its `#/components/...` references resolve.
    validate = ajv.compile({ ...(closed(schema) as Json), components });
    compiled.set(key, validate);
  }
  return validate;
}

/** A HEAD request is its GET route's (RFC 9110 §9.3.2), as the document says of every GET. */
function operation(method: string, resource: string): OperationObject | undefined {
  return paths[resource]?.[routeMethod(method).toLowerCase()];
}

/**
 * Why a response does not match what the OpenAPI document promises for its route, or null:
 * the status must be documented with the answer's media type, and a JSON body must match
 * the documented schema with no undocumented field.
 */
export function responseMismatch(method: string, resource: string, status: number, contentType: string | null, body: unknown): string | null {
  const responses = operation(method, resource)?.responses;
  if (!responses) return `${method} ${resource} is not documented`;
  const documented = responses[String(status)];
  if (!documented) return `${method} ${resource} answered ${status}, which is not documented`;
  const media = (contentType ?? '').split(';')[0]!.trim();
  const content = documented.content ?? {};
  if (!(media in content)) return `${method} ${resource} ${status} answered ${media || 'no content type'}, documented: ${Object.keys(content).join(', ')}`;
  // A HEAD answer is its GET's headers without the body.
  if (method === 'HEAD') return null;
  if (media === 'text/event-stream') return streamMismatch(`${method} ${resource} ${status}`, body);
  if (media !== 'application/json') return null;
  const validate = validator(`${method} ${resource} ${status}`, content[media]!.schema);
  return validate(body) ? null : `${method} ${resource} ${status}: ${explain(validate, body)}`;
}

/**
 * Each event's data of a streamed completion is a ChatStreamChunk, and `[DONE]` comes last (if at
 * all); an event that names its type (the Messages API's) carries that `type`, its
 * `message_start` a MessagesResult and its `error` a MessagesError.
 */
function streamMismatch(key: string, body: unknown): string | null {
  if (typeof body !== 'string') return `${key}: a stream, but its text was not given`;
  const validate = validator('ChatStreamChunk', { $ref: '#/components/schemas/ChatStreamChunk' });
  // The Responses API names its events too: its ends carry the whole response, its errors are its own.
  const named: Readonly<Record<string, [string, (data: { message?: unknown; response?: unknown }) => unknown]>> = key.includes('/responses')
    ? { 'response.completed': ['ResponsesResult', (data) => data.response], 'response.incomplete': ['ResponsesResult', (data) => data.response] }
    : { message_start: ['MessagesResult', (data) => data.message], error: ['MessagesError', (data) => data] };
  const events = body.split('\n\n').filter((event) => event.trim() !== '' && !event.startsWith(':'));
  for (const [i, event] of events.entries()) {
    const data = event.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).join('\n');
    if (data === '[DONE]') {
      if (i !== events.length - 1) return `${key}: an event follows [DONE]`;
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return `${key}: event ${i} is not JSON: ${data.slice(0, 80)}`;
    }
    const name = /^event: *(\S+)/m.exec(event)?.[1];
    if (name === undefined) {
      if (!validate(parsed)) return `${key}: event ${i}: ${explain(validate, parsed)}`;
      continue;
    }
    if ((parsed as { type?: unknown }).type !== name) return `${key}: event ${i} is named ${name} but its type is ${JSON.stringify((parsed as { type?: unknown }).type)}`;
    const [schema, part] = named[name] ?? [];
    if (!schema) continue;
    const validateNamed = validator(schema, { $ref: `#/components/schemas/${schema}` });
    if (!validateNamed(part!(parsed as { message?: unknown }))) return `${key}: event ${i}: ${explain(validateNamed, part!(parsed as { message?: unknown }))}`;
  }
  return null;
}

/**
 * Why a request body the service accepted (a 2xx) is one the document would refuse, or null:
 * what the service accepts, the document must describe. JSON bodies are taken as parsed; a
 * form (the token endpoint) as its fields.
 */
export function acceptedRequestMismatch(method: string, resource: string, body: unknown, media = 'application/json'): string | null {
  const schema = operation(method, resource)?.requestBody?.content[media]?.schema;
  if (!schema) return body === undefined ? null : `${method} ${resource} accepted a ${media} body, but documents none`;
  const validate = validator(`${method} ${resource} request ${media}`, schema);
  return validate(body) ? null : `${method} ${resource} accepted a request body the document refuses: ${explain(validate, body)}`;
}

/** The failures, each once, naming an undocumented field or the value refused. */
function explain(validate: ValidateFunction, body: unknown): string {
  const lines = (validate.errors ?? []).map((error) => {
    const field = error.keyword === 'unevaluatedProperties' ? error.params.unevaluatedProperty : error.keyword === 'additionalProperties' ? error.params.additionalProperty : undefined;
    if (field !== undefined) return `${error.instancePath || '/'} has the undocumented field "${field}"`;
    const value = error.instancePath.split('/').slice(1).reduce<any>((at, part) => at?.[part], body);
    return `${error.instancePath || '/'} ${error.message} (got ${JSON.stringify(value)?.slice(0, 80)})`;
  });
  return [...new Set(lines)].join('; ');
}

/**
 * Why the query of a request the service accepted (a 2xx) has a documented parameter with a
 * value the document refuses, or null. Parameters the document does not name are left alone:
 * the catalog ignores them, as caches and proxies add some.
 */
export function acceptedQueryMismatch(method: string, resource: string, search: string): string | null {
  const parameters = (operation(method, resource)?.parameters ?? []).filter((parameter) => parameter.in === 'query');
  const given = new URLSearchParams(search);
  for (const parameter of parameters) {
    for (const raw of given.getAll(parameter.name)) {
      const validate = validator(`${method} ${resource} ?${parameter.name}`, parameter.schema);
      if (!validate(fromQuery(raw, parameter.schema))) {
        return `${method} ${resource} accepted ?${parameter.name}=${raw}, which the document refuses: ${explain(validate, raw)}`;
      }
    }
  }
  return null;
}

/** A query value as the parameter's schema types it (OpenAPI form style; `null` where the type admits it). */
function fromQuery(raw: string, schema: Json): unknown {
  const types: unknown[] = [schema.type].flat();
  if (types.includes('null') && raw === 'null') return null;
  if (types.includes('integer') || types.includes('number')) return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw;
  if (types.includes('boolean')) return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}
