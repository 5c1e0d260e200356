/**
 * Requests validated by the schemas that describe them: the OpenAPI document's request schemas,
 * compiled ahead of time by scripts/compile-request-schemas.ts (lambdas/openapi/validators/,
 * one module per function), and one function,
 * {@link invalidRequest}, that turns a validator's refusal into the 400 in the common error body (docs/reference.md#the-common-error-body)
 * (`Invalid <parameter>: <reason>`, `metadata.parameter`). Rules a schema cannot state (host
 * rules, key admission, CEL, an expiry in the future) stay with the modules that own them.
 */
import { invalidParameter, type InvalidInputError } from '../errors';
import { ID_DESCRIPTIONS } from '../ids';
import { KEY_HASH_PATTERN, NON_BLANK, type Json } from './json-schema';

/** What a validator says of a refused value (ajv's `ErrorObject`, verbose). */
export interface RequestValidationError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, any>;
  message?: string;
  schema?: unknown;
  parentSchema?: Record<string, any>;
  data?: unknown;
}

/** A compiled request schema (lambdas/openapi/validators/): true when the value is a `T`; otherwise `errors` says why. */
export interface RequestValidator<T> {
  (value: unknown): value is T;
  errors?: RequestValidationError[] | null;
}

/** The value, once its schema accepts it; a 400 naming what is wrong otherwise. */
export function validated<T>(validate: RequestValidator<T>, value: unknown): T {
  if (validate(value)) return value;
  throw invalidRequest(validate.errors ?? []);
}

/**
 * A request's query string as API Gateway passes it (and the local server, in the same shape):
 * the last value of each name, and every value of each name, which is authoritative when present.
 */
export interface QueryString {
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>> | null;
  readonly multiValueQueryStringParameters?: Readonly<Record<string, readonly string[] | undefined>> | null;
}

/**
 * A query string as its schema sees it, the one reader of every route's declared parameters.
 * Each is single-valued: one given twice is a 400 (`offset=0&offset=50` would page by whichever
 * copy a proxy keeps). Query values are text: a parameter the document types as an integer takes
 * digits (`limit=10`), a boolean `true` or `false`; anything else stays text and its schema
 * refuses it, an empty value (`limit=`) included. `null` where the parameter may be null (the
 * public document's `offset`) means not given. Parameters not declared are left out (caches and
 * proxies add some).
 */
export function queryValues(query: QueryString, parameters: readonly { readonly name: string; readonly schema: Json }[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const { name, schema } of parameters) {
    const given = sentValues(query, name);
    if (given.length === 0) continue;
    if (given.length > 1) throw invalidParameter(name, 'must be given once');
    const value = given[0]!;
    const types: readonly string[] = [schema.type ?? []].flat();
    if (types.includes('integer')) {
      if (value === 'null' && types.includes('null')) continue;
      values[name] = /^\d+$/.test(value) ? Number(value) : value;
    } else if (types.includes('boolean')) {
      values[name] = value === 'true' ? true : value === 'false' ? false : value;
    } else {
      values[name] = value;
    }
  }
  return values;
}

/** Every value sent for a parameter name; own entries only, so `constructor` finds nothing inherited. */
function sentValues({ queryStringParameters: single, multiValueQueryStringParameters: multi }: QueryString, name: string): readonly string[] {
  if (multi && Object.hasOwn(multi, name)) return multi[name] ?? [];
  const value = single && Object.hasOwn(single, name) ? single[name] : undefined;
  return value === undefined ? [] : [value];
}

/** Reasons of the patterns and formats the request schemas share. */
const PATTERN_REASONS: Readonly<Record<string, string>> = {
  [NON_BLANK]: 'must be a non-empty string',
  [KEY_HASH_PATTERN]: `must be ${ID_DESCRIPTIONS['key-hash']}`,
};
const FORMAT_REASONS: Readonly<Record<string, string>> = { uuid: `must be ${ID_DESCRIPTIONS.uuid}` };

