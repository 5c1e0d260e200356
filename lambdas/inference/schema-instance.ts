/**
 * A deterministic, minimal value that a JSON Schema accepts, for the development provider's tool
 * arguments and structured answers: the required properties only, the least string, array and
 * number the bounds allow, the first value of an enumeration, the first branch of `anyOf` and
 * `oneOf`, `allOf` merged, `$ref` resolved within the schema (`#/$defs/...`, `#/definitions/...`
 * or any JSON pointer). Keywords it cannot satisfy by construction (`not`, `if`, most patterns)
 * are ignored: the value is then the closest it can make, not a validated one.
 */

type Schema = Record<string, any>;

/** Why no value could be made: a `$ref` that points nowhere, a `false` schema, a cycle of required members. */
export class SchemaInstanceError extends Error {}

/** Deeper than this is a cycle of required members (or a schema no provider would be sent). */
const MAX_DEPTH = 64;
/** At most this many values (members and items, nested ones included) in one instance, and characters in all its strings. */
const MAX_VALUES = 10_000;
const MAX_CHARACTERS = 100_000;
/** The longest string tried against a `pattern`. */
const MAX_PATTERN_TRIAL = 16;
/** At most this many subschemas read for one instance: `$ref`s reused inside `allOf` would otherwise multiply. */
const MAX_STEPS = 100_000;

/** One instance being made: the schema its `$ref`s point into; how many values and characters it holds, and subschemas were read, so far. */
interface Walk {
  readonly root: unknown;
  made: number;
  characters: number;
  steps: number;
}

/** The minimal value `schema` accepts; `root` is what its `$ref`s point into. */
export function schemaInstance(schema: unknown, root: unknown = schema): unknown {
  return instance(schema, { root, made: 0, characters: 0, steps: 0 }, 0, 0);
}

/**
 * @param variant which of several distinct values to make (0 the least): the items of an array
 * with `uniqueItems` are made 0, 1, 2, ... so that they differ.
 */
function instance(raw: unknown, walk: Walk, depth: number, variant: number): unknown {
  if (depth > MAX_DEPTH) throw new SchemaInstanceError('the schema nests too deeply (a cycle of required members?)');
  if (++walk.made > MAX_VALUES) throw new SchemaInstanceError(`the schema asks for more than ${MAX_VALUES} values`);
  const schema = flatten(raw, walk, depth);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[variant % schema.enum.length];
  switch (typeOf(schema)) {
    case 'object':
      return objectInstance(schema, walk, depth);
    case 'array':
      return arrayInstance(schema, walk, depth);
    case 'string':
      return stringInstance(schema, walk, variant);
    case 'integer':
      return numberInstance(schema, true, variant);
    case 'number':
      return numberInstance(schema, false, variant);
    case 'boolean':
      return variant % 2 === 1;
    default:
      return null;
  }
}

/** The schema with its `$ref`, `allOf` and first `anyOf`/`oneOf` branch folded into one. */
function flatten(raw: unknown, walk: Walk, depth: number): Schema {
  if (depth > MAX_DEPTH) throw new SchemaInstanceError('the schema nests too deeply (a cycle of $ref?)');
  if (++walk.steps > MAX_STEPS) throw new SchemaInstanceError(`the schema takes more than ${MAX_STEPS} subschemas to read`);
  if (raw === false) throw new SchemaInstanceError('the schema accepts no value');
  if (raw === true || raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new SchemaInstanceError('a schema must be an object or a boolean');
  let schema = { ...(raw as Schema) };
  for (let step = 0; step < MAX_DEPTH; step++) {
    const { $ref, allOf, anyOf, oneOf, ...rest } = schema;
    if (typeof $ref === 'string') schema = merge(flatten(resolvePointer($ref, walk.root), walk, depth + 1), { ...rest, ...defined({ allOf, anyOf, oneOf }) });
    else if (Array.isArray(allOf)) schema = allOf.reduce<Schema>((merged, part) => merge(merged, flatten(part, walk, depth + 1)), { ...rest, ...defined({ anyOf, oneOf }) });
    else if (Array.isArray(anyOf) && anyOf.length > 0) schema = merge({ ...rest, ...defined({ oneOf }) }, flatten(anyOf[0], walk, depth + 1));
    else if (Array.isArray(oneOf) && oneOf.length > 0) schema = merge(rest, flatten(oneOf[0], walk, depth + 1));
    else return schema;
  }
  throw new SchemaInstanceError('the schema nests too deeply');
}

const defined = (members: Schema): Schema => Object.fromEntries(Object.entries(members).filter(([, value]) => value !== undefined));

/** The target of a `$ref` inside the root schema: `#`, `#/$defs/Name`, any JSON pointer. */
function resolvePointer(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) throw new SchemaInstanceError(`$ref ${ref} is not within the schema`);
  const segments = ref === '#' || ref === '#/' ? [] : ref.slice(2).split('/');
  let target: unknown = root;
  for (const encoded of segments) {
    let segment: string;
    try {
      segment = decodeURIComponent(encoded).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      throw new SchemaInstanceError(`$ref ${ref} is not a JSON pointer`);
    }
    if (!target || typeof target !== 'object' || !Object.hasOwn(target, segment)) throw new SchemaInstanceError(`$ref ${ref} points nowhere`);
    target = (target as Schema)[segment];
  }
  return target;
}

