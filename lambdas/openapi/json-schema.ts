import { ID_PATTERNS } from '../ids';
import type { Json } from '../route-definition';

export type { Json };

/** A reference to a schema of the document's `components.schemas`. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A value with a character other than white space: not blank. */
export const NON_BLANK = '\\S';

/** The lowercase hex SHA-256 naming an API key (lambdas/ids.ts). */
export const KEY_HASH_PATTERN = ID_PATTERNS['key-hash'].source;

/** A string of 1 to `maxLength` characters that is not only white space. */
export const nonBlank = (maxLength: number, extra: Json = {}): Json => ({ type: 'string', minLength: 1, maxLength, pattern: NON_BLANK, ...extra });

/**
 * What no name or description may hold: control characters (C0, DEL and C1: a NUL or an escape
 * sequence garbles every listing, log line and terminal that shows it) and UTF-16 surrogates
 * not part of a pair (no UTF-8 encodes them: stores, logs and clients would each mangle them
 * their own way). Matched with the `u` flag, as every pattern of the request schemas, so a
 * surrogate pair (an emoji) is one character and passes.
 */
export const UNSAFE_TEXT = '[\\p{Cc}\\p{Cs}]';

/**
 * The text rule of every name and description a request may set (keys, workspaces, guardrails,
 * issuers, policies): 1 to `maxLength` characters, not only white space, and nothing
 * {@link UNSAFE_TEXT} matches. `nullable` adds null (a description removed or not given).
 * test/lambdas/openapi/text-fields.test.ts holds every `name` and `description` of every
 * request body to it.
 */
export const text = (maxLength: number, { nullable = false }: { nullable?: boolean } = {}): Json =>
  nonBlank(maxLength, { ...(nullable ? { type: ['string', 'null'] } : {}), ...SAFE_TEXT });

/** The keywords that refuse {@link UNSAFE_TEXT}, for strings that are not names (a guardrail's model names). */
export const SAFE_TEXT: Json = {
  // `type` inside: a null is not a string with unsafe characters.
  not: { type: 'string', pattern: UNSAFE_TEXT },
  'x-invalid': { not: 'must not contain control characters or unpaired UTF-16 surrogates' },
};

/**
 * What a request refused by this schema is told (docs/reference.md#the-common-error-body: `Invalid <parameter>: <reason>`),
 * where the generic reason of lambdas/openapi/request-validation.ts would not say it best: one
 * reason for any failure of the schema's own keywords, or one per keyword (`null`: the value is
 * null where the schema does not allow it). A reason may name the failure's parameters, e.g.
 * `{limit}` or `{additionalProperty}`.
 */
export const invalid = (reason: string | Readonly<Record<string, string>>) => ({ 'x-invalid': reason });

/** A field the service sets: a request that sends it is told so (not "unknown field"). */
export const READ_ONLY: Json = { readOnly: true, not: {} };
