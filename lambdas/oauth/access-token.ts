import { ACCESS_TOKEN_TYP, ACTING_KEY_CLAIM } from '../credentials/access-token-verifier';
import type { FederationScope } from '../federation/types';
import type { Signer } from '../signing/signer';

/**
 * The claims of an issued access token (docs/reference.md#access-tokens, RFC 9068 §2.2). Nothing in it is secret:
 * the acting key is named by its hash, which is also how key records are addressed.
 */
export interface AccessTokenClaims {
  /** The service's API base URL (configuration `API_BASE_URL`). */
  iss: string;
  /** The same URL: the token is for this service's API and no other. */
  aud: string;
  /** The subject token's `sub`. */
  sub: string;
  exp: number;
  iat: number;
  jti: string;
  /** RFC 9068 §2.2: the client the token was issued to; here the federation policy. */
  client_id: string;
  scope: FederationScope;
  federation_policy_id: string;
  federation_issuer_id: string;
  [ACTING_KEY_CLAIM]: string;
  /** RFC 9449 §6.1: a DPoP-bound token names the thumbprint of the key every proof must be signed by. */
  cnf?: { jkt: string };
}

/** What an access token is minted from: the exchange's decision (subject, policy, issuer, acting key, scope), the subject token's expiry and the clock. */
export interface MintInput {
  issuer: string;
  subject: string;
  policyId: string;
  issuerId: string;
  apiKeyHash: string;
  scope: FederationScope;
  /** The subject token's `exp` (epoch seconds): the access token never outlives it. */
  subjectExpiresAt: number;
  jti: string;
  /** Epoch seconds. */
  now: number;
  /** docs/reference.md#limits: at most 900. */
  maxLifetimeSeconds: number;
  /** The RFC 7638 thumbprint of the DPoP proof's key, for a bound token (RFC 9449 §6). */
  boundKey?: string;
}

/** A signed access token, its claims, and its lifetime for the `expires_in` of the answer. */
export interface MintedToken {
  token: string;
  claims: AccessTokenClaims;
  /** Exactly `exp - iat` (docs/reference.md#the-token-exchange `expires_in`). */
  expiresIn: number;
}

/** Refused before signing: the subject token expires within the current second. */
export class NoLifetimeLeftError extends Error {
  constructor() {
    super('The subject token leaves no lifetime for an access token');
    this.name = 'NoLifetimeLeftError';
  }
}

/**
 * Builds and signs an ES256 access token through the {@link Signer} port. The lifetime is
 * the earlier of the configured maximum and the subject token's expiry (docs/reference.md#lifecycle, docs/reference.md#scopes-and-access rule 4).
 */
export async function mintAccessToken(signer: Signer, input: MintInput): Promise<MintedToken> {
  const exp = Math.min(input.now + input.maxLifetimeSeconds, input.subjectExpiresAt);
  if (exp <= input.now) throw new NoLifetimeLeftError();
  const claims: AccessTokenClaims = {
    iss: input.issuer,
    aud: input.issuer,
    sub: input.subject,
    exp,
    iat: input.now,
    jti: input.jti,
    client_id: input.policyId,
    scope: input.scope,
    federation_policy_id: input.policyId,
    federation_issuer_id: input.issuerId,
    [ACTING_KEY_CLAIM]: input.apiKeyHash,
    ...(input.boundKey === undefined ? {} : { cnf: { jkt: input.boundKey } }),
  };
  const header = { alg: 'ES256', typ: ACCESS_TOKEN_TYP, kid: signer.kid };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = await signer.sign(Buffer.from(signingInput, 'ascii'));
  return { token: `${signingInput}.${Buffer.from(signature).toString('base64url')}`, claims, expiresIn: exp - input.now };
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
