/**
 * The schemas of modelgate's OpenAPI document.
 *
 * Where a shape is the public service's, the schema starts from its verbatim copy
 * (public-schemas.json, refreshed by scripts/copy-public-schemas.ts) and {@link adapt} states
 * each difference: the public fields modelgate does not serve or accept, the ones it describes
 * differently, and its own additions. A test checks every other field against the public
 * document, so generated types match the official SDK's field for field.
 *
 * Bounds and enumerations come from the modules that enforce them, not from copies.
 */
import { ACCESS_LEVELS, GUARDRAIL_LIMITS, KEY_KINDS, KEY_NAME_MAX, PLANS, WORKSPACE_LIMITS, WORKSPACE_SLUG } from '../accounts/types';
import { EXCHANGE_STEP_NAMES, REFUSAL_REASONS } from '../federation/exchange-types';
import { CLAIM_VALUE_MAX, CONDITION_VARIABLE_TYPES, ISSUER_FIELDS, JWKS_MAX_KEYS, MAX_CONDITION_LENGTH, NAME_MAX, POLICY_FIELDS, URL_MAX } from '../federation/limits';
import { BOOLEAN_PARAMETERS, INTEGER_PARAMETERS, NUMBER_PARAMETERS, POSITIVE_INTEGER_PARAMETERS, ROLES } from '../inference/chat-request';
import { EVENTS_MAX_LIMIT } from '../management/exchange-events-api';
import { ref, type Json } from './json-schema';
import publicCopy from './public-schemas.json';

export { ref, type Json };

/** The public document's schemas modelgate reuses, verbatim. */
export const PUBLIC_SCHEMAS: Readonly<Record<string, Json>> = publicCopy.schemas;
/** The public document's inline schemas of the key operations, by `METHOD path part`. */
export const PUBLIC_INLINE: Readonly<Record<string, Json>> = publicCopy.inline;

const nullable = (type: string) => ({ type: [type, 'null'] });
const text = (description: string, extra: Json = {}) => ({ type: 'string', description, ...extra });

/** How a modelgate schema differs from the public one it starts from. */
export interface Adaptation {
  /** Public fields modelgate does not serve (responses) or accept (requests). */
  readonly omit?: readonly string[];
  /** Public fields described differently here. */
  readonly change?: Readonly<Record<string, Json>>;
  /** Fields only modelgate has. */
  readonly add?: Readonly<Record<string, Json>>;
  /** Public required fields that are optional here. */
  readonly optional?: readonly string[];
  /** Fields required here beyond the public ones. */
  readonly required?: readonly string[];
  /** A request body: any other field is refused with a 400 (`is not a known field`). */
  readonly closed?: boolean;
  /** Keywords set on the schema itself (e.g. `minProperties`). */
  readonly extra?: Json;
}

export function adapt(schema: Json, adaptation: Adaptation): Json {
  const { omit = [], change = {}, add = {}, optional = [] } = adaptation;
  const { example: _example, properties: publicProperties = {}, required: publicRequired = [], ...rest } = schema;
  const properties: Json = {};
  for (const [name, definition] of Object.entries(publicProperties as Json)) {
    if (!omit.includes(name)) properties[name] = change[name] ?? definition;
  }
  Object.assign(properties, add);
  const required = [...(publicRequired as string[]).filter((name) => !omit.includes(name) && !optional.includes(name)), ...(adaptation.required ?? [])];
  return {
    ...rest,
    properties,
    ...(required.length ? { required } : {}),
    ...(adaptation.closed ? { additionalProperties: false } : {}),
    ...adaptation.extra,
  };
}

// Public fields of spending limits, bring-your-own-key budgets, content filters, logging and
// training switches: modelgate has none of these features, so it neither stores nor accepts them.
const KEY_LIMIT_INPUT = ['include_byok_in_limit', 'limit', 'limit_reset'];
const GUARDRAIL_UNSUPPORTED = [
  'content_filter_builtins',
  'content_filters',
  'enable_free_model_publication',
  'enable_free_model_training',
  'enable_paid_model_training',
  'enforce_zdr_anthropic',
  'enforce_zdr_google',
  'enforce_zdr_openai',
  'enforce_zdr_other',
  'enforce_zdr_xai',
  'limit_usd',
  'reset_interval',
];
const WORKSPACE_SETTINGS_INPUT = [
  'default_image_model',
  'default_provider_sort',
  'default_text_model',
  'io_logging_api_key_ids',
  'io_logging_sampling_rate',
  'is_data_discount_logging_enabled',
  'is_observability_broadcast_enabled',
  'is_observability_io_logging_enabled',
];

