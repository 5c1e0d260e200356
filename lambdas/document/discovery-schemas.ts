import { DPOP_SIGNING_ALGS } from '../credentials/dpop-wire';
import type { Json } from '../openapi/json-schema';

const url = (description: string): Json => ({ type: 'string', format: 'uri', description });
const dpopAlgs: Json = {
  type: 'array',
  items: { type: 'string', enum: [...DPOP_SIGNING_ALGS] },
  description: 'RFC 9449: the algorithms a DPoP proof may be signed with.',
};
const scopes: Json = { type: 'array', items: { type: 'string', enum: ['inference', 'management'] }, description: 'The scopes of issued access tokens.' };

/** The discovery documents (lambdas/oauth/discovery.ts builds them). */
export const DISCOVERY_SCHEMAS: Json = {
  AuthorizationServerMetadata: {
    type: 'object',
    description: 'RFC 8414 authorization server metadata of the issuer of access tokens, the API base URL.',
    properties: {
      issuer: url('The `iss` of every access token: the API base URL.'),
      token_endpoint: url('POST here to exchange a workload identity JWT (RFC 8693).'),
      jwks_uri: url('The keys that verify access tokens.'),
      grant_types_supported: { type: 'array', items: { type: 'string', const: 'urn:ietf:params:oauth:grant-type:token-exchange' } },
      token_endpoint_auth_methods_supported: {
        type: 'array',
        items: { type: 'string', const: 'none' },
        description: 'No client authentication: the subject token and the federation policy authorize the exchange.',
      },
      scopes_supported: scopes,
      response_types_supported: {
        type: 'array',
        maxItems: 0,
        description: 'Empty: there is no authorization endpoint, so no response type (RFC 8414 section 2 requires the member).',
      },
      service_documentation: url('This OpenAPI document.'),
      protected_resources: { type: 'array', items: url('The API base URL.'), description: 'RFC 9728 section 4: the resources it issues tokens for.' },
      dpop_signing_alg_values_supported: dpopAlgs,
    },
    required: [
      'issuer',
      'token_endpoint',
      'jwks_uri',
      'grant_types_supported',
      'token_endpoint_auth_methods_supported',
      'scopes_supported',
      'response_types_supported',
      'service_documentation',
      'protected_resources',
      'dpop_signing_alg_values_supported',
    ],
  },
  ProtectedResourceMetadata: {
    type: 'object',
    description: 'RFC 9728 protected resource metadata of the API.',
    properties: {
      resource: url('The API base URL, also the `aud` of access tokens.'),
      authorization_servers: { type: 'array', items: url('The issuer of access tokens: the API base URL.') },
      jwks_uri: url('The keys that verify access tokens: the resource and its authorization server are one service.'),
      bearer_methods_supported: { type: 'array', items: { type: 'string', const: 'header' } },
      scopes_supported: scopes,
      resource_name: { type: 'string' },
      resource_documentation: url('This OpenAPI document.'),
      dpop_signing_alg_values_supported: dpopAlgs,
      dpop_bound_access_tokens_required: { type: 'boolean', const: false, description: 'Bearer tokens are taken; a DPoP-bound token only with its proof.' },
    },
    required: [
      'resource',
      'authorization_servers',
      'jwks_uri',
      'bearer_methods_supported',
      'scopes_supported',
      'resource_name',
      'resource_documentation',
      'dpop_signing_alg_values_supported',
      'dpop_bound_access_tokens_required',
    ],
  },
};
