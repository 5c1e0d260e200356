/**
 * The schemas of workload identity federation (docs/reference.md#issuers, docs/reference.md#federation-policies, docs/reference.md#conditions): issuers, policies, the
 * policy tester, the condition checker and exchange events. The request schemas are what the
 * service validates issuer and policy input with (lambdas/federation/federation-validation.ts);
 * host rules, key admission and CEL are its own.
 */
import { ACCESS_LEVELS, PLANS } from '../accounts/types';
import { REFUSAL_REASONS, TESTER_STEP_NAMES } from '../federation/exchange-types';
import { MAX_DPOP_PROOF_BYTES } from '../credentials/dpop-wire';
import { CLAIM_VALUE_MAX, CONDITION_VARIABLE_TYPES, ISSUER_FIELDS, JWKS_MAX_KEYS, MAX_CONDITION_LENGTH, NAME_MAX, POLICY_FIELDS, URL_MAX } from '../federation/limits';
import { EVENTS_MAX_LIMIT } from '../management/exchange-events-api';
import { KEY_HASH_PATTERN, NON_BLANK, READ_ONLY, invalid, nonBlank, ref, text, type Json } from '../openapi/json-schema';

const timestamps = {
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: ['string', 'null'], format: 'date-time' },
};

const jwk = {
  type: 'object',
  description: 'A public JSON Web Key (RFC 7517): EC P-256 (ES256) or RSA of 2,048 to 8,192 bits (RS256), with a kid.',
  properties: {
    kty: { type: 'string', enum: ['EC', 'RSA'], ...invalid({ enum: 'only EC (P-256) and RSA keys are accepted' }) },
    kid: { type: 'string' },
    alg: { type: 'string' },
    use: { type: 'string' },
  },
  required: ['kty'],
  additionalProperties: true,
};

const claimValue = (description: string) => nonBlank(CLAIM_VALUE_MAX, { description });

const checkValue = invalid({ type: 'must be a non-empty string or null', minLength: 'must be a non-empty string or null' });

const claimChecks = (input: boolean) => ({
  type: input ? ['object', 'null'] : 'object',
  description: "Checks of the incoming token's claims; `null` removes a check.",
  properties: {
    scopes: { type: ['string', 'null'], minLength: 1, maxLength: CLAIM_VALUE_MAX, description: "A scope the token's scopes claim must hold.", ...checkValue },
    token_type: { type: ['string', 'null'], minLength: 1, maxLength: CLAIM_VALUE_MAX, description: 'The token_type claim the token must carry.', ...checkValue },
  },
  ...(input
    ? {
        additionalProperties: false,
        ...invalid({
          type: 'must be an object with scopes and/or token_type',
          additionalProperties: 'has no check "{additionalProperty}" (the checks are scopes and token_type)',
        }),
      }
    : { required: ['scopes', 'token_type'] }),
});

/** What the service sets; a request that sends one is told so. */
const readOnlyFields = { id: READ_ONLY, scope: READ_ONLY, created_at: READ_ONLY, updated_at: READ_ONLY };

const name = text(NAME_MAX);
const trueOrFalse = invalid({ type: 'must be true or false' });

const issuerFields: Json = {
  name,
  issuer_url: {
    type: 'string',
    minLength: 1,
    maxLength: URL_MAX,
    format: 'uri',
    description: 'Equals the `iss` of the tokens the provider signs, character for character (https only).',
  },
  jwks_url: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: URL_MAX,
    format: 'uri',
    description: 'Where the provider publishes its keys; null with `jwks` null means OpenID discovery.',
  },
  jwks: {
    type: ['object', 'null'],
    description: "The provider's public keys, inline.",
    properties: { keys: { type: 'array', items: jwk, minItems: 1, maxItems: JWKS_MAX_KEYS } },
    required: ['keys'],
    ...invalid({ type: 'must be a JWK Set: {"keys": [...]}' }),
  },
  check_jti: { type: 'boolean', description: 'Refuse a subject token whose `jti` was seen before (replay store).', ...trueOrFalse },
};

