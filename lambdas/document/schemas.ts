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
import { ACCESS_LEVELS, GUARDRAIL_LIMITS, KEY_KINDS, KEY_NAME_MAX, WORKSPACE_LIMITS, WORKSPACE_SLUG } from '../accounts/types';
import { MAX_CAP_USD } from '../accounts/stored-limits';
import { KEY_HASH_PATTERN, NON_BLANK, SAFE_TEXT, invalid, ref, text, type Json } from '../openapi/json-schema';
import { OWN_SCHEMAS } from './own-schemas';
import completionCopy from '../openapi/completion-schemas.json';
import publicCopy from '../openapi/public-schemas.json';

export { ref, type Json };

/** The public document's schemas modelgate reuses, verbatim (a completion's answer in a file of its own). */
export const PUBLIC_SCHEMAS: Readonly<Record<string, Json>> = { ...publicCopy.schemas, ...completionCopy.schemas };
/** The public document's inline schemas of the key operations, by `METHOD path part`. */
export const PUBLIC_INLINE: Readonly<Record<string, Json>> = publicCopy.inline;

const nullable = (type: string) => ({ type: [type, 'null'] });

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

/** The public schema with an adaptation's differences applied, and its example dropped. */
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

// Public fields of content filters, per-provider retention, logging and training switches:
// modelgate has none of these features, so it neither stores nor accepts them.
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

const guardrailIds = { type: 'array', items: { type: 'string', format: 'uuid' }, description: 'The guardrails that apply.' };
const workspaceGuardrailIds = {
  ...guardrailIds,
  description: "The guardrails that apply to every key of the workspace; its default guardrail is among them once first written, and stays.",
};
/** What a workspace request may set: its name, slug and description, none of the public settings modelgate does not have. */
const workspaceInput = {
  name: text(WORKSPACE_LIMITS.name),
  slug: {
    type: 'string',
    pattern: WORKSPACE_SLUG.source,
    maxLength: 64,
    description: 'Lowercase letters, digits and hyphens; from the name when absent.',
    ...invalid('must be 1 to 64 lowercase letters, digits and hyphens, starting with a letter or digit'),
  },
  description: text(WORKSPACE_LIMITS.description, { nullable: true }),
};
const keyHashes = (description: string) => ({
  type: 'array',
  items: { type: 'string', pattern: KEY_HASH_PATTERN },
  minItems: 1,
  maxItems: 500,
  description,
  ...invalid({ type: 'must be a non-empty array of strings', minItems: 'must be a non-empty array of strings' }),
});
const guardrailText = {
  name: text(GUARDRAIL_LIMITS.name),
  description: text(GUARDRAIL_LIMITS.description, { nullable: true }),
};
const stringList = (maxItems: number) => ({
  type: ['array', 'null'],
  items: { type: 'string', minLength: 1, maxLength: GUARDRAIL_LIMITS.entry, pattern: NON_BLANK, ...SAFE_TEXT },
  maxItems,
  ...invalid({ type: 'must be an array of non-empty strings or null' }),
});

/**
 * A USD amount a request sets (docs/limits.md): a JSON number within the bounds lambdas/accounts/stored-limits.ts
 * enforces, which also refuses more than six decimals. No `format: double`: the validators check no such format.
 */
function usdAmount(description: string, { positive, nullable }: { positive: boolean; nullable: boolean }): Json {
  const range = positive ? `greater than 0 and at most ${MAX_CAP_USD}` : `from 0 to ${MAX_CAP_USD}`;
  return {
    type: nullable ? ['number', 'null'] : 'number',
    ...(positive ? { exclusiveMinimum: 0 } : { minimum: 0 }),
    maximum: MAX_CAP_USD,
    description: `${description} At most six decimals.`,
    ...invalid(`must be a number ${range}${nullable ? ', or null' : ''}`),
  };
}

/** What a guardrail request may carry: the lists as the handler bounds them, a budget, no filters. */
const GUARDRAIL_INPUT: Adaptation = {
  omit: GUARDRAIL_UNSUPPORTED,
  change: {
    limit_usd: usdAmount('The budget of each key the guardrail covers, in USD, over reset_interval: set both, or null for both to remove it.', {
      positive: true,
      nullable: true,
    }),
    allowed_models: stringList(GUARDRAIL_LIMITS.listEntries),
    ignored_models: stringList(GUARDRAIL_LIMITS.listEntries),
    allowed_providers: stringList(GUARDRAIL_LIMITS.listEntries),
    ignored_providers: stringList(GUARDRAIL_LIMITS.listEntries),
    enforce_zdr: { type: ['boolean', 'null'], description: 'Only endpoints with zero data retention.' },
    ...guardrailText,
  },
  closed: true,
};

/**
 * A completion's answer is the provider's, made to follow the public shapes
 * (lambdas/inference/public-answer.ts): members a provider adds are passed on, and the
 * answer names the provider that served it.
 */
const PROVIDER_MEMBERS: Adaptation = { extra: { additionalProperties: true } };
const ROUTED_ANSWER: Adaptation = {
  add: { provider: { type: 'string', description: 'The provider whose endpoint answered.' } },
  required: ['provider'],
  extra: { additionalProperties: true },
};

/**
 * Public schemas modelgate describes differently, by their public name; the test of the
 * document compares every field not named here with the public document.
 */
