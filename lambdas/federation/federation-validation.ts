import { createPublicKey } from 'node:crypto';
import { isIP } from 'node:net';
import type { JWK } from 'jose';
import { invalidParameter } from '../errors';
import { isKeyHash, isUuid } from '../http/ids';
import { refusedAddressKind } from './address-policy';
import { ConditionError, checkCondition } from './condition';
import type { ClaimChecks, FederationIssuer, FederationPolicy } from './types';
import { CLAIM_VALUE_MAX, ISSUER_FIELDS, JWKS_MAX_KEYS, NAME_MAX, POLICY_FIELDS, URL_MAX } from './limits';

/**
 * Validation of issuer and policy input, in the management API's wire names: the API passes
 * the request body, the operator CLI an object built from its flags, so both give the same
 * answers. Each refusal is a 400 naming the field (`metadata.parameter`). Rules that need
 * stored state (the issuer exists, the key is live) are the service's.
 */

type Body = Record<string, unknown>;

export { CLAIM_VALUE_MAX, ISSUER_FIELDS, JWKS_MAX_KEYS, NAME_MAX, POLICY_FIELDS, URL_MAX };
const RSA_MIN_BITS = 2048;
const RSA_MAX_BITS = 8192;

/** Fields the service sets; a request that sends one is told so instead of "unknown field". */
const READ_ONLY_FIELDS = ['id', 'scope', 'created_at', 'updated_at'] as const;

export interface HostRules {
  /** The local runtime only: accept loopback hosts for a development identity provider. */
  allowLoopback: boolean;
}

export interface IssuerInput {
  name: string;
  issuerUrl: string;
  jwksUrl: string | null;
  jwks: { keys: JWK[] } | null;
  checkJti: boolean;
}

export type IssuerPatch = Partial<IssuerInput>;

export interface PolicyInput {
  name: string;
  issuerId: string;
  subject: string | null;
  audience: string;
  condition: string | null;
  apiKeyHash: string;
  enabled: boolean;
  claimChecks: ClaimChecks;
}

export type PolicyPatch = Partial<Omit<PolicyInput, 'claimChecks'>> & { claimChecks?: Partial<ClaimChecks> };

/**
 * Well-known issuers whose tokens any of their customers can obtain (Anthropic's shared-issuer
 * rule): trusting one without pinning the subject trusts every tenant of that provider.
 */
export const MULTI_TENANT_ISSUERS: Readonly<Record<string, string>> = Object.freeze({
  'https://token.actions.githubusercontent.com': 'GitHub Actions',
  'https://gitlab.com': 'GitLab',
  'https://agent.buildkite.com': 'Buildkite',
  'https://app.terraform.io': 'Terraform Cloud',
  'https://accounts.google.com': 'Google',
});

