import type { ConditionVariables } from './types';

/**
 * Bounds and field lists of the federation configuration, apart from the modules that
 * enforce them so the interface description can import them without the CEL engine.
 */

/** SPEC 8: a condition is at most 2,000 characters. */
export const MAX_CONDITION_LENGTH = 2000;

/** SPEC 4.4: the only variables a condition sees, with their CEL types. */
export const CONDITION_VARIABLE_TYPES: Readonly<Record<keyof ConditionVariables, string>> = Object.freeze({
  subject: 'string',
  audience: 'list<string>',
  scopes: 'list<string>',
  token_type: 'string',
});

export const NAME_MAX = 100;
/** SPEC 8: `sub` and `aud` values are at most 512 characters, so configured ones are too. */
export const CLAIM_VALUE_MAX = 512;
export const URL_MAX = 512;
export const JWKS_MAX_KEYS = 20;

export const ISSUER_FIELDS = ['name', 'issuer_url', 'jwks_url', 'jwks', 'check_jti'] as const;
export const POLICY_FIELDS = ['name', 'issuer_id', 'subject', 'audience', 'condition', 'api_key_hash', 'enabled', 'claim_checks'] as const;
