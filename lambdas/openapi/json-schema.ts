import { ID_PATTERNS } from '../ids';

/** A JSON Schema (or any JSON object) of the OpenAPI document. */
export type Json = Record<string, any>;

/** A reference to a schema of the document's `components.schemas`. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A value with a character other than white space: not blank. */
export const NON_BLANK = '\\S';

/** The lowercase hex SHA-256 naming an API key (lambdas/ids.ts). */
export const KEY_HASH_PATTERN = ID_PATTERNS['key-hash'].source;

/** A string of 1 to `maxLength` characters that is not only white space. */
export const nonBlank = (maxLength: number, extra: Json = {}): Json => ({ type: 'string', minLength: 1, maxLength, pattern: NON_BLANK, ...extra });

/**
 * What a request refused by this schema is told (SPEC 7.1: `Invalid <parameter>: <reason>`),
 * where the generic reason of lambdas/http/request-validation.ts would not say it best: one
 * reason for any failure of the schema's own keywords, or one per keyword (`null`: the value is
 * null where the schema does not allow it). A reason may name the failure's parameters, e.g.
 * `{limit}` or `{additionalProperty}`.
 */
export const invalid = (reason: string | Readonly<Record<string, string>>) => ({ 'x-invalid': reason });

/** A field the service sets: a request that sends it is told so (not "unknown field"). */
export const READ_ONLY: Json = { readOnly: true, not: {} };