export const ADAPTED: Readonly<Record<string, Adaptation>> = {
  ChatResult: ROUTED_ANSWER,
  ChatStreamChunk: {
    ...ROUTED_ANSWER,
    // A provider's own error, passed on mid-stream, keeps its members (an OpenAI-style `type`).
    change: { error: { ...PUBLIC_SCHEMAS.ChatStreamChunk!.properties.error, additionalProperties: true } },
  },
  ChatChoice: PROVIDER_MEMBERS,
  ChatAssistantMessage: PROVIDER_MEMBERS,
  ChatStreamChoice: PROVIDER_MEMBERS,
  ChatStreamDelta: PROVIDER_MEMBERS,
  ChatUsage: PROVIDER_MEMBERS,
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
    // `default_guardrail_id` is the public one: derived from the workspace id (lambdas/accounts/derived-ids.ts).
    add: { guardrail_ids: workspaceGuardrailIds },
    required: ['guardrail_ids'],
  },
  CreateWorkspaceRequest: {
    omit: WORKSPACE_SETTINGS_INPUT,
    // A slug is derived from the name when absent.
    optional: ['slug'],
    change: workspaceInput,
    closed: true,
  },
  UpdateWorkspaceRequest: {
    omit: WORKSPACE_SETTINGS_INPUT,
    change: { ...workspaceInput, slug: { ...workspaceInput.slug, description: 'Lowercase letters, digits and hyphens, unique in the organization.' } },
    closed: true,
    extra: { minProperties: 1, ...invalid({ minProperties: 'give at least one of name, slug and description' }) },
  },
  Guardrail: {
    omit: GUARDRAIL_UNSUPPORTED,
    change: { enforce_zdr: { type: 'boolean', description: 'Only endpoints with zero data retention.' } },
    required: ['description', 'allowed_models', 'ignored_models', 'allowed_providers', 'ignored_providers', 'enforce_zdr', 'limit_usd', 'reset_interval', 'updated_at'],
  },
  CreateGuardrailRequest: GUARDRAIL_INPUT,
  UpdateGuardrailRequest: {
    ...GUARDRAIL_INPUT,
    extra: {
      minProperties: 1,
      // A null enforce_zdr leaves it as it is: alone, it is an update of nothing, refused as `{}` is.
      not: { required: ['enforce_zdr'], maxProperties: 1, properties: { enforce_zdr: { type: 'null' } } },
      ...invalid({ not: 'give at least one field to change (a null enforce_zdr changes nothing)' }),
    },
  },
  UpsertWorkspaceBudgetRequest: {
    change: { limit_usd: usdAmount("The workspace's budget for the interval, in USD.", { positive: true, nullable: false }) },
    closed: true,
  },
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
        description: 'Requests made with access tokens, by the federation policy that issued them.',
      },
    },
    required: ['requests_via_api_key', 'requests_via_federation_policy'],
  },
  GenerationResponse: {
    change: {
      data: adapt(PUBLIC_SCHEMAS.GenerationResponse!.properties.data, {
        add: {
          api_key_hash: { type: 'string', pattern: KEY_HASH_PATTERN, description: 'The key the generation was charged to: the key itself, or the key an access token acted as.' },
          charge_basis: {
            type: 'string',
            enum: ['provider_usage', 'maximum_cost'],
            description: "What the charge rests on: the usage the provider reported, or, when none came after the provider began to answer, the most the request could cost.",
          },
        },
        required: ['api_key_hash', 'charge_basis'],
      }),
    },
  },
};

const keyItem = PUBLIC_INLINE['GET /keys 200']!.properties.data.items as Json;

/** The key schema: the public key operations' inline item, adapted. */
export const KEY_ADAPTATION: Adaptation = {
  change: {
    // Management keys belong to no workspace; the public shape requires one (keyView says which).
    workspace_id: {
      type: 'string',
      format: 'uuid',
      description: "The workspace the key belongs to. A management key belongs to none: the organization's default workspace, where the public API puts what has no workspace.",
    },
  },
  add: {
    kind: { type: 'string', enum: [...KEY_KINDS], description: 'workspace, personal or management.' },
    access_level: { type: ['string', 'null'], enum: [...ACCESS_LEVELS, null], description: 'A management key\'s access; null for the others.' },
    guardrail_ids: guardrailIds,
    // The official SDK requires it on every key; it comes from a newer public document than
    // the copy here. Keys are never issued for external users here.
    external_user: { type: ['string', 'null'], description: 'Always null: no key is issued for an external user.' },
  },
  required: ['kind', 'access_level', 'guardrail_ids', 'expires_at', 'external_user'],
};

/** A key's limit as a request sets it (docs/limits.md). */
const keyLimitInput = {
  limit: usdAmount("The key's spending limit in USD over limit_reset's window; null for none.", { positive: false, nullable: true }),
};

/** The key creation request: the public one, with the key's kind, access level and owner, and its spending limit (docs/limits.md). */
export const CREATE_KEY_ADAPTATION: Adaptation = {
  omit: ['creator_user_id'],
  add: {
    // No `default` keyword: generators (openapi-typescript) would make the field required.
    kind: { type: 'string', enum: [...KEY_KINDS], description: 'workspace when absent, personal or management.' },
    access_level: { type: 'string', enum: [...ACCESS_LEVELS], description: 'For management keys.' },
    user_id: { type: 'string', format: 'uuid', description: 'For personal keys: the member who owns it.' },
  },
  change: { name: text(KEY_NAME_MAX), ...keyLimitInput },
  closed: true,
};

/** The key update request: the public one, closed, changing at least one field. */
export const UPDATE_KEY_ADAPTATION: Adaptation = {
  change: { name: text(KEY_NAME_MAX), ...keyLimitInput },
  closed: true,
  extra: { minProperties: 1 },
};

const currentKeyData = PUBLIC_INLINE['GET /key 200']!.properties.data as Json;
/** The answer of `GET /key`: the public one, with the key's organization and workspace, its data regions and its daily free-model requests. */
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
    // The public document describes the providers list inline; named here, field for field.
    ListProvidersResponse: PUBLIC_INLINE['GET /providers 200']!,
    ...OWN_SCHEMAS,
  };
}