/** Two schemas that must both hold, as one: bounds tightened, required members and properties joined. */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  const tighter = (key: string, pick: (x: number, y: number) => number) => {
    if (typeof a[key] === 'number' && typeof b[key] === 'number') out[key] = pick(a[key], b[key]);
  };
  for (const key of ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']) tighter(key, Math.max);
  for (const key of ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']) tighter(key, Math.min);
  if (a.type !== undefined && b.type !== undefined) {
    const bTypes = [b.type].flat();
    const both = [a.type].flat().filter((type) => bTypes.includes(type) || (type === 'integer' && bTypes.includes('number')));
    const numberAndInteger = [a.type].flat().includes('number') && bTypes.includes('integer') ? ['integer'] : [];
    out.type = both.length ? both : numberAndInteger.length ? numberAndInteger : b.type;
  }
  if (Array.isArray(a.enum) && Array.isArray(b.enum)) out.enum = a.enum.filter((value) => b.enum.some((other: unknown) => JSON.stringify(other) === JSON.stringify(value)));
  if (Array.isArray(a.required) || Array.isArray(b.required)) out.required = [...new Set([...(a.required ?? []), ...(b.required ?? [])])];
  if (a.properties && b.properties) {
    out.properties = { ...a.properties, ...b.properties };
    for (const name of Object.keys(a.properties)) if (Object.hasOwn(b.properties, name)) out.properties[name] = { allOf: [a.properties[name], b.properties[name]] };
  }
  return out;
}

/** The type to make: the first named other than null (null only when nothing else is allowed), else the one the keywords imply. */
function typeOf(schema: Schema): string {
  const types: string[] = [schema.type ?? []].flat();
  if (types.length) return types.find((type) => type !== 'null') ?? 'null';
  if (schema.properties || schema.required || schema.additionalProperties !== undefined || schema.minProperties) return 'object';
  if (schema.items !== undefined || schema.prefixItems || schema.minItems || schema.contains) return 'array';
  if (schema.minLength !== undefined || schema.maxLength !== undefined || schema.pattern || schema.format) return 'string';
  if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'].some((key) => schema[key] !== undefined)) return 'number';
  return 'null';
}

function objectInstance(schema: Schema, walk: Walk, depth: number): Record<string, unknown> {
  if ((schema.minProperties ?? 0) > MAX_VALUES) throw new SchemaInstanceError(`the schema asks for more than ${MAX_VALUES} values`);
  const properties: Schema = schema.properties ?? {};
  const names: string[] = [...new Set<string>(Array.isArray(schema.required) ? schema.required : [])];
  // minProperties: the optional properties in order, then made-up names the schema lets in.
  for (const name of Object.keys(properties)) if (names.length < (schema.minProperties ?? 0) && !names.includes(name)) names.push(name);
  for (let extra = 0; names.length < (schema.minProperties ?? 0); extra++) if (!names.includes(`key${extra}`)) names.push(`key${extra}`);
  // Object.fromEntries defines own members, so even a property named __proto__ is kept.
  return Object.fromEntries(names.map((name) => [name, instance(memberSchema(schema, name), walk, depth + 1, 0)]));
}

/** The schema a member must meet: its property's, else a matching pattern's, else additionalProperties'. */
function memberSchema(schema: Schema, name: string): unknown {
  if (schema.properties && Object.hasOwn(schema.properties, name)) return schema.properties[name];
  for (const [pattern, member] of Object.entries(schema.patternProperties ?? {})) if (new RegExp(pattern, 'u').test(name)) return member;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : true;
}

function arrayInstance(schema: Schema, walk: Walk, depth: number): unknown[] {
  // Draft 2020-12 tuples are prefixItems and items; earlier drafts' are an items array and additionalItems.
  const prefix: unknown[] = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
  const count = Math.max(schema.minItems ?? 0, schema.contains !== undefined ? (schema.minContains ?? 1) : 0);
  if (count > MAX_VALUES) throw new SchemaInstanceError(`the schema asks for more than ${MAX_VALUES} values`);
  return Array.from({ length: count }, (_, index) => {
    const item = index < prefix.length ? prefix[index] : rest;
    const itemSchema = schema.contains !== undefined && index < (schema.minContains ?? 1) ? { allOf: [item ?? true, schema.contains] } : item;
    return instance(itemSchema, walk, depth + 1, schema.uniqueItems === true ? index : 0);
  });
}

/** Values of the common formats, each the least of its kind. */
const FORMATS: Readonly<Record<string, string>> = {
  'date-time': '1970-01-01T00:00:00Z',
  date: '1970-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'a@example.com',
  'idn-email': 'a@example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  uri: 'https://example.com',
  'uri-reference': 'https://example.com',
  iri: 'https://example.com',
  'iri-reference': 'https://example.com',
  url: 'https://example.com',
  uuid: '00000000-0000-0000-0000-000000000000',
  regex: '.*',
  'json-pointer': '',
};

function stringInstance(schema: Schema, walk: Walk, variant: number): string {
  const minLength: number = schema.minLength ?? 0;
  walk.characters += minLength;
  if (walk.characters > MAX_CHARACTERS) throw new SchemaInstanceError(`the schema asks for strings of more than ${MAX_CHARACTERS} characters`);
  const maxLength: number = schema.maxLength ?? Infinity;
  const fits = (value: string) => [...value].length >= minLength && [...value].length <= maxLength;
  // Distinct for distinct variants: the variant in base 26 (a = 0), padded with a to minLength.
  let digits = '';
  for (let rest = variant; rest > 0; rest = Math.floor(rest / 26)) digits = String.fromCharCode(97 + (rest % 26)) + digits;
  const plain = digits.padStart(minLength, 'a');
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format !== undefined && variant === 0 && fits(format)) return format;
  if (typeof schema.pattern !== 'string') return plain;
  const pattern = new RegExp(schema.pattern, 'u');
  const candidates = [plain, format ?? '', 'a', '0', 'A', 'a'.repeat(minLength), '0'.repeat(Math.max(minLength, 1)), 'A'.repeat(Math.max(minLength, 1)), ...Object.values(FORMATS)];
  // Short candidates only: a pattern that backtracks (`^(a|a)*b$`) takes time exponential in the length tried.
  return candidates.find((candidate) => candidate.length <= MAX_PATTERN_TRIAL && fits(candidate) && pattern.test(candidate)) ?? plain;
}