/** The provider name when `issuerUrl` is a multi-tenant issuer (a trailing slash or host case does not hide it). */
export function multiTenantProvider(issuerUrl: string): string | undefined {
  let normalised = issuerUrl;
  try {
    const url = new URL(issuerUrl);
    normalised = `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
  return MULTI_TENANT_ISSUERS[normalised];
}

export function parseIssuerCreate(body: Body, hosts: HostRules): IssuerInput {
  rejectUnknown(body, ISSUER_FIELDS);
  const input: IssuerInput = {
    name: name(body, true)!,
    issuerUrl: issuerUrl(body, true, hosts)!,
    jwksUrl: jwksUrl(body, hosts) ?? null,
    jwks: jwks(body) ?? null,
    checkJti: bool(body, 'check_jti') ?? false,
  };
  checkKeySource(input);
  return input;
}

export function parseIssuerPatch(body: Body, hosts: HostRules): IssuerPatch {
  rejectUnknown(body, ISSUER_FIELDS);
  const patch: IssuerPatch = {
    name: name(body, false),
    issuerUrl: issuerUrl(body, false, hosts),
    jwksUrl: jwksUrl(body, hosts),
    jwks: jwks(body),
    checkJti: bool(body, 'check_jti'),
  };
  if (Object.values(patch).every((value) => value === undefined)) {
    throw invalidParameter('body', `give at least one of ${ISSUER_FIELDS.join(', ')}`);
  }
  return patch;
}

/** An issuer takes its keys from one place: a JWKS URL, inline keys, or (neither) OIDC discovery. */
export function checkKeySource(issuer: Pick<IssuerInput, 'jwksUrl' | 'jwks'>): void {
  if (issuer.jwksUrl !== null && issuer.jwks !== null) {
    throw invalidParameter('jwks', 'an issuer takes jwks_url or jwks, not both (set the other to null)');
  }
}

export function parsePolicyCreate(body: Body): PolicyInput {
  rejectUnknown(body, POLICY_FIELDS);
  const checks = claimChecks(body);
  return {
    name: name(body, true)!,
    issuerId: issuerId(body, true)!,
    subject: claimValue(body, 'subject', false) ?? null,
    audience: claimValue(body, 'audience', true)!,
    condition: condition(body) ?? null,
    apiKeyHash: apiKeyHash(body, true)!,
    enabled: bool(body, 'enabled') ?? true,
    claimChecks: { scopes: checks?.scopes ?? null, tokenType: checks?.tokenType ?? null },
  };
}

export function parsePolicyPatch(body: Body): PolicyPatch {
  rejectUnknown(body, POLICY_FIELDS);
  if (body.audience === null) throw invalidParameter('audience', 'is required and cannot be removed');
  const patch: PolicyPatch = {
    name: name(body, false),
    issuerId: issuerId(body, false),
    subject: claimValue(body, 'subject', false),
    audience: claimValue(body, 'audience', false) ?? undefined,
    condition: condition(body),
    apiKeyHash: apiKeyHash(body, false),
    enabled: bool(body, 'enabled'),
    claimChecks: claimChecks(body),
  };
  if (Object.values(patch).every((value) => value === undefined)) {
    throw invalidParameter('body', `give at least one of ${POLICY_FIELDS.join(', ')}`);
  }
  return patch;
}

/** Applies a validated patch: absent fields keep their value; each claim check is set or removed on its own (SPEC 2.12 rule 3). */
export function applyPolicyPatch(policy: FederationPolicy, patch: PolicyPatch): FederationPolicy {
  const defined = <T>(value: T | undefined, current: T): T => (value === undefined ? current : value);
  return {
    ...policy,
    name: defined(patch.name, policy.name),
    issuerId: defined(patch.issuerId, policy.issuerId),
    subject: defined(patch.subject, policy.subject),
    audience: defined(patch.audience, policy.audience),
    condition: defined(patch.condition, policy.condition),
    apiKeyHash: defined(patch.apiKeyHash, policy.apiKeyHash),
    enabled: defined(patch.enabled, policy.enabled),
    claimChecks: {
      scopes: defined(patch.claimChecks?.scopes, policy.claimChecks.scopes),
      tokenType: defined(patch.claimChecks?.tokenType, policy.claimChecks.tokenType),
    },
  };
}

/**
 * The rules over a whole policy and its issuer: SPEC 2.12 rule 1 (subject or condition), and
 * on a multi-tenant issuer, a subject or a condition that reads `subject`.
 */
export function checkPolicyRules(
  policy: Pick<FederationPolicy, 'subject' | 'condition'>,
  issuer: Pick<FederationIssuer, 'issuerUrl'>,
): void {
  if (policy.subject === null && policy.condition === null) {
    throw invalidParameter('subject', 'a policy needs a subject or a condition, or both');
  }
  const provider = multiTenantProvider(issuer.issuerUrl);
  if (provider && policy.subject === null && !checkCondition(policy.condition!).variables.includes('subject')) {
    throw invalidParameter(
      'condition',
      `${issuer.issuerUrl} issues tokens to every ${provider} customer: without an exact subject the condition must test subject, ` +
        `or any tenant of ${provider} could exchange tokens for this policy`,
    );
  }
}

function rejectUnknown(body: Body, known: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if ((READ_ONLY_FIELDS as readonly string[]).includes(field)) throw invalidParameter(field, 'is set by the service and read-only');
    if (!known.includes(field)) throw invalidParameter(field, 'is not a known field');
  }
}

function text(body: Body, field: string, required: boolean, max: number): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    if (required) throw invalidParameter(field, 'is required');
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') throw invalidParameter(field, 'must be a non-empty string');
  if (value.length > max) throw invalidParameter(field, `must be at most ${max} characters`);
  return value;
}

function name(body: Body, required: boolean): string | undefined {
  if (!required && body.name === null) throw invalidParameter('name', 'is required and cannot be removed');
  const value = text(body, 'name', required, NAME_MAX);
  if (value !== undefined && /\p{Cc}/u.test(value)) throw invalidParameter('name', 'must not contain control characters');
  return value;
}

function bool(body: Body, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidParameter(field, 'must be true or false');
  return value;
}

/** `subject` and `audience`: compared with token claims exactly, so stored exactly (no trimming). */
function claimValue(body: Body, field: 'subject' | 'audience', required: boolean): string | null | undefined {
  if (body[field] === null && !required) return null;
  return text(body, field, required, CLAIM_VALUE_MAX);
}

function issuerId(body: Body, required: boolean): string | undefined {
  if (!required && body.issuer_id === null) throw invalidParameter('issuer_id', 'is required and cannot be removed');
  const value = text(body, 'issuer_id', required, 64);
  if (value !== undefined && !isUuid(value)) throw invalidParameter('issuer_id', 'no issuer with this id in the organization');
  return value;
}

function apiKeyHash(body: Body, required: boolean): string | undefined {
  if (!required && body.api_key_hash === null) throw invalidParameter('api_key_hash', 'is required and cannot be removed');
  const value = text(body, 'api_key_hash', required, 64);
  if (value !== undefined && !isKeyHash(value)) {
    throw invalidParameter('api_key_hash', "must be a key's hash as GET /keys lists it (64 lowercase hex digits), not the key itself");
  }
  return value;
}

function condition(body: Body): string | null | undefined {
  const value = body.condition;
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string') throw invalidParameter('condition', 'must be a CEL expression (a string) or null');
  try {
    return checkCondition(value).source;
  } catch (error) {
    if (error instanceof ConditionError) throw invalidParameter('condition', error.message);
    throw error;
  }
}

function claimChecks(body: Body): Partial<ClaimChecks> | undefined {
  const value = body.claim_checks;
  if (value === undefined) return undefined;
  // `null` removes every check.
  if (value === null) return { scopes: null, tokenType: null };
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidParameter('claim_checks', 'must be an object with scopes and/or token_type');
  }
  const checks = value as Body;
  for (const key of Object.keys(checks)) {
    if (key !== 'scopes' && key !== 'token_type') {
      throw invalidParameter('claim_checks', `has no check "${key}" (the checks are scopes and token_type)`);
    }
  }
  const one = (key: 'scopes' | 'token_type'): string | null | undefined => {
    const check = checks[key];
    if (check === undefined || check === null) return check;
    if (typeof check !== 'string' || check === '') throw invalidParameter(`claim_checks.${key}`, 'must be a non-empty string or null');
    if (check.length > CLAIM_VALUE_MAX) throw invalidParameter(`claim_checks.${key}`, `must be at most ${CLAIM_VALUE_MAX} characters`);
    return check;
  };
  return { scopes: one('scopes'), tokenType: one('token_type') };
}

function issuerUrl(body: Body, required: boolean, hosts: HostRules): string | undefined {
  if (!required && body.issuer_url === null) throw invalidParameter('issuer_url', 'is required and cannot be removed');
  const value = text(body, 'issuer_url', required, URL_MAX);
  if (value === undefined) return undefined;
  const url = httpsUrl(value, 'issuer_url', hosts);
  // OpenID Connect Discovery 1.0 §3: an issuer identifier has no query or fragment.
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    throw invalidParameter('issuer_url', 'must not have a query or fragment');
  }
  return value;
}

function jwksUrl(body: Body, hosts: HostRules): string | null | undefined {
  const value = body.jwks_url;
  if (value === null) return null;
  const given = text(body, 'jwks_url', false, URL_MAX);
  if (given === undefined) return undefined;
  const url = httpsUrl(given, 'jwks_url', hosts);
  if (url.hash !== '' || given.includes('#')) throw invalidParameter('jwks_url', 'must not have a fragment');
  return given;
}

/**
 * An `https://` URL, as written (the issuer URL is compared with `iss` character for
 * character, so nothing is normalised), on a host the service may trust.
 */
function httpsUrl(value: string, field: string, hosts: HostRules): URL {
  if (!value.startsWith('https://')) throw invalidParameter(field, 'must be an https:// URL');
  // The URL parser drops whitespace and control characters silently; the stored value must not have them.
  if (/[\s\p{Cc}]/u.test(value)) throw invalidParameter(field, 'must not contain whitespace or control characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidParameter(field, 'is not a valid URL');
  }
  if (url.username !== '' || url.password !== '') throw invalidParameter(field, 'must not contain credentials');
  const refusal = refusedHost(url.hostname, hosts);
  if (refusal) throw invalidParameter(field, refusal);
  return url;
}

/**
 * Why a host is refused, or undefined. Identity-provider URLs are fetched by the service at
 * exchange time: an address inside the service's own network would let a configuration
 * make it call internal endpoints. IP literals are judged by the same address policy the
 * fetcher applies when it connects; `localhost` names count as loopback. Loopback is allowed
 * only in the local runtime.
 */
function refusedHost(hostname: string, hosts: HostRules): string | undefined {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return hosts.allowLoopback ? undefined : `the host ${hostname} is not a public address (loopback)`;
  }
  if (isIP(host) === 0) return undefined;
  const kind = refusedAddressKind(host, { allowLoopback: hosts.allowLoopback });
  return kind ? `the host ${hostname} is not a public address (${kind})` : undefined;
}