const guardrailIds = { type: 'array', items: { type: 'string', format: 'uuid' }, description: 'The guardrails that apply (SPEC 2.5).' };
const keyHashes = (description: string) => ({ type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 500, description });
const guardrailText = {
  name: { type: 'string', minLength: 1, maxLength: GUARDRAIL_LIMITS.name },
  description: { type: ['string', 'null'], maxLength: GUARDRAIL_LIMITS.description },
};
const stringList = (maxItems: number) => ({ type: ['array', 'null'], items: { type: 'string', minLength: 1 }, maxItems });

/** What a guardrail request may carry: the lists as the handler bounds them, no budgets or filters. */
const GUARDRAIL_INPUT: Adaptation = {
  omit: [...GUARDRAIL_UNSUPPORTED, 'include_byok_in_budgets'],
  change: {
    allowed_models: stringList(1000),
    ignored_models: stringList(1000),
    allowed_providers: stringList(1000),
    ignored_providers: stringList(1000),
    enforce_zdr: { type: ['boolean', 'null'], description: 'Only endpoints with zero data retention (SPEC 2.5).' },
    ...guardrailText,
  },
  closed: true,
};

/**
 * Public schemas modelgate describes differently, by their public name; the test of the
 * document compares every field not named here with the public document.
 */
export const ADAPTED: Readonly<Record<string, Adaptation>> = {
  PublicEndpoint: {
    change: {
      // The catalog's own provider names: the public list is a closed enumeration of one day's providers.
      provider_name: { type: 'string', description: 'The provider serving the endpoint.' },
    },
    add: {
      is_moderated: { type: 'boolean', description: 'Whether the provider moderates requests.' },
      supports_tool_choice: {
        type: 'object',
        description: 'Which tool_choice values the endpoint honours.',
        properties: { auto: { type: 'boolean' }, function: { type: 'boolean' }, none: { type: 'boolean' }, required: { type: 'boolean' } },
        required: ['auto', 'function', 'none', 'required'],
      },
    },
    required: ['supports_tool_choice'],
  },
  Workspace: {
    change: {
      // Workspaces here have no default guardrail: their guardrails are `guardrail_ids`.
      default_guardrail_id: { ...nullable('string'), format: 'uuid', description: 'Always null: see guardrail_ids.' },
    },
    add: { guardrail_ids: guardrailIds },
    required: ['guardrail_ids'],
  },
  CreateWorkspaceRequest: {
    omit: WORKSPACE_SETTINGS_INPUT,
    // A slug is derived from the name when absent.
    optional: ['slug'],
    change: {
      name: { type: 'string', minLength: 1, maxLength: WORKSPACE_LIMITS.name },
      slug: { type: 'string', pattern: WORKSPACE_SLUG.source, maxLength: 64, description: 'Lowercase letters, digits and hyphens; from the name when absent.' },
      description: { type: ['string', 'null'], maxLength: WORKSPACE_LIMITS.description },
    },
    closed: true,
  },
  Guardrail: {
    omit: GUARDRAIL_UNSUPPORTED,
    change: { enforce_zdr: { type: 'boolean', description: 'Only endpoints with zero data retention (SPEC 2.5).' } },
    required: ['description', 'allowed_models', 'ignored_models', 'allowed_providers', 'ignored_providers', 'enforce_zdr', 'updated_at'],
  },
  CreateGuardrailRequest: GUARDRAIL_INPUT,
  UpdateGuardrailRequest: { ...GUARDRAIL_INPUT, extra: { minProperties: 1 } },
  BulkAssignKeysRequest: { change: { key_hashes: keyHashes('Hashes of the keys to assign (at most 500).') }, closed: true },
  BulkUnassignKeysRequest: { change: { key_hashes: keyHashes('Hashes of the keys to unassign (at most 500).') }, closed: true },
  ActivityItem: {
    // Rows are never split by workspace here (no `group_by`).
    omit: ['workspace_id'],
    add: {
      requests_via_api_key: { type: 'integer', minimum: 0, description: 'Requests made with an API key itself.' },
      requests_via_federation_policy: {
        type: 'object',
        additionalProperties: { type: 'integer', minimum: 0 },
        description: 'Requests made with access tokens, by the federation policy that issued them (SPEC 1).',
      },
    },
    required: ['requests_via_api_key', 'requests_via_federation_policy'],
  },
};