const policyFields: Json = {
  name,
  issuer_id: { type: 'string', format: 'uuid', ...invalid({ format: 'no issuer with this id in the organization' }) },
  subject: { ...claimValue('The exact `sub`; a policy needs a subject or a condition.'), type: ['string', 'null'] },
  audience: claimValue('One exact value of `aud`.'),
  condition: {
    type: ['string', 'null'],
    maxLength: MAX_CONDITION_LENGTH,
    description: 'A CEL expression over subject, audience, scopes and token_type (see the condition rules in the reference).',
    ...invalid({ type: 'must be a CEL expression (a string) or null', maxLength: 'the condition is longer than {limit} characters' }),
  },
  api_key_hash: {
    type: 'string',
    pattern: KEY_HASH_PATTERN,
    description: 'The hash of the API key the issued tokens act as.',
    ...invalid({ pattern: "must be a key's hash as GET /keys lists it (64 lowercase hex digits), not the key itself" }),
  },
  enabled: { type: 'boolean', ...trueOrFalse },
  require_dpop: {
    type: 'boolean',
    description:
      'Issue DPoP-bound access tokens only (RFC 9449): an exchange without a valid DPoP proof is refused with invalid_dpop_proof. Default false: an exchange with a proof gets a bound token, one without a Bearer token.',
    ...trueOrFalse,
  },
};

/** The request fields, in the order the field lists give (which a refusal of an empty update names). */
const onlyFields = (fields: Json, names: readonly string[]) => {
  const missing = names.filter((field) => !(field in fields));
  if (missing.length) throw new Error(`no schema for fields ${missing.join(', ')}`);
  return Object.fromEntries(names.map((field) => [field, fields[field]]));
};

/** An update sends null to remove a value; these fields cannot be removed. */
const notRemovable = (fields: Json, names: readonly string[]): Json => {
  const removal = { null: 'is required and cannot be removed' };
  return Object.fromEntries(
    Object.entries(fields).map(([field, schema]) => [
      field,
      names.includes(field) ? { ...schema, 'x-invalid': { ...removal, ...(schema['x-invalid'] ?? {}) } } : schema,
    ]),
  );
};

const issuerInput = onlyFields(issuerFields, ISSUER_FIELDS);
const policyInput = onlyFields({ ...policyFields, claim_checks: claimChecks(true) }, POLICY_FIELDS);

