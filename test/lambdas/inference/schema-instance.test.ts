import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import { schemaInstance, SchemaInstanceError } from '../../../lambdas/inference/schema-instance';

const ajv2020 = addFormats(new Ajv2020({ strict: false, allErrors: true }));
const ajv7 = addFormats(new Ajv({ strict: false, allErrors: true }));

/** The value made for `schema`, after checking that the schema accepts it. */
function validInstance(schema: object, ajv: Ajv | Ajv2020 = ajv2020): unknown {
  const value = schemaInstance(schema);
  const validate = ajv.compile(schema);
  if (!validate(value)) throw new Error(`${JSON.stringify(value)} does not fit ${JSON.stringify(schema)}: ${ajv.errorsText(validate.errors)}`);
  return value;
}

/**
 * The development provider's tool arguments and structured answers: the least value a JSON Schema
 * accepts, made without a validator (none ships in the functions), each checked here with ajv.
 */
describe('schemaInstance', () => {
  it.each<[string, object, unknown]>([
    ['an object: its required properties only', { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['b'] }, { b: 0 }],
    ['a string of minLength', { type: 'string', minLength: 3 }, 'aaa'],
    ['an enumeration: its first value', { type: 'string', enum: ['celsius', 'fahrenheit'] }, 'celsius'],
    ['const', { const: { x: [1] } }, { x: [1] }],
    ['an integer above an exclusive minimum', { type: 'integer', exclusiveMinimum: 0 }, 1],
    ['a number within a positive range', { type: 'number', minimum: 2.5, maximum: 3 }, 2.5],
    ['a number between exclusive bounds', { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 0.5 }, 0.25],
    ['a negative range', { type: 'integer', minimum: -10, maximum: -3 }, -3],
    ['a multiple within bounds', { type: 'integer', minimum: 7, multipleOf: 5 }, 10],
    ['an array of minItems', { type: 'array', items: { type: 'string' }, minItems: 2 }, ['', '']],
    ['unique items', { type: 'array', items: { type: 'integer', minimum: 1 }, minItems: 3, uniqueItems: true }, [1, 2, 3]],
    ['unique strings of a length', { type: 'array', items: { type: 'string', minLength: 2, maxLength: 2 }, minItems: 2, uniqueItems: true }, ['aa', 'ab']],
    ['a tuple', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }], minItems: 2 }, ['', false]],
    ['contains', { type: 'array', items: { type: 'integer' }, contains: { minimum: 5 } }, [5]],
    ['anyOf: the first branch', { anyOf: [{ type: 'string', minLength: 1 }, { type: 'null' }] }, 'a'],
    ['oneOf with sibling keywords', { type: 'object', required: ['kind'], oneOf: [{ properties: { kind: { const: 'a' } } }, { properties: { kind: { const: 'b' } } }] }, { kind: 'a' }],
    ['allOf merged', { allOf: [{ type: 'object', required: ['a'], properties: { a: { type: 'integer', minimum: 1 } } }, { required: ['b'], properties: { a: { maximum: 9 }, b: { type: 'boolean' } } }] }, { a: 1, b: false }],
    ['a nullable type: the non-null one', { type: ['null', 'string'] }, ''],
    ['null alone', { type: 'null' }, null],
    ['formats', { type: 'object', required: ['at', 'mail', 'id', 'site'], properties: { at: { type: 'string', format: 'date-time' }, mail: { type: 'string', format: 'email' }, id: { type: 'string', format: 'uuid' }, site: { type: 'string', format: 'uri' } } }, { at: '1970-01-01T00:00:00Z', mail: 'a@example.com', id: '00000000-0000-0000-0000-000000000000', site: 'https://example.com' }],
    ['a pattern some candidate meets', { type: 'string', pattern: '^[0-9]+$' }, '0'],
    ['minProperties beyond the required', { type: 'object', properties: { a: { type: 'string' } }, minProperties: 2 }, { a: '', key0: null }],
    ['additionalProperties for a required name not listed', { type: 'object', required: ['x'], additionalProperties: { type: 'integer', minimum: 4 } }, { x: 4 }],
    ['a property named __proto__, kept as a member', { type: 'object', required: ['__proto__'], properties: { ['__proto__']: { type: 'integer' } } }, JSON.parse('{"__proto__":0}')],
  ])('%s', (_name, schema, expected) => {
    expect(validInstance(schema)).toEqual(expected);
  });

  it('resolves $ref into $defs, nested and recursive (the recursion optional)', () => {
    const schema = {
      type: 'object',
      properties: { tree: { $ref: '#/$defs/node' } },
      required: ['tree'],
      $defs: {
        node: { type: 'object', properties: { name: { type: 'string', minLength: 1 }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name', 'children'] },
      },
    };
    expect(validInstance(schema)).toEqual({ tree: { name: 'a', children: [] } });
  });

  it('resolves draft-07 definitions and the tuple form of items', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      required: ['pair', 'unit'],
      properties: { pair: { type: 'array', items: [{ type: 'integer', minimum: 3 }, { $ref: '#/definitions/unit' }], minItems: 2 }, unit: { $ref: '#/definitions/unit' } },
      definitions: { unit: { enum: ['m', 'km'] } },
    };
    expect(validInstance(schema, ajv7)).toEqual({ pair: [3, 'm'], unit: 'm' });
  });

  it('fits the JSON Schemas zod writes, strict mode and all', () => {
    const schema = z.object({
      city: z.string().min(2).describe('A city'),
      days: z.number().int().min(1).max(14),
      units: z.enum(['metric', 'imperial']),
      when: z.iso.datetime(),
      tags: z.array(z.string()).min(1),
      location: z.object({ lat: z.number().gte(-90).lte(90), lon: z.number().gte(-180).lte(180) }),
      note: z.string().nullable(),
      kind: z.discriminatedUnion('type', [z.object({ type: z.literal('a'), a: z.string() }), z.object({ type: z.literal('b'), b: z.number() })]),
      extra: z.string().optional(),
    });
    const value = validInstance(z.toJSONSchema(schema));
    expect(schema.parse(value)).toEqual({ city: 'aa', days: 1, units: 'metric', when: '1970-01-01T00:00:00Z', tags: [''], location: { lat: 0, lon: 0 }, note: '', kind: { type: 'a', a: '' } });
  });

  it.each<[string, unknown]>([
    ['a $ref that points nowhere', { $ref: '#/$defs/missing' }],
    ['a $ref outside the schema', { $ref: 'https://example.com/schema.json' }],
    ['a false schema', { type: 'object', required: ['a'], properties: { a: false } }],
    ['a cycle of required members', { $defs: { loop: { type: 'object', required: ['next'], properties: { next: { $ref: '#/$defs/loop' } } } }, $ref: '#/$defs/loop' }],
    ['a $ref to itself', { $defs: { self: { $ref: '#/$defs/self' } }, $ref: '#/$defs/self' }],
    ['a pointer that does not decode', { $ref: '#/$defs/%E0%A4%A' }],
    ['a billion items', { type: 'array', minItems: 1e9 }],
    ['a string of a billion characters', { type: 'string', minLength: 1e9 }],
    ['a billion members', { type: 'object', minProperties: 1e9 }],
    ['long strings, many of them', { type: 'array', minItems: 1000, items: { type: 'string', minLength: 1000 } }],
    ['values that multiply', { $defs: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`d${i}`, { type: 'array', minItems: 4, items: { $ref: `#/$defs/d${i + 1}` } }])), $ref: '#/$defs/d0' }],
    ['subschemas that multiply', { $defs: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`d${i}`, { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] }])), $ref: '#/$defs/d0' }],
  ])('says why no value can be made for %s, at once', (_name, schema) => {
    const started = Date.now();
    expect(() => schemaInstance(schema)).toThrow(SchemaInstanceError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('tries only short strings against a pattern, so one that backtracks cannot hold it up', () => {
    const started = Date.now();
    expect(schemaInstance({ type: 'string', minLength: 40, pattern: '^(a|a)*b$' })).toBe('a'.repeat(40));
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
