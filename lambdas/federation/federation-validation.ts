import { createPublicKey, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { JWK } from 'jose';
import { invalidParameter } from '../errors';
import { normalizeHostname } from '../hostname';
import { MAX_RSA_BITS, MIN_RSA_BITS, PRIVATE_JWK_MEMBERS, RSA_PUBLIC_EXPONENT, keyEncodingProblem, rsaKeyProblem } from '../credentials/key-admission';
import { validated } from '../openapi/request-validation';
import {
  createFederationPolicyBody,
  createIssuerBody,
  updateFederationPolicyBody,
  updateIssuerBody,
  type CreateIssuerBody,
  type UpdateIssuerBody,
} from '../openapi/validators/management.generated';
import { refusedAddressKind } from './address-policy';
import { ConditionError, checkCondition, evaluateCondition } from './condition';
import { SUBJECT_PINNING_EXAMPLE } from './subject-pinning';
import type { ClaimChecks, FederationIssuer, FederationPolicy } from './types';

/**
 * Validation of issuer and policy input, in the management API's wire names: the API passes
 * the request body, the operator CLI an object built from its flags, so both give the same
 * answers. The body's shape is its schema's (CreateIssuerRequest and the others of the OpenAPI
 * document, compiled ahead of time); what a schema cannot state is here: the host rules of the
 * URLs the service will fetch, the admission of public keys, and CEL (docs/reference.md#conditions). Each refusal
 * is a 400 naming the field (`metadata.parameter`). Rules that need stored state (the issuer
 * exists, the key is live) are the service's.
 */

type Body = Record<string, unknown>;

/** Which hosts an issuer's URLs may name, beyond the public ones. */
export interface HostRules {
  /** The local runtime only: accept loopback hosts for a development identity provider. */
  allowLoopback: boolean;
}

/** What an admin writes of an issuer; the service adds its id, organization, version and times. */
export type IssuerInput = Pick<FederationIssuer, 'name' | 'issuerUrl' | 'jwksUrl' | 'jwks' | 'checkJti'>;

/** A change of an issuer: the fields given, validated as on create. */
export type IssuerPatch = Partial<IssuerInput>;

/** What an admin writes of a policy; the service derives its scope from the acting key. */
export type PolicyInput = Pick<
  FederationPolicy,
  'name' | 'issuerId' | 'subject' | 'audience' | 'condition' | 'apiKeyHash' | 'enabled' | 'claimChecks' | 'requireDpop'
>;

/** A change of a policy: the fields given, each claim check set or removed on its own. */
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

/** The provider name when `issuerUrl` is a multi-tenant issuer (a trailing slash or dot, a port or host case does not hide it). */
export function multiTenantProvider(issuerUrl: string): string | undefined {
  let normalised = issuerUrl;
  try {
    const url = new URL(issuerUrl);
    // The host as the host rules see it: `Token.Actions.GitHubUserContent.com.:443` is GitHub Actions.
    normalised = `${url.protocol}//${normalizeHostname(url.host)}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
  return MULTI_TENANT_ISSUERS[normalised];
}

/** A create-issuer body, validated: its schema, the host rules of its URLs, its inline keys. */
export function parseIssuerCreate(input: Body, hosts: HostRules): IssuerInput {
  const body = validated(createIssuerBody, input);
  const issuer: IssuerInput = {
    name: body.name,
    issuerUrl: issuerUrl(body.issuer_url, hosts),
    jwksUrl: body.jwks_url == null ? null : jwksUrl(body.jwks_url, hosts),
    jwks: body.jwks == null ? null : jwks(body.jwks),
    checkJti: body.check_jti ?? false,
  };
  checkKeySource(issuer);
  return issuer;
}

/** An update-issuer body, validated as on create; `null` clears `jwks_url` or `jwks`. */
export function parseIssuerPatch(input: Body, hosts: HostRules): IssuerPatch {
  const body: UpdateIssuerBody = validated(updateIssuerBody, input);
  return {
    name: body.name,
    issuerUrl: body.issuer_url === undefined ? undefined : issuerUrl(body.issuer_url, hosts),
    jwksUrl: body.jwks_url == null ? body.jwks_url : jwksUrl(body.jwks_url, hosts),
    jwks: body.jwks == null ? body.jwks : jwks(body.jwks),
    checkJti: body.check_jti,
  };
}

/** An issuer takes its keys from one place: a JWKS URL, inline keys, or (neither) OIDC discovery. */
export function checkKeySource(issuer: Pick<IssuerInput, 'jwksUrl' | 'jwks'>): void {
  if (issuer.jwksUrl !== null && issuer.jwks !== null) {
    throw invalidParameter('jwks', 'an issuer takes jwks_url or jwks, not both (set the other to null)');
  }
}

/** A create-policy body, validated, its condition checked; unset options take their defaults. */
export function parsePolicyCreate(input: Body): PolicyInput {
  const body = validated(createFederationPolicyBody, input);
  return {
    name: body.name,
    issuerId: body.issuer_id,
    subject: body.subject ?? null,
    audience: body.audience,
    condition: body.condition == null ? null : condition(body.condition),
    apiKeyHash: body.api_key_hash,
    enabled: body.enabled ?? true,
    claimChecks: { scopes: body.claim_checks?.scopes ?? null, tokenType: body.claim_checks?.token_type ?? null },
    requireDpop: body.require_dpop ?? false,
  };
}

/** An update-policy body, validated, its condition checked; absent fields stay as they are. */
export function parsePolicyPatch(input: Body): PolicyPatch {
  const body = validated(updateFederationPolicyBody, input);
  const checks = body.claim_checks;
  return {
    name: body.name,
    issuerId: body.issuer_id,
    subject: body.subject,
    audience: body.audience,
    condition: body.condition == null ? body.condition : condition(body.condition),
    apiKeyHash: body.api_key_hash,
    enabled: body.enabled,
    // `null` removes every check; a check given as null is removed, an absent one kept.
    claimChecks: checks === undefined ? undefined : checks === null ? { scopes: null, tokenType: null } : { scopes: checks.scopes, tokenType: checks.token_type },
    requireDpop: body.require_dpop,
  };
}

/** Applies a validated patch: absent fields keep their value; each claim check is set or removed on its own (docs/reference.md#federation-policies rule 3). */
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
    requireDpop: defined(patch.requireDpop, policy.requireDpop),
  };
}

/**
 * The rules over a whole policy and its issuer: docs/reference.md#federation-policies rule 1 (subject or condition), and
 * on a multi-tenant issuer the shared-issuer rule: an exact subject, or a condition that pins
 * the subject (`subject-pinning.ts`) and is false for a random subject.
 */
export function checkPolicyRules(
  policy: Pick<FederationPolicy, 'subject' | 'condition' | 'audience'>,
  issuer: Pick<FederationIssuer, 'issuerUrl'>,
): void {
  if (policy.subject === null && policy.condition === null) {
    throw invalidParameter('subject', 'a policy needs a subject or a condition, or both');
  }
  const provider = multiTenantProvider(issuer.issuerUrl);
  if (!provider || policy.subject !== null) return;
  const refusal = `${issuer.issuerUrl} issues tokens to every ${provider} customer, so without an exact subject the condition must pin it`;
  if (!checkCondition(policy.condition!).pinsSubject) {
    throw invalidParameter(
      'condition',
      `${refusal}: one clause joined by && must compare subject with a literal, require it to be in a list of literals, ` +
        `or test it with startsWith against a literal that names an owner, for example ${SUBJECT_PINNING_EXAMPLE}`,
    );
  }
  if (isTrueForRandomSubject(policy.condition!, policy.audience)) {
    throw invalidParameter('condition', `${refusal}: this condition is true for a random subject, for example ${SUBJECT_PINNING_EXAMPLE}`);
  }
}

/** Whether the condition lets through a subject no one chose (an error counts as false). */
export function isTrueForRandomSubject(source: string, audience: string): boolean {
  const nonce = randomBytes(12).toString('hex');
  const subject = `repo:${nonce}/${nonce}:ref:refs/heads/${nonce}`;
  try {
    return evaluateCondition(source, { subject, audience: [audience], scopes: [], token_type: '' });
  } catch {
    return false;
  }
}

/** docs/reference.md#conditions: the save-time checker; its refusal names the condition. */
function condition(source: string): string {
  try {
    return checkCondition(source).source;
  } catch (error) {
    if (error instanceof ConditionError) throw invalidParameter('condition', error.message);
    throw error;
  }
}

function issuerUrl(value: string, hosts: HostRules): string {
  const url = httpsUrl(value, 'issuer_url', hosts);
  // OpenID Connect Discovery 1.0 §3: an issuer identifier has no query or fragment.
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    throw invalidParameter('issuer_url', 'must not have a query or fragment');
  }
  return value;
}

function jwksUrl(value: string, hosts: HostRules): string {
  const url = httpsUrl(value, 'jwks_url', hosts);
  if (url.hash !== '' || value.includes('#')) throw invalidParameter('jwks_url', 'must not have a fragment');
  return value;
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
  // `LocalHost.` is `localhost`: the checks below see the host as a resolver would.
  const normalised = normalizeHostname(hostname);
  const host = normalised.startsWith('[') ? normalised.slice(1, -1) : normalised;
  // An empty label (`localhost..`, `.example.com`) names no host a resolver would look up as written.
  if (host.split('.').includes('')) return `the host ${hostname} is not a valid host name`;
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return hosts.allowLoopback ? undefined : `the host ${hostname} is not a public address (loopback)`;
  }
  if (isIP(host) === 0) return undefined;
  const kind = refusedAddressKind(host, { allowLoopback: hosts.allowLoopback });
  return kind ? `the host ${hostname} is not a public address (${kind})` : undefined;
}

/** The key set's shape is its schema's (1 to 20 keys); each key is admitted here. */
function jwks(set: NonNullable<CreateIssuerBody['jwks']>): { keys: JWK[] } {
  const seen = new Set<string>();
  const keys = set.keys.map((key, index) => {
    const jwk = publicJwk(key, `keys[${index}]`);
    if (seen.has(jwk.kid!)) throw invalidParameter('jwks', `keys[${index}] repeats kid "${jwk.kid}"`);
    seen.add(jwk.kid!);
    return jwk;
  });
  return { keys };
}

type JwkBody = NonNullable<CreateIssuerBody['jwks']>['keys'][number];

/**
 * One public signing key, EC P-256 (ES256) or RSA of at least 2048 bits (RS256), docs/reference.md#subject-tokens; the
 * schema has checked that it is an object of kty EC or RSA. Only its public members are kept.
 */
function publicJwk(key: JwkBody, where: string): JWK {
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
  } else {
    if (key.alg !== undefined && key.alg !== 'RS256') throw invalidParameter('jwks', `${where} has "alg" "${String(key.alg)}": an RSA key signs RS256`);
    jwk = { kty: 'RSA', n: key.n as string, e: key.e as string };
  }
  const members = Object.entries(jwk).filter(([name]) => name !== 'kty' && name !== 'crv');
  if (members.some(([, member]) => typeof member !== 'string' || !/^[A-Za-z0-9_-]+$/.test(member))) {
    throw invalidParameter('jwks', `${where} is not a valid ${jwk.kty} public key`);
  }
  // The key admission of lambdas/credentials/key-admission.ts: one encoding per key, so the set
  // never holds two spellings of one key, and the RSA bounds the exchange holds keys to.
  const encoding = keyEncodingProblem(jwk as Record<string, unknown>);
  if (encoding !== null) throw invalidParameter('jwks', `${where} ${encoding}`);
  const rsa = jwk.kty === 'RSA' ? rsaKeyProblem(jwk as Record<string, unknown>) : null;
  if (rsa !== null && 'exponent' in rsa) {
    throw invalidParameter('jwks', `${where} has the RSA exponent "${rsa.exponent.slice(0, 20)}": only 65537 ("${RSA_PUBLIC_EXPONENT}") is accepted`);
  }
  if (rsa !== null) throw invalidParameter('jwks', `${where} is a ${rsa.bits}-bit RSA key: from ${MIN_RSA_BITS} to ${MAX_RSA_BITS} bits are accepted`);
  try {
    createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
  } catch {
    throw invalidParameter('jwks', `${where} is not a valid ${jwk.kty} public key`);
  }
  return { ...jwk, kid: key.kid, ...(key.alg !== undefined ? { alg: key.alg } : {}), ...(key.use !== undefined ? { use: 'sig' } : {}) };
}
