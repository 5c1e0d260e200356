/**
 * A provider's answer in the public response shapes (the public document's `ChatResult` and
 * `ChatStreamChunk`, completion-schemas.json), whatever the provider sent: the official SDK
 * refuses an answer that lacks a required member (`system_fingerprint`, which many providers
 * omit) or holds a null the schema does not allow (`usage: null` in OpenAI-style chunks).
 * One walk over the public schema decides, member by member: a required member missing or of
 * another type is filled in (null where allowed, a one-value enumeration's value, an object or
 * array built the same way, or what the gateway knows: {@link AnswerFacts}); an optional member
 * of the wrong type is left out; the provider's own members are kept as sent. `id` (one
 * generation id for every chunk), `model` and `provider` (added, as the public service does)
 * are always the gateway's.
 */
import completionSchemas from '../openapi/completion-schemas.json';
import type { UsageRecord } from '../usage/usage';
import { countOf } from '../counts';

type Json = Record<string, any>;

const SCHEMAS: Readonly<Record<string, Json>> = completionSchemas.schemas;

/** What the gateway knows of the answer it relays. */
export interface AnswerFacts {
  /** The generation id: the answer's and every chunk's `id`, whatever the provider sent (the usage chunk is the gateway's own). */
  readonly id: string;
  /** Unix seconds: when the request arrived. */
  readonly created: number;
  /** The routed model's id. */
  readonly model: string;
  /** The provider whose endpoint answered. */
  readonly provider: string;
}

/** A non-streamed answer (`ChatResult`) with the routed model and provider. */
export function publicCompletion(body: Readonly<Json>, facts: AnswerFacts): Json {
  return conformTop(body, 'ChatResult', facts);
}

/** One chunk of a streamed answer (`ChatStreamChunk`), an error chunk included. */
export function publicChunk(chunk: Readonly<Json>, facts: AnswerFacts): Json {
  return conformTop(chunk, 'ChatStreamChunk', facts);
}

/**
 * The answer's `usage` (the public `ChatUsage`): the tokens counted and what the acting key was
 * charged for them, the very cost its usage (`GET /key`) grew by, split into its prompt and
 * completion parts. The provider's own members (token details) are kept; its counts and any
 * cost it reports are the gateway's. Keys are the gateway's own, never the caller's (`is_byok`).
 */
export function publicUsage(reported: unknown, charged: UsageRecord): Json {
  const provider = typeof reported === 'object' && reported !== null && !Array.isArray(reported) ? (reported as Json) : {};
  return {
    ...provider,
    prompt_tokens: charged.promptTokens,
    completion_tokens: charged.completionTokens,
    total_tokens: charged.promptTokens + charged.completionTokens,
    cost: Number(charged.cost),
    cost_details: {
      // What an upstream billed a caller's own key; there is none.
      upstream_inference_cost: null,
      upstream_inference_prompt_cost: Number(charged.costParts.prompt),
      upstream_inference_completions_cost: Number(charged.costParts.completion),
    },
    is_byok: false,
  };
}

/**
 * A failure once the stream has started, as the last chunk: a `ChatStreamChunk` whose `error`
 * carries the code and message of the common error body (docs/reference.md#the-common-error-body), which OpenAI-compatible clients and the official
 * SDK both read.
 */
export function errorChunk(error: { code: number; message: string }, facts: AnswerFacts): Json {
  return publicChunk({ choices: [], error: { code: error.code, message: error.message } }, facts);
}

function conformTop(value: Readonly<Json>, schemaName: string, facts: AnswerFacts): Json {
  const conformed = conform(value, SCHEMAS[schemaName]!, '', 0, fillsFor(facts));
  // The top-level members are all fillable, so only a non-object answer fails; callers check that.
  const out = conformed.ok ? (conformed.value as Json) : {};
  return { ...out, id: facts.id, model: facts.model, provider: facts.provider };
}

/**
 * Values the gateway supplies for required members the schema cannot fill by itself, by path
 * (`[]` for an array item): given the object being built and its position in its array.
 */
type Fills = Readonly<Record<string, (parent: Json, index: number) => unknown>>;

const count = (value: unknown): number => countOf(value) ?? 0;

function fillsFor(facts: AnswerFacts): Fills {
  return {
    id: () => facts.id,
    created: () => facts.created,
    model: () => facts.model,
    'choices[].index': (_parent, index) => index,
    'usage.prompt_tokens': () => 0,
    'usage.completion_tokens': () => 0,
    'usage.total_tokens': (usage) => count(usage.prompt_tokens) + count(usage.completion_tokens),
    // A provider's error with a string code (`"rate_limit_exceeded"`): the gateway's status for a provider failure.
    'error.code': () => 502,
    'error.message': () => `Provider ${facts.provider} failed`,
  };
}

type Conformed = { ok: true; value: unknown } | { ok: false };

/** The schema a `$ref`, or an `allOf` of one `$ref` and annotations, stands for. */
function resolve(schema: Json): Json {
  if (typeof schema.$ref === 'string') return resolve(SCHEMAS[schema.$ref.slice('#/components/schemas/'.length)]!);
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0 && schema.allOf.every((part: Json) => part.$ref || !part.type)) {
    const [first, ...rest] = schema.allOf as Json[];
    return { ...resolve(first!), ...Object.assign({}, ...rest.filter((part) => !part.$ref)) };
  }
  return schema;
}

function typesOf(schema: Json): string[] | undefined {
  if (schema.type === undefined) return undefined;
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

/**
 * `value` made to satisfy `schema`'s types and required members, or not ok when it cannot be:
 * deeper keywords (`anyOf` content parts, enumerations of many values, formats) are the
 * provider's to get right and left as sent.
 */
function conform(value: unknown, raw: Json, path: string, index: number, fills: Fills): Conformed {
  const schema = resolve(raw);
  const types = typesOf(schema);
  if (types && !types.some((type) => hasType(value, type))) return { ok: false };
  if (Array.isArray(value) && schema.items) {
    const items = value.map((item, i) => conform(item, schema.items, `${path}[]`, i, fills));
    // An item that cannot be made whole (a choice that is not an object) is left out.
    return { ok: true, value: items.flatMap((item) => (item.ok ? [item.value] : [])) };
  }
  if (!hasType(value, 'object') || !schema.properties) return { ok: true, value };
  const out: Json = { ...(value as Json) };
  const required = new Set<string>(schema.required ?? []);
  for (const [name, member] of Object.entries(schema.properties as Json)) {
    const memberPath = path ? `${path}.${name}` : name;
    if (name in out) {
      const conformed = conform(out[name], member, memberPath, 0, fills);
      if (conformed.ok) {
        out[name] = conformed.value;
        continue;
      }
      delete out[name];
    }
    if (!required.has(name)) continue;
    const filled = fill(member, memberPath, out, index, fills);
    if (!filled.ok) return { ok: false };
    out[name] = filled.value;
  }
  return { ok: true, value: out };
}

/** The value of a required member the provider left out. */
function fill(raw: Json, path: string, parent: Json, index: number, fills: Fills): Conformed {
  const supplied = fills[path];
  if (supplied) return { ok: true, value: supplied(parent, index) };
  const schema = resolve(raw);
  const types = typesOf(schema) ?? [];
  const values: unknown[] | undefined = 'const' in schema ? [schema.const] : schema.enum;
  if (types.includes('null') || values?.includes(null)) return { ok: true, value: null };
  if (values?.length === 1) return { ok: true, value: values[0] };
  if (types.includes('object')) return conform({}, schema, path, index, fills);
  if (types.includes('array')) return { ok: true, value: [] };
  return { ok: false };
}
