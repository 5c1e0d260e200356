/**
 * The examples of the public schemas, made to follow modelgate's. A schema modelgate adapts
 * (schemas.ts `adapt`) loses members, gains some and types others differently, while the
 * examples around it (a list of guardrails, a workspace answer) still show the public shape: a
 * guardrail with `content_filters`, which modelgate refuses; a workspace without the
 * `guardrail_ids` it always has. Each example is walked with its schema, as the test suites hold
 * answers to it (an object lists every member it may have), and made to fit: a member the schema
 * does not describe is left out; a required member that is missing, or a value of another type,
 * becomes `plainest`; the rest is kept. Alternatives (`anyOf`, `oneOf`) are kept as written:
 * their examples are the public document's own, of schemas modelgate does not change.
 */
import type { Json } from '../openapi/json-schema';

type Schemas = Readonly<Record<string, Json>>;

/** The component schemas with every `example` at any depth made to fit its schema. */
export function conformingExamples(schemas: Schemas): Record<string, Json> {
  return Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, withExamples(schema, schemas) as Json]));
}

function withExamples(node: unknown, schemas: Schemas): unknown {
  if (Array.isArray(node)) return node.map((item) => withExamples(item, schemas));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [keyword, value] of Object.entries(node as Json)) {
    // Values, not schemas: left as they are.
    if (keyword === 'example' || keyword === 'const' || keyword === 'enum' || keyword === 'default') out[keyword] = value;
    else if (keyword === 'properties') out[keyword] = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, withExamples(sub, schemas)]));
    else out[keyword] = withExamples(value, schemas);
  }
  if ('example' in out) out.example = conform(out.example, out, schemas);
  return out;
}

/** The schema a `$ref`, or an `allOf` of schemas, stands for. */
function resolved(schema: Json, schemas: Schemas): Json {
  if (typeof schema.$ref === 'string') return resolved({ ...schemas[schema.$ref.replace('#/components/schemas/', '')], ...withoutRef(schema) }, schemas);
  if (!Array.isArray(schema.allOf)) return schema;
  const { allOf, ...rest } = schema;
  const parts = (allOf as Json[]).map((part) => resolved(part, schemas));
  return {
    ...Object.assign({}, ...parts, rest),
    properties: Object.assign({}, ...parts.map((part) => part.properties ?? {}), rest.properties ?? {}),
    required: [...new Set(parts.flatMap((part) => (part.required as string[] | undefined) ?? []).concat((rest.required as string[] | undefined) ?? []))],
  };
}

const withoutRef = ({ $ref: _ref, ...rest }: Json): Json => rest;

const typesOf = (schema: Json): string[] => (schema.type === undefined ? [] : [schema.type].flat());

function hasType(value: unknown, type: string): boolean {
  if (type === 'null') return value === null;
  if (type === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value);
  if (type === 'array') return Array.isArray(value);
  if (type === 'integer') return Number.isInteger(value);
  if (type === 'number') return typeof value === 'number';
  return typeof value === type;
}

function conform(value: unknown, raw: Json, schemas: Schemas): unknown {
  const schema = resolved(raw, schemas);
  if (schema.anyOf || schema.oneOf) return value;
  const types = typesOf(schema);
  if (types.length > 0 && !types.some((type) => hasType(value, type))) return plainest(schema, schemas);
  if (Array.isArray(value)) return schema.items ? value.map((item) => conform(item, schema.items, schemas)) : value;
  if (!hasType(value, 'object') || !schema.properties) return value;
  const properties = schema.properties as Json;
  const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  const out: Json = {};
  for (const [name, member] of Object.entries(value as Json)) {
    if (name in properties) out[name] = conform(member, properties[name], schemas);
    else if (open) out[name] = member;
  }
  for (const name of (schema.required as string[] | undefined) ?? []) {
    if (!(name in out) && name in properties) out[name] = plainest(properties[name], schemas);
  }
  return out;
}

/**
 * A value of the schema for a member an example lacks or has of another type: the schema's own
 * example, else the plainest value of its type (null where allowed, the first value of an
 * enumeration, `false`, `0` or its minimum, `""` or a value of its format, `[]`, an object of its
 * required members).
 */
function plainest(raw: Json, schemas: Schemas): unknown {
  const schema = resolved(raw, schemas);
  if ('example' in schema) return conform(schema.example, schema, schemas);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const types = typesOf(schema);
  if (types.includes('null')) return null;
  switch (types[0]) {
    case 'object':
      return conform({}, schema, schemas);
    case 'array':
      return [];
    case 'boolean':
      return false;
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    default:
      return FORMAT_EXAMPLES[schema.format as string] ?? '';
  }
}

/** A value of each format a string member may have. */
const FORMAT_EXAMPLES: Readonly<Record<string, string>> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  uri: 'https://example.com',
};