const keyItem = PUBLIC_INLINE['GET /keys 200']!.properties.data.items as Json;

/** The key schema: the public key operations' inline item, adapted. */
export const KEY_ADAPTATION: Adaptation = {
  change: {
    // Management keys belong to no workspace.
    workspace_id: { ...nullable('string'), format: 'uuid', description: 'The workspace the key belongs to; null for a management key.' },
  },
  add: {
    kind: { type: 'string', enum: [...KEY_KINDS], description: 'workspace, personal or management (SPEC 2.2).' },
    access_level: { type: ['string', 'null'], enum: [...ACCESS_LEVELS, null], description: 'A management key\'s access; null for the others.' },
    guardrail_ids: guardrailIds,
    // The official SDK requires it on every key; it comes from a newer public document than
    // the copy here. Keys are never issued for external users here.
    external_user: { type: ['string', 'null'], description: 'Always null: no key is issued for an external user.' },
  },
  required: ['kind', 'access_level', 'guardrail_ids', 'expires_at', 'external_user'],
};

export const CREATE_KEY_ADAPTATION: Adaptation = {
  omit: [...KEY_LIMIT_INPUT, 'creator_user_id'],
  add: {
    // No `default` keyword: generators (openapi-typescript) would make the field required.
    kind: { type: 'string', enum: [...KEY_KINDS], description: 'workspace when absent, personal or management (SPEC 2.2).' },
    access_level: { type: 'string', enum: [...ACCESS_LEVELS], description: 'For management keys.' },
    user_id: { type: 'string', format: 'uuid', description: 'For personal keys: the member who owns it.' },
  },
  change: { name: { type: 'string', minLength: 1, maxLength: KEY_NAME_MAX } },
  closed: true,
};

export const UPDATE_KEY_ADAPTATION: Adaptation = {
  omit: KEY_LIMIT_INPUT,
  change: { name: { type: 'string', minLength: 1, maxLength: KEY_NAME_MAX } },
  closed: true,
  extra: { minProperties: 1 },
};

const currentKeyData = PUBLIC_INLINE['GET /key 200']!.properties.data as Json;
export const CURRENT_KEY_ADAPTATION: Adaptation = {
  add: {
    organization_id: { type: 'string', description: 'The organization the key belongs to.' },
    workspace_id: { ...nullable('string'), description: 'The workspace of the key; null for a management key.' },
    allowed_data_regions: { type: 'array', items: { type: 'string' } },
    free_model_daily_requests: {
      type: 'object',
      properties: { limit: { type: 'integer' }, remaining: { type: 'integer' }, used: { type: 'integer' } },
      required: ['limit', 'remaining', 'used'],
    },
  },
  required: ['expires_at', 'organization_id', 'workspace_id'],
};

/** modelgate's own schemas, and the adapted public ones, for `components.schemas`. */
export function componentSchemas(): Json {
  const adapted = Object.fromEntries(Object.entries(ADAPTED).map(([name, adaptation]) => [name, adapt(PUBLIC_SCHEMAS[name]!, adaptation)]));
  return {
    ...PUBLIC_SCHEMAS,
    ...adapted,
    ApiKey: adapt(keyItem, KEY_ADAPTATION),
    CreateKeyRequest: adapt(PUBLIC_INLINE['POST /keys request']!, CREATE_KEY_ADAPTATION),
    UpdateKeyRequest: adapt(PUBLIC_INLINE['PATCH /keys/{hash} request']!, UPDATE_KEY_ADAPTATION),
    CurrentKey: adapt(currentKeyData, CURRENT_KEY_ADAPTATION),
    ...OWN_SCHEMAS,
  };
}