/** The component schemas of workload identity federation, by name. */
export const FEDERATION_SCHEMAS: Json = {
  Issuer: {
    type: 'object',
    description: 'An identity provider the organization trusts.',
    properties: { id: { type: 'string', format: 'uuid' }, ...issuerFields, ...timestamps },
    required: ['id', 'name', 'issuer_url', 'jwks_url', 'jwks', 'check_jti', 'created_at', 'updated_at'],
  },
  CreateIssuerRequest: {
    type: 'object',
    properties: { ...issuerInput, ...readOnlyFields },
    required: ['name', 'issuer_url'],
    additionalProperties: false,
  },
  UpdateIssuerRequest: {
    type: 'object',
    properties: { ...notRemovable(issuerInput, ['name', 'issuer_url']), ...readOnlyFields },
    minProperties: 1,
    additionalProperties: false,
  },
  IssuerResponse: { type: 'object', properties: { data: ref('Issuer') }, required: ['data'] },
  ListIssuersResponse: {
    type: 'object',
    properties: { data: { type: 'array', items: ref('Issuer') }, total_count: { type: 'integer', minimum: 0 } },
    required: ['data', 'total_count'],
  },
  FederationPolicy: {
    type: 'object',
    description: 'Which tokens of an issuer may act as which API key.',
    properties: {
      id: { type: 'string', format: 'uuid' },
      ...policyFields,
      scope: { type: 'string', enum: ['inference', 'management'], description: 'Set from the acting key: workspace keys inference, management keys management.' },
      claim_checks: claimChecks(false),
      ...timestamps,
    },
    required: ['id', 'name', 'issuer_id', 'subject', 'audience', 'condition', 'api_key_hash', 'scope', 'enabled', 'claim_checks', 'require_dpop', 'created_at', 'updated_at'],
  },
  CreatePolicyRequest: {
    type: 'object',
    properties: { ...policyInput, ...readOnlyFields },
    required: ['name', 'issuer_id', 'audience', 'api_key_hash'],
    additionalProperties: false,
  },
  UpdatePolicyRequest: {
    type: 'object',
    properties: { ...notRemovable(policyInput, ['name', 'issuer_id', 'audience', 'api_key_hash']), ...readOnlyFields },
    minProperties: 1,
    additionalProperties: false,
  },
  FederationPolicyResponse: { type: 'object', properties: { data: ref('FederationPolicy') }, required: ['data'] },
  ListFederationPoliciesResponse: {
    type: 'object',
    properties: { data: { type: 'array', items: ref('FederationPolicy') }, total_count: { type: 'integer', minimum: 0 } },
    required: ['data', 'total_count'],
  },
  EvaluatePolicyRequest: {
    type: 'object',
    // docs/reference.md#limits: the token endpoint's subject token limit; its bytes are counted by the tester.
    properties: {
      subject_token: { type: 'string', minLength: 1, maxLength: 16384, pattern: NON_BLANK, description: 'The workload identity JWT to test; at most 16 KB.' },
      dpop_proof: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_DPOP_PROOF_BYTES,
        description:
          'A DPoP proof (RFC 9449) the workload would send with the exchange: made for POST to the token endpoint. It is checked as the exchange checks it, and not used up.',
      },
    },
    required: ['subject_token'],
    additionalProperties: false,
  },
  PolicyEvaluationResponse: {
    type: 'object',
    properties: {
      data: {
        type: 'object',
        properties: {
          result: { type: 'string', enum: ['pass', 'fail'] },
          expires_in: { type: ['integer', 'null'], minimum: 0, description: 'The lifetime an issued token would get; null on fail.' },
          token_type: {
            type: ['string', 'null'],
            enum: ['DPoP', 'Bearer', null],
            description: 'The token the exchange would issue: DPoP-bound with a valid proof, Bearer without one; null on fail.',
          },
          dpop_jkt: { type: ['string', 'null'], description: 'The RFC 7638 thumbprint of the proof key the token would be bound to (`cnf.jkt`).' },
          steps: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string', enum: [...TESTER_STEP_NAMES] },
                status: { type: 'string', enum: ['passed', 'failed', 'not_reached'] },
                detail: { type: 'string' },
              },
              required: ['name', 'status', 'detail'],
            },
          },
        },
        required: ['result', 'expires_in', 'token_type', 'dpop_jkt', 'steps'],
      },
    },
    required: ['data'],
  },
  ConditionCheckRequest: {
    type: 'object',
    properties: {
      condition: {
        type: 'string',
        description: `A CEL expression; at most ${MAX_CONDITION_LENGTH} characters are accepted by a policy.`,
        ...invalid({ type: 'must be a CEL expression (a string)' }),
      },
    },
    required: ['condition'],
    additionalProperties: false,
  },
  ConditionCheckResponse: {
    type: 'object',
    properties: {
      data: {
        type: 'object',
        properties: {
          valid: { type: 'boolean' },
          message: { type: ['string', 'null'], description: 'Why the condition would be refused; null when valid.' },
          variables: { type: 'array', items: { type: 'string', enum: Object.keys(CONDITION_VARIABLE_TYPES) }, description: 'The variables it reads.' },
        },
        required: ['valid', 'message', 'variables'],
      },
    },
    required: ['data'],
  },
  EntitlementResponse: {
    type: 'object',
    properties: {
      data: {
        type: 'object',
        properties: {
          entitled: { type: 'boolean', description: 'Whether the plan includes workload identity federation (the business and enterprise plans).' },
          plan: { type: 'string', enum: [...PLANS] },
          access_level: { type: ['string', 'null'], enum: [...ACCESS_LEVELS, null] },
        },
        required: ['entitled', 'plan', 'access_level'],
      },
    },
    required: ['data'],
  },
  ExchangeEvent: {
    type: 'object',
    description: 'One token exchange, with the true reason of a refusal.',
    properties: {
      id: { type: 'string' },
      time: { type: 'string', format: 'date-time' },
      policy_id: { type: 'string' },
      issuer_id: { type: 'string' },
      outcome: { type: 'string', enum: ['issued', 'refused'] },
      reason: { type: ['string', 'null'], enum: [...REFUSAL_REASONS, null] },
      subject: { type: ['string', 'null'] },
      subject_verified: { type: 'boolean', description: 'Whether `subject` comes from a verified token.' },
      source_ip: { type: 'string' },
      request_id: { type: 'string' },
      token_jti: { type: ['string', 'null'], description: "The issued access token's `jti`." },
      dpop_jkt: {
        type: ['string', 'null'],
        description: 'The RFC 7638 thumbprint of the DPoP proof key an issued token is bound to (RFC 9449 `cnf.jkt`); null for a Bearer token.',
      },
    },
    required: ['id', 'time', 'policy_id', 'issuer_id', 'outcome', 'reason', 'subject', 'subject_verified', 'source_ip', 'request_id', 'token_jti', 'dpop_jkt'],
  },
  ListExchangeEventsResponse: {
    type: 'object',
    properties: {
      data: { type: 'array', items: ref('ExchangeEvent'), maxItems: EVENTS_MAX_LIMIT },
      next_cursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last.' },
    },
    required: ['data', 'next_cursor'],
  },
};
