import { generateKeyPairSync, sign } from 'node:crypto';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { JWK } from 'jose';
import { hashApiKey } from '../../lambdas/accounts/api-keys';
import type { ApiKeyRecord, Organization } from '../../lambdas/accounts/types';
import { DEFAULT_PRIVACY, DEFAULT_PROVIDER_PREFERENCES } from '../../lambdas/accounts/types';
import { randomId } from '../../lambdas/clock';
import type { FederationIssuer, FederationPolicy } from '../../lambdas/federation/types';
import { exchangeForm } from '../../local/exchange-form';

/** An exchange request without a DPoP proof. */
export const NO_PROOF = { proofs: [], method: 'POST', path: '/api/v1/oauth/token', stageUrl: undefined, host: undefined } as const;

const ISSUER_URL = 'https://token.actions.githubusercontent.com';
/** The audience the policy and the subject tokens name. */
export const AUDIENCE = 'https://modelgate.example';
/** The subject the policy trusts. */
export const SUBJECT = 'repo:acme/app:ref:refs/heads/main';
/** The API's base URL: the issuer of the access tokens and the audience of DPoP proofs. */
export const API_BASE_URL = 'https://api.modelgate.example/api/v1';

/** The one organization. */
export const organization: Organization = {
  id: '0b6f7c1e-8a3d-4c55-9a61-3f1d2e4b5a01',
  name: 'Bench',
  plan: 'enterprise',
  providerPreferences: { ...DEFAULT_PROVIDER_PREFERENCES },
  privacy: { ...DEFAULT_PRIVACY },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};
/** The organization's workspace key, the one the policy acts as. */
export const workspaceKey: ApiKeyRecord = {
  hash: hashApiKey('sk-mg-v1-bench'),
  organizationId: organization.id,
  kind: 'workspace',
  workspaceId: 'c4e1f2a3-0000-4000-8000-000000000001',
  accessLevel: null,
  userId: null,
  name: 'bench',
  label: 'sk-mg-v1-…ench',
  disabled: false,
  guardrailIds: [],
  expiresAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};
const idpKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** The identity provider's public key, as the issuer lists it inline. */
export const idpJwk: JWK = { ...(idpKey.publicKey.export({ format: 'jwk' }) as JWK), kid: 'bench-1', alg: 'ES256', use: 'sig' };
/** The identity provider, with its keys inline. */
export const issuer: FederationIssuer = {
  id: '5d2a9c0e-1b7f-4e3a-8c6d-2f4e6a8b0c12',
  organizationId: organization.id,
  name: 'GitHub Actions',
  issuerUrl: ISSUER_URL,
  jwksUrl: null,
  jwks: { keys: [idpJwk] },
  checkJti: false,
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};
/** The policy the plain exchange uses: subject, audience and a short condition. */
export const policy: FederationPolicy = {
  id: 'a3c5e7f9-2b4d-4f6a-8c0e-1d3f5a7b9c23',
  organizationId: organization.id,
  name: 'deploy',
  issuerId: issuer.id,
  subject: SUBJECT,
  audience: AUDIENCE,
  condition: 'audience.exists(a, a == "https://modelgate.example") && token_type == ""',
  apiKeyHash: workspaceKey.hash,
  scope: 'inference',
  enabled: true,
  claimChecks: { scopes: null, tokenType: null },
  requireDpop: false,
  version: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: null,
};

/** A subject token of the identity provider with these claims, valid for an hour. */
export function subjectToken(claims: Record<string, unknown> = { sub: SUBJECT, aud: AUDIENCE }): string {
  const now = Math.floor(Date.now() / 1000);
  const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: 'bench-1' })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ iss: ISSUER_URL, ...claims, iat: now, exp: now + 3600, jti: randomId() })).toString('base64url');
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key: idpKey.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${signature.toString('base64url')}`;
}

/** The proxy event of the n-th token request with this form body. */
export function proxyEvent(body: string, n: number): APIGatewayProxyEvent {
  return {
    resource: '/api/v1/oauth/token',
    path: '/api/v1/oauth/token',
    httpMethod: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    // Addresses in turn: the limiter does its work without refusing.
    requestContext: { requestId: `bench-${n}`, identity: { sourceIp: benchAddress(n) } },
  } as unknown as APIGatewayProxyEvent;
}

/** The Lambda context every invocation gets. */
export const context = { awsRequestId: 'bench', functionName: 'tokenExchange', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

/** The exchange's form body for a subject token and a policy. */
export const formBody = (token: string, policyId = policy.id) =>
  new URLSearchParams(exchangeForm(token, policyId)).toString();

/** 65,536 source addresses taken in turn. */
export const benchAddress = (n: number) => `10.0.${(n >> 8) & 255}.${n & 255}`;

/** 0, 1, 2, …: each request's source address in turn. */
export function counter(): () => number {
  let n = 0;
  return () => n++;
}