const timestamps = {
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: ['string', 'null'], format: 'date-time' },
};

const jwk = {
  type: 'object',
  description: 'A public JSON Web Key (RFC 7517).',
  properties: { kty: { type: 'string', enum: ['EC', 'RSA', 'OKP'] }, kid: { type: 'string' }, alg: { type: 'string' }, use: { type: 'string' } },
  required: ['kty'],
  additionalProperties: true,
};

const claimChecks = (nullableChecks: boolean) => ({
  type: nullableChecks ? ['object', 'null'] : 'object',
  description: 'Checks of the incoming token\'s claims (SPEC 2.12 rules 3-5); `null` removes a check.',
  properties: {
    scopes: { type: ['string', 'null'], minLength: 1, maxLength: CLAIM_VALUE_MAX, description: 'A scope the token\'s scopes claim must hold.' },
    token_type: { type: ['string', 'null'], minLength: 1, maxLength: CLAIM_VALUE_MAX, description: 'The token_type claim the token must carry.' },
  },
  ...(nullableChecks ? { additionalProperties: false } : { required: ['scopes', 'token_type'] }),
});

const issuerFields = {
  name: { type: 'string', minLength: 1, maxLength: NAME_MAX },
  issuer_url: text('Equals the `iss` of the tokens the provider signs, character for character (https only).', { format: 'uri', maxLength: URL_MAX }),
  jwks_url: { type: ['string', 'null'], format: 'uri', maxLength: URL_MAX, description: 'Where the provider publishes its keys; null with `jwks` null means OpenID discovery.' },
  jwks: {
    type: ['object', 'null'],
    description: 'The provider\'s public keys, inline.',
    properties: { keys: { type: 'array', items: jwk, minItems: 1, maxItems: JWKS_MAX_KEYS } },
    required: ['keys'],
  },
  check_jti: { type: 'boolean', description: 'Refuse a subject token whose `jti` was seen before (replay store).' },
};

const policyFields = {
  name: { type: 'string', minLength: 1, maxLength: NAME_MAX },
  issuer_id: { type: 'string', format: 'uuid' },
  subject: { type: ['string', 'null'], minLength: 1, maxLength: CLAIM_VALUE_MAX, description: 'The exact `sub`; a policy needs a subject or a condition.' },
  audience: { type: 'string', minLength: 1, maxLength: CLAIM_VALUE_MAX, description: 'One exact value of `aud`.' },
  condition: { type: ['string', 'null'], maxLength: MAX_CONDITION_LENGTH, description: 'A CEL expression over subject, audience, scopes and token_type (SPEC 4.4).' },
  api_key_hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The hash of the API key the issued tokens act as.' },
  enabled: { type: 'boolean' },
};

const onlyFields = (fields: Json, names: readonly string[]) => {
  // The field lists of the validation module decide what a request may carry.
  const missing = names.filter((name) => !(name in fields));
  if (missing.length) throw new Error(`no schema for fields ${missing.join(', ')}`);
  return Object.fromEntries(names.map((name) => [name, fields[name]]));
};

const chatParameters = Object.fromEntries([
  ...NUMBER_PARAMETERS.map((name) => [name, { type: 'number' }]),
  ...INTEGER_PARAMETERS.map((name) => [name, { type: 'integer' }]),
  ...POSITIVE_INTEGER_PARAMETERS.map((name) => [name, { type: 'integer', minimum: 1 }]),
  ...BOOLEAN_PARAMETERS.map((name) => [name, { type: 'boolean' }]),
]);

