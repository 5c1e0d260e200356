import type { ConditionVariables } from './types';

/**
 * Bounds and field lists of the federation configuration, apart from the modules that
 * enforce them so the interface description can import them without the CEL engine.
 */

/** docs/reference.md#limits: a condition is at most 2,000 characters. */
export const MAX_CONDITION_LENGTH = 2000;

/** docs/reference.md#conditions: the only variables a condition sees, with their CEL types. */
export const CONDITION_VARIABLE_TYPES: Readonly<Record<keyof ConditionVariables, string>> = Object.freeze({
  subject: 'string',
  audience: 'list<string>',
  scopes: 'list<string>',
  token_type: 'string',
});

/** docs/reference.md#limits: a subject token is at most 16 KB. */
export const MAX_SUBJECT_TOKEN_BYTES = 16 * 1024;
/** docs/reference.md#limits: `sub`, each `aud` value and each `scopes` entry. */
export const MAX_CLAIM_CHARS = 512;
/** docs/reference.md#limits: entries of the `scopes` claim. */
export const MAX_SCOPES = 16;

/** The most a subject token's payload can decode to: base64url carries 3 bytes in 4 characters. */
const PAYLOAD_BYTES = (MAX_SUBJECT_TOKEN_BYTES * 3) / 4;
/**
 * The largest variables a condition can meet (docs/reference.md#conditions, docs/reference.md#limits). The limits cap each value; the count of
 * `aud` values and the length of `token_type` are capped by the token itself: a 16 KB JWT's
 * payload decodes to at most 12,288 bytes, and each `aud` value takes at least three of them.
 */
export const CONDITION_INPUT_BOUNDS = Object.freeze({
  subjectLength: MAX_CLAIM_CHARS,
  audienceCount: PAYLOAD_BYTES / 3,
  audienceLength: MAX_CLAIM_CHARS,
  /** Characters of all claim strings together, `aud` values included. */
  claimCharacters: PAYLOAD_BYTES,
  scopesCount: MAX_SCOPES,
  scopeLength: MAX_CLAIM_CHARS,
});

/**
 * What one evaluation of a condition may cost. Work counts {@link CONDITION_STEP_WORK} for every
 * node evaluated, one for each character and element of the value it yields, what each function
 * call costs by its measured worst case (condition-functions.ts) and {@link CONDITION_ERROR_WORK}
 * for each error; bytes count the strings and lists built. Saving refuses a condition whose worst
 * case exceeds either; evaluation stops at either. A few milliseconds at most (docs/benchmarks.md
 * has the slowest conditions found that the bound admits).
 */
export const CONDITION_BUDGET = Object.freeze({ maxWork: 5_000_000, maxBytes: 2 * 1024 * 1024 });
/** Work units of evaluating one node, before the size of what it yields. */
export const CONDITION_STEP_WORK = 50;
/**
 * Work units of one error raised during an evaluation (a failed conversion, an index out of
 * range), caught or not: the engine builds an error object and a message that quotes the
 * condition's source, up to about 15 µs, some four hundred nodes' worth.
 */
export const CONDITION_ERROR_WORK = 20_000;
/**
 * The wall-clock backstop of one evaluation: whatever the cost model misses stops here, checked
 * by the meter between nodes. The bound's worst case takes a few milliseconds on a warm core
 * (docs/benchmarks.md), but a function of 256 MB has about a seventh of a core, and a new
 * container runs the engine unoptimized for its first evaluations, up to thirty times slower:
 * the backstop sits above both, and far below what an unbounded condition would take.
 */
export const CONDITION_TIME_LIMIT_MS = 250;

/** The longest name of an issuer or a policy. */
export const NAME_MAX = 100;
/** docs/reference.md#limits: `sub` and `aud` values are at most 512 characters, so configured ones are too. */
export const CLAIM_VALUE_MAX = MAX_CLAIM_CHARS;
/** The longest issuer URL or JWKS URL. */
export const URL_MAX = 512;
/** The most keys an issuer's inline JWK Set may hold. */
export const JWKS_MAX_KEYS = 20;

/** The fields of an issuer an admin writes, in the API's wire names. */
export const ISSUER_FIELDS = ['name', 'issuer_url', 'jwks_url', 'jwks', 'check_jti'] as const;
/** The fields of a policy an admin writes, in the API's wire names. */
export const POLICY_FIELDS = ['name', 'issuer_id', 'subject', 'audience', 'condition', 'api_key_hash', 'enabled', 'claim_checks', 'require_dpop'] as const;