const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

function jwks(body: Body): { keys: JWK[] } | null | undefined {
  const value = body.jwks;
  if (value === undefined || value === null) return value;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParameter('jwks', 'must be a JWK Set: {"keys": [...]}');
  const keys = (value as Body).keys;
  if (!Array.isArray(keys) || keys.length === 0) throw invalidParameter('jwks', 'must have a non-empty "keys" array');
  if (keys.length > JWKS_MAX_KEYS) throw invalidParameter('jwks', `must have at most ${JWKS_MAX_KEYS} keys`);
  const seen = new Set<string>();
  const parsed = keys.map((key, index) => {
    const jwk = publicJwk(key, `keys[${index}]`);
    if (seen.has(jwk.kid!)) throw invalidParameter('jwks', `keys[${index}] repeats kid "${jwk.kid}"`);
    seen.add(jwk.kid!);
    return jwk;
  });
  return { keys: parsed };
}

/**
 * One public signing key, EC P-256 (ES256) or RSA of at least 2048 bits (RS256), SPEC 4.3.
 * Only its public members are kept.
 */
function publicJwk(value: unknown, where: string): JWK {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParameter('jwks', `${where} must be a JWK object`);
  const key = value as Record<string, unknown>;
  const secret = PRIVATE_JWK_MEMBERS.find((member) => member in key);
  if (secret) throw invalidParameter('jwks', `${where} has the private member "${secret}": give public keys only`);
  if (typeof key.kid !== 'string' || key.kid === '' || key.kid.length > 256) {
    throw invalidParameter('jwks', `${where} needs a "kid" (a non-empty string of at most 256 characters)`);
  }
  if (key.use !== undefined && key.use !== 'sig') throw invalidParameter('jwks', `${where} has "use" "${String(key.use)}": must be "sig"`);
  let jwk: JWK;
  if (key.kty === 'EC') {
    if (key.crv !== 'P-256') throw invalidParameter('jwks', `${where} is an EC key on ${String(key.crv)}: only P-256 (ES256) is accepted`);
    if (key.alg !== undefined && key.alg !== 'ES256') throw invalidParameter('jwks', `${where} has "alg" "${String(key.alg)}": an EC P-256 key signs ES256`);
    jwk = { kty: 'EC', crv: 'P-256', x: key.x as string, y: key.y as string };
  } else if (key.kty === 'RSA') {
    if (key.alg !== undefined && key.alg !== 'RS256') throw invalidParameter('jwks', `${where} has "alg" "${String(key.alg)}": an RSA key signs RS256`);
    jwk = { kty: 'RSA', n: key.n as string, e: key.e as string };
  } else {
    throw invalidParameter('jwks', `${where} has "kty" ${JSON.stringify(key.kty ?? null)}: only EC (P-256) and RSA keys are accepted`);
  }
  const members = Object.entries(jwk).filter(([name]) => name !== 'kty' && name !== 'crv');
  if (members.some(([, member]) => typeof member !== 'string' || !/^[A-Za-z0-9_-]+$/.test(member))) {
    throw invalidParameter('jwks', `${where} is not a valid ${jwk.kty} public key`);
  }
  let bits: number | undefined;
  try {
    bits = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }).asymmetricKeyDetails?.modulusLength;
  } catch {
    throw invalidParameter('jwks', `${where} is not a valid ${jwk.kty} public key`);
  }
  if (jwk.kty === 'RSA' && (bits === undefined || bits < RSA_MIN_BITS || bits > RSA_MAX_BITS)) {
    throw invalidParameter('jwks', `${where} is a ${bits}-bit RSA key: from ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits are accepted`);
  }
  return { ...jwk, kid: key.kid, ...(key.alg !== undefined ? { alg: key.alg as string } : {}), ...(key.use !== undefined ? { use: 'sig' } : {}) };
}