const OWN_SCHEMAS: Json = {
  /** SPEC 7.1. */
  ErrorResponse: {
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: {
          code: { type: 'integer', description: 'The HTTP status.' },
          message: { type: 'string' },
          metadata: { type: ['object', 'null'], additionalProperties: true, description: 'For example `parameter`, the offending input.' },
        },
        required: ['code', 'message'],
      },
      user_id: { type: ['string', 'null'] },
    },
    required: ['error'],
  },
  /** SPEC 7.2, RFC 6749 section 5.2. */
  OAuthError: {
    type: 'object',
    properties: {
      error: { type: 'string', enum: ['invalid_request', 'unsupported_grant_type', 'invalid_scope', 'invalid_grant', 'temporarily_unavailable'] },
      error_description: { type: 'string' },
    },
    required: ['error'],
  },
  TokenRequest: {
    type: 'object',
    properties: {
      grant_type: { type: 'string', const: 'urn:ietf:params:oauth:grant-type:token-exchange' },
      subject_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:jwt' },
      subject_token: { type: 'string', maxLength: 16384, description: 'The workload identity JWT; at most 16 KB (SPEC 8).' },
      federation_policy_id: { type: 'string', description: 'The federation policy to evaluate.' },
      requested_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:access_token' },
      scope: { type: 'string', enum: ['inference', 'management'], description: "When sent, exactly the policy's scope." },
      audience: { type: 'string', description: 'Accepted and ignored.' },
      resource: { type: 'string', description: 'Accepted and ignored.' },
    },
    required: ['grant_type', 'subject_token_type', 'subject_token', 'federation_policy_id'],
    // Not `additionalProperties: true`: generated clients would lose the form's types.
    description: 'RFC 8693 token exchange. Parameters not listed here are ignored (RFC 6749 section 3.2).',
  },
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: { type: 'string', description: 'An ES256 `at+jwt` (RFC 9068), verifiable with GET /api/v1/oauth/jwks.' },
      issued_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:access_token' },
      token_type: { type: 'string', const: 'Bearer' },
      expires_in: { type: 'integer', minimum: 1, maximum: 900 },
      scope: { type: 'string', enum: ['inference', 'management'] },
    },
    required: ['access_token', 'issued_token_type', 'token_type', 'expires_in', 'scope'],
  },
  JsonWebKeySet: {
    type: 'object',
    properties: {
      keys: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            kty: { type: 'string', const: 'EC' },
            crv: { type: 'string', const: 'P-256' },
            x: { type: 'string' },
            y: { type: 'string' },
            kid: { type: 'string' },
            alg: { type: 'string', const: 'ES256' },
            use: { type: 'string', const: 'sig' },
          },
          required: ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use'],
        },
      },
    },
    required: ['keys'],
  },
  ChatCompletionRequest: {
    type: 'object',
    description: 'The OpenAI-compatible chat completion request; other fields go to the provider unchanged.',
    properties: {
      model: { type: 'string', minLength: 1, maxLength: 256, description: 'A model id or canonical slug from the catalog.' },
      messages: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: { role: { type: 'string', enum: [...ROLES] }, content: { type: ['string', 'array', 'null'] } },
          required: ['role', 'content'],
          additionalProperties: true,
        },
      },
      stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } }, additionalProperties: true },
      ...chatParameters,
    },
    required: ['model', 'messages'],
    additionalProperties: true,
  },
  ChatCompletion: {
    type: 'object',
    description: 'The provider\'s OpenAI-compatible answer, with the routed model and provider.',
    properties: {
      id: { type: 'string' },
      object: { type: 'string', const: 'chat.completion' },
      model: { type: 'string', description: 'The id of the model that answered.' },
      provider: { type: 'string', description: 'The provider whose endpoint answered.' },
      choices: { type: 'array', items: { type: 'object', additionalProperties: true } },
      usage: { type: 'object', additionalProperties: true },
    },
    required: ['id', 'choices', 'model', 'provider'],
    additionalProperties: true,
  },
  ChatCompletionStreamEvent: {
    description: 'The data of one server-sent event of a streamed completion, before the final `[DONE]`.',
    anyOf: [
      {
        type: 'object',
        description: "A chat.completion.chunk, as the provider sent it (the routed model's id in place of the caller's spelling).",
        properties: {
          id: { type: 'string' },
          object: { type: 'string', const: 'chat.completion.chunk' },
          model: { type: 'string' },
          choices: { type: 'array', items: { type: 'object', additionalProperties: true } },
          usage: { type: ['object', 'null'], additionalProperties: true, description: 'The final usage chunk, when `stream_options.include_usage` asked for it.' },
        },
        required: ['choices'],
        additionalProperties: true,
      },
      {
        type: 'object',
        description: 'A failure after the stream started: the SPEC 7.1 error, or the provider\'s own; the last event.',
        properties: { error: { type: 'object', properties: { code: {}, message: { type: 'string' } }, required: ['message'], additionalProperties: true } },
        required: ['error'],
        additionalProperties: true,
      },
    ],
  },
  CreateKeyResponse: {
    type: 'object',
    properties: { data: ref('ApiKey'), key: { type: 'string', description: 'The secret, shown once.' } },
    required: ['data', 'key'],
  },
  ApiKeyResponse: { type: 'object', properties: { data: ref('ApiKey') }, required: ['data'] },
  ListKeysResponse: { type: 'object', properties: { data: { type: 'array', items: ref('ApiKey') } }, required: ['data'] },
  CurrentKeyResponse: { type: 'object', properties: { data: ref('CurrentKey') }, required: ['data'] },
  DeletedResponse: { type: 'object', properties: { deleted: { type: 'boolean', const: true } }, required: ['deleted'] },
  Issuer: {
    type: 'object',
    description: 'An identity provider the organization trusts (SPEC 2.11).',
    properties: { id: { type: 'string', format: 'uuid' }, ...issuerFields, ...timestamps },
    required: ['id', 'name', 'issuer_url', 'jwks_url', 'jwks', 'check_jti', 'created_at', 'updated_at'],
  },
  CreateIssuerRequest: {
    type: 'object',
    properties: onlyFields(issuerFields, ISSUER_FIELDS),
    required: ['name', 'issuer_url'],
    additionalProperties: false,
  },
  UpdateIssuerRequest: { type: 'object', properties: onlyFields(issuerFields, ISSUER_FIELDS), minProperties: 1, additionalProperties: false },
  IssuerResponse: { type: 'object', properties: { data: ref('Issuer') }, required: ['data'] },
  ListIssuersResponse: {
    type: 'object',
    properties: { data: { type: 'array', items: ref('Issuer') }, total_count: { type: 'integer', minimum: 0 } },
    required: ['data', 'total_count'],
  },
  FederationPolicy: {
    type: 'object',
    description: 'Which tokens of an issuer may act as which API key (SPEC 2.12).',
    properties: {
      id: { type: 'string', format: 'uuid' },
      ...policyFields,
      scope: { type: 'string', enum: ['inference', 'management'], description: 'Set from the acting key: workspace keys inference, management keys management.' },
      claim_checks: claimChecks(false),
      ...timestamps,
    },
    required: ['id', 'name', 'issuer_id', 'subject', 'audience', 'condition', 'api_key_hash', 'scope', 'enabled', 'claim_checks', 'created_at', 'updated_at'],
  },
  CreatePolicyRequest: {
    type: 'object',
    properties: onlyFields({ ...policyFields, claim_checks: claimChecks(true) }, POLICY_FIELDS),
    required: ['name', 'issuer_id', 'audience', 'api_key_hash'],
    additionalProperties: false,
  },
  UpdatePolicyRequest: {
    type: 'object',
    properties: onlyFields({ ...policyFields, claim_checks: claimChecks(true) }, POLICY_FIELDS),
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
    properties: { subject_token: { type: 'string', minLength: 1, maxLength: 16384, description: 'The workload identity JWT to test; at most 16 KB.' } },
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
          steps: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string', enum: [...EXCHANGE_STEP_NAMES] },
                status: { type: 'string', enum: ['passed', 'failed', 'not_reached'] },
                detail: { type: 'string' },
              },
              required: ['name', 'status', 'detail'],
            },
          },
        },
        required: ['result', 'expires_in', 'steps'],
      },
    },
    required: ['data'],
  },
  ConditionCheckRequest: {
    type: 'object',
    properties: { condition: { type: 'string', description: `A CEL expression; at most ${MAX_CONDITION_LENGTH} characters are accepted by a policy.` } },
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
          entitled: { type: 'boolean', description: 'Whether the plan includes workload identity federation (SPEC 1).' },
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
      token_jti: { type: ['string', 'null'], description: 'The issued access token\'s `jti`.' },
    },
    required: ['id', 'time', 'policy_id', 'issuer_id', 'outcome', 'reason', 'subject', 'subject_verified', 'source_ip', 'request_id', 'token_jti'],
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
