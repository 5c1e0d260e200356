import { FORM_MEDIA_TYPE, mediaType } from '../http/request';
import { MAX_SUBJECT_TOKEN_BYTES } from '../federation/limits';
import { invalidRequest, invalidScope, invalidTarget, unsupportedGrantType } from './oauth-errors';

/** RFC 8693 §2.1: the `grant_type` of a token exchange, the one grant the endpoint serves. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
/** RFC 8693 §3: a JWT subject token. */
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
/** RFC 8693 §3: an OpenID Connect ID token, which is a JWT its issuer signed: verified as one. */
export const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
/** The subject token types taken: both name a JWT, and the federation policy checks it as one. */
export const SUBJECT_TOKEN_TYPES: readonly string[] = [JWT_TOKEN_TYPE, ID_TOKEN_TYPE];
/** RFC 8693 §3: the `issued_token_type` of every answer, an access token. */
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

/** Limits (docs/reference.md#limits). */
export const MAX_BODY_BYTES = 32 * 1024;

/** RFC 8693 §2.1: the parameters a token-exchange request may send more than once. */
const MAY_REPEAT: ReadonlySet<string> = new Set(['audience', 'resource']);

/** A token exchange request as the form sent it, its shape checked: the subject token, the policy it names, and the scope asked for. */
export interface TokenExchangeRequest {
  subjectToken: string;
  federationPolicyId: string;
  /** Requested scope, when sent (docs/reference.md#the-token-exchange). */
  scope: 'inference' | 'management' | null;
}

/** docs/reference.md#oauth-errors: the refusal of a body of 32 KB or more, also where a gateway refuses it before the endpoint reads it. */
export const tokenRequestTooLarge = () => invalidRequest('Request body must be smaller than 32 KB', 413);

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Parses and validates an RFC 8693 token-exchange request body (docs/reference.md#the-token-exchange, errors docs/reference.md#oauth-errors).
 * Only the shape is checked here; the subject token and policy are evaluated afterwards.
 * `resource`: the one resource tokens are issued for, the API base URL (RFC 8707).
 */
export function parseTokenExchangeRequest(body: string, contentType: string | undefined, resource?: string): TokenExchangeRequest {
  if (Buffer.byteLength(body, 'utf8') >= MAX_BODY_BYTES) throw tokenRequestTooLarge();
  // RFC 6749 §4.1.3, RFC 8693 §2.1: the form is the only request the endpoint reads.
  if (contentType === undefined || mediaType(contentType) !== FORM_MEDIA_TYPE) throw invalidRequest(`Content-Type must be ${FORM_MEDIA_TYPE}`);
  const form = new URLSearchParams(body);
  for (const name of new Set(form.keys())) {
    // RFC 6749 §3.2: request parameters must not be included more than once, but RFC 8693
    // §2.1 lets `audience` and `resource` name several targets (the exchange ignores both: docs/reference.md#the-token-exchange).
    if (!MAY_REPEAT.has(name) && form.getAll(name).length > 1) throw invalidRequest(`Parameter ${name} is repeated`);
  }
  const grantType = form.get('grant_type');
  if (!grantType) throw invalidRequest('grant_type is required');
  if (grantType !== TOKEN_EXCHANGE_GRANT) {
    throw unsupportedGrantType(`grant_type must be ${TOKEN_EXCHANGE_GRANT}`);
  }
  const subjectTokenType = form.get('subject_token_type');
  if (!subjectTokenType) throw invalidRequest('subject_token_type is required');
  if (!SUBJECT_TOKEN_TYPES.includes(subjectTokenType)) throw invalidRequest(`subject_token_type must be ${JWT_TOKEN_TYPE} or ${ID_TOKEN_TYPE}`);
  const subjectToken = form.get('subject_token');
  if (!subjectToken) throw invalidRequest('subject_token is required');
  if (Buffer.byteLength(subjectToken, 'utf8') > MAX_SUBJECT_TOKEN_BYTES) throw invalidRequest('subject_token is larger than 16 KB');
  if (!JWT_SHAPE.test(subjectToken)) throw invalidRequest('subject_token is not a JWT');
  // RFC 8693 §2.1: delegation (an actor acting for the subject) is not offered, so an actor token
  // would be ignored; refused instead, as §2.2.2 asks of a request the server cannot honour.
  if (form.has('actor_token') || form.has('actor_token_type')) throw invalidRequest('actor_token is not supported: tokens are issued for the subject alone');
  if (resource !== undefined) {
    const own = resource.replace(/\/+$/, '');
    const other = form.getAll('resource').find((value) => value.replace(/\/+$/, '') !== own);
    if (other !== undefined) throw invalidTarget(`resource must be ${own}, the API tokens are issued for`);
  }
  const federationPolicyId = form.get('federation_policy_id');
  if (!federationPolicyId) throw invalidRequest('federation_policy_id is required');
  const requested = form.get('requested_token_type');
  if (requested !== null && requested !== ACCESS_TOKEN_TYPE) throw invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE}`);
  const scope = form.get('scope');
  if (scope !== null && scope !== 'inference' && scope !== 'management') {
    throw invalidScope('scope must be inference or management');
  }
  return { subjectToken, federationPolicyId, scope };
}
