/**
 * modelgate's own schemas: errors (docs/reference.md#errors), the token endpoint, the key set, chat completion
 * requests (their answers are the public ChatResult and ChatStreamChunk), the key answers, the
 * federation schemas (federation-schemas.ts) and the discovery documents (discovery-schemas.ts).
 */
import { CHAT_PARAMETERS, ROLES } from '../inference/chat-parameters';
import { DISCOVERY_SCHEMAS } from './discovery-schemas';
import { FEDERATION_SCHEMAS } from './federation-schemas';
import { MESSAGES_SCHEMAS } from './messages-schemas';
import { RESPONSES_SCHEMAS } from './responses-schemas';
import { invalid, nonBlank, ref, type Json } from '../openapi/json-schema';

const contentParts = invalid('must be a string or an array of content parts');

/** The component schemas that are modelgate's own, by name. */
export const OWN_SCHEMAS: Json = {
  /** docs/reference.md#the-common-error-body. */
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
  /** docs/reference.md#oauth-errors, RFC 6749 section 5.2. */
  OAuthError: {
    type: 'object',
    properties: {
      error: { type: 'string', enum: ['invalid_request', 'unsupported_grant_type', 'invalid_scope', 'invalid_grant', 'invalid_target', 'temporarily_unavailable', 'invalid_dpop_proof'] },
      error_description: { type: 'string' },
    },
    required: ['error'],
  },
  TokenRequest: {
    type: 'object',
    properties: {
      grant_type: { type: 'string', const: 'urn:ietf:params:oauth:grant-type:token-exchange' },
      subject_token_type: {
        type: 'string',
        enum: ['urn:ietf:params:oauth:token-type:jwt', 'urn:ietf:params:oauth:token-type:id_token'],
        description: "A JWT the policy's issuer signed: `jwt`, or `id_token` for an OpenID Connect ID token (RFC 8693 section 3), verified alike.",
      },
      subject_token: { type: 'string', maxLength: 16384, description: 'The workload identity JWT; at most 16 KB.' },
      federation_policy_id: { type: 'string', description: 'The federation policy to evaluate.' },
      requested_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:access_token' },
      scope: { type: 'string', enum: ['inference', 'management'], description: "When sent, exactly the policy's scope." },
      audience: { type: 'string', description: 'Accepted and ignored.' },
      resource: { type: 'string', description: 'When sent, the API base URL, the one resource tokens are for (RFC 8707); any other is refused with invalid_target. May be repeated.' },
      client_id: {
        type: 'string',
        description: "Accepted and ignored: a client that does not authenticate may name itself (RFC 6749 section 3.2.1), as OAuth libraries do; the issued token's client_id is the policy id.",
      },
    },
    required: ['grant_type', 'subject_token_type', 'subject_token', 'federation_policy_id'],
    // Not `additionalProperties: true`: generated clients would lose the form's types.
    description:
      'RFC 8693 token exchange. Parameters not listed here are ignored (RFC 6749 section 3.2), but for `actor_token` and `actor_token_type`, refused with invalid_request: tokens are issued for the subject alone, never for an actor acting for it.',
  },
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: { type: 'string', description: 'An ES256 `at+jwt` (RFC 9068), verifiable with GET /api/v1/oauth/jwks.' },
      issued_token_type: { type: 'string', const: 'urn:ietf:params:oauth:token-type:access_token' },
      token_type: {
        type: 'string',
        enum: ['Bearer', 'DPoP'],
        description: 'DPoP when the request carried a valid DPoP proof (RFC 9449): the token is bound to its key and is sent as `Authorization: DPoP` with a proof.',
      },
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
      model: nonBlank(256, { description: 'A model id or canonical slug from the catalog.' }),
      messages: {
        type: 'array',
        minItems: 1,
        ...invalid('must be a non-empty array'),
        items: {
          type: 'object',
          properties: { role: { type: 'string', enum: [...ROLES] }, content: { type: ['string', 'array', 'null'], ...contentParts } },
          required: ['role'],
          additionalProperties: true,
          // Only an assistant turn may go without content, null or left out (one that calls tools).
          if: { properties: { role: { not: { const: 'assistant' } } } },
          then: { properties: { content: { type: ['string', 'array'], ...contentParts } }, required: ['content'] },
        },
      },
      stream_options: {
        type: ['object', 'null'],
        description: 'Only with `stream: true`.',
        properties: { include_usage: { type: 'boolean' } },
        additionalProperties: true,
      },
      // Sampling parameters within their ranges, or null (not set); a flag true or false.
      ...CHAT_PARAMETERS,
    },
    required: ['messages'],
    // `model` may be left out when `models` names the models to try.
    if: { not: { properties: { models: true }, required: ['models'] } },
    then: { properties: { model: true }, required: ['model'] },
    additionalProperties: true,
  },
  ...MESSAGES_SCHEMAS,
  ...RESPONSES_SCHEMAS,
  CreateKeyResponse: {
    type: 'object',
    properties: { data: ref('ApiKey'), key: { type: 'string', description: 'The secret, shown once.' } },
    required: ['data', 'key'],
  },
  ApiKeyResponse: { type: 'object', properties: { data: ref('ApiKey') }, required: ['data'] },
  ListKeysResponse: { type: 'object', properties: { data: { type: 'array', items: ref('ApiKey') } }, required: ['data'] },
  CurrentKeyResponse: { type: 'object', properties: { data: ref('CurrentKey') }, required: ['data'] },
  DeletedResponse: { type: 'object', properties: { deleted: { type: 'boolean', const: true } }, required: ['deleted'] },
  ...FEDERATION_SCHEMAS,
  ...DISCOVERY_SCHEMAS,
};