/**
 * The refusal, in the common error body (docs/reference.md#the-common-error-body), of a value a request schema refused, from the most telling of the
 * validator's errors: a field the request may not send (unknown, or set by the service), as
 * it is likely a misspelling that explains the rest; else the first, in the schema's order.
 * - the parameter is the offending member's path (`claim_checks.scopes`, `messages[0].role`):
 *   the missing or unknown field itself; an object's unknown member names the object; a
 *   failing item of a list of plain values names the list, and the reason its position
 *   (`key_hashes`: `item 1 must be ...`); a refused body as a whole is `body`;
 * - the reason is the schema's own (`x-invalid`, json-schema.ts) when it gives one for the
 *   failing keyword, else one read from the schema: its type and bounds, its enumeration, the
 *   pattern or format it names.
 */
export function invalidRequest(errors: readonly RequestValidationError[]): InvalidInputError {
  const unsendable = (error: RequestValidationError) => error.keyword === 'additionalProperties' || error.parentSchema?.readOnly === true;
  // `if` only says that its `then` failed, which an error of its own says better.
  const error = errors.find(unsendable) ?? errors.find((candidate) => candidate.keyword !== 'if');
  if (!error) return invalidParameter('body', 'is not valid');
  const { keyword, params } = error;
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (keyword === 'required') path.push(params.missingProperty);
  if (keyword === 'additionalProperties' && path.length === 0) path.push(params.additionalProperty);
  const schema = error.parentSchema ?? {};
  let position = '';
  const last = path.at(-1);
  if (last !== undefined && /^\d+$/.test(last) && !typesOf(schema).includes('object')) {
    path.pop();
    position = `item ${last} `;
  }
  const parameter = path.length === 0 ? 'body' : path.reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : `${name}.${segment}`));
  return invalidParameter(parameter, position + reason(error, schema));
}

function reason({ keyword, params, data, instancePath }: RequestValidationError, schema: Json): string {
  const own = schema['x-invalid'] as string | Record<string, string> | undefined;
  const stated = typeof own === 'string' ? own : own && ((data === null && own.null) || own[keyword]);
  if (stated) return stated.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name]));
  if (schema.readOnly) return 'is set by the service and read-only';
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      // A body's unknown field is the parameter; inside an object the object is, and the reason names the field.
      return instancePath === '' ? 'is not a known field' : `has no field "${params.additionalProperty}"`;
    case 'minProperties':
      return `give at least one of ${Object.keys(schema.properties ?? {}).filter((name) => !schema.properties[name].readOnly).join(', ')}`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).filter((value) => value !== null).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'pattern':
      return PATTERN_REASONS[params.pattern] ?? `must match ${params.pattern}`;
    case 'format':
      return FORMAT_REASONS[params.format] ?? `must be a ${params.format}`;
    case 'maxLength':
      return `must be at most ${params.limit} characters`;
    case 'maxItems':
      return `must have at most ${params.limit} items`;
    case 'minItems':
      return params.limit === 1 ? 'must be a non-empty array' : `must have at least ${params.limit} items`;
    case 'type':
    case 'minLength':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${shapes(schema)}`;
    default:
      return 'is not allowed';
  }
}

const typesOf = (schema: Json): string[] => [schema.type ?? []].flat();

/**
 * What a schema's values are, in words, `null` aside (a null where none is allowed is told what
 * the value must be): "a non-empty string", "an integer from 1 to 100", "an array".
 */
function shapes(schema: Json): string {
  const bounds = (noun: string) => {
    const { minimum: min, maximum: max } = schema;
    if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
    if (min !== undefined) return `${noun} of at least ${min}`;
    if (max !== undefined) return `${noun} of at most ${max}`;
    return noun;
  };
  const words: Readonly<Record<string, string>> = {
    string: schema.minLength >= 1 ? 'a non-empty string' : 'a string',
    integer: bounds('an integer'),
    number: bounds('a number'),
    boolean: 'a boolean',
    array: schema.minItems >= 1 ? 'a non-empty array' : 'an array',
    object: 'an object',
  };
  const named = typesOf(schema)
    .filter((type) => type !== 'null')
    .map((type) => words[type] ?? type);
  return named.length ? named.join(' or ') : 'a valid value';
}