function numberInstance(schema: Schema, integer: boolean, variant: number): number {
  // Draft 4 writes exclusive bounds as booleans beside minimum and maximum.
  const low = bound(schema.minimum, schema.exclusiveMinimum, Math.max);
  const high = bound(schema.maximum, schema.exclusiveMaximum, Math.min);
  const fitsLow = (value: number) => low.value === undefined || (low.exclusive ? value > low.value : value >= low.value);
  const fitsHigh = (value: number) => high.value === undefined || (high.exclusive ? value < high.value : value <= high.value);
  const step: number | undefined = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : integer ? 1 : undefined;
  if (step !== undefined) {
    // Multiples k * step: the k nearest 0 within the bounds, then the next ones for other variants.
    let least = low.value === undefined ? -Infinity : Math.ceil(low.value / step);
    if (low.value !== undefined && !fitsLow(least * step)) least++;
    let most = high.value === undefined ? Infinity : Math.floor(high.value / step);
    if (high.value !== undefined && !fitsHigh(most * step)) most--;
    const start = least > 0 ? least : most < 0 ? most : 0;
    const k = start + variant <= most ? start + variant : start - variant >= least ? start - variant : start;
    return Number((k * step).toPrecision(15)) + 0;
  }
  let value = 0;
  if (!fitsLow(0)) value = low.exclusive ? (high.value !== undefined && !fitsHigh(low.value! + 1) ? (low.value! + high.value) / 2 : low.value! + 1) : low.value!;
  else if (!fitsHigh(0)) value = high.exclusive ? (low.value !== undefined && !fitsLow(high.value! - 1) ? (low.value + high.value!) / 2 : high.value! - 1) : high.value!;
  if (variant === 0) return value;
  // Other variants between this value and the far bound (or past it, with no far bound).
  const room = value >= 0 ? high.value : low.value;
  const next = room === undefined ? value + (value >= 0 ? variant : -variant) : value + (room - value) * (variant / (variant + 1));
  return fitsLow(next) && fitsHigh(next) ? next : value;
}

/** A lower or upper bound, from the numeric keyword and the exclusive one (a number, or draft 4's boolean). */
function bound(inclusive: unknown, exclusive: unknown, tighter: (a: number, b: number) => number): { value?: number; exclusive: boolean } {
  const plain = typeof inclusive === 'number' ? inclusive : undefined;
  if (exclusive === true && plain !== undefined) return { value: plain, exclusive: true };
  if (typeof exclusive !== 'number') return { value: plain, exclusive: false };
  if (plain === undefined || tighter(plain, exclusive) === exclusive) return { value: exclusive, exclusive: true };
  return { value: plain, exclusive: false };
}
