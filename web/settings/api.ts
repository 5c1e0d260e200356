/**
 * The admin API client of the settings page. The management key lives in `sessionStorage`
 * only (never a cookie, `localStorage` or a URL) and goes out as the bearer on same-origin
 * requests; the page has no other credential and no other origin to talk to.
 */

import { allPages } from './key-pages';

const KEY_STORAGE = 'modelgate.managementKey';

/** `/v1/settings/workload-identity` is served beside `/v1/api/v1` (the same stage). */
export const API_BASE = `${location.pathname.replace(/\/settings\/workload-identity\/?$/, '')}/api/v1`;

/** The management key the page signed in with, for this tab's session; null before sign-in. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

/** Keeps the management key for this tab's session (`sessionStorage`). */
export function storeKey(key: string): void {
  sessionStorage.setItem(KEY_STORAGE, key);
}

/** Signs out: the key leaves `sessionStorage`. */
export function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
}

/** An answer in the common error body (docs/reference.md#the-common-error-body): its status, message and the parameter it names, if any. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly parameter: string | null,
  ) {
    super(message);
  }
}

/** What a failure says, for the page to show. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Every key a `GET /keys` list (`query`) holds, page after page ({@link allPages}).
 * @example const keys = await allKeys<ApiKey>('include_management=true');
 */
export function allKeys<T>(query: string): Promise<T[]> {
  return allPages(async (offset) => (await api<{ data: T[] }>('GET', `/keys?${query}&offset=${offset}`)).data);
}

/**
 * Calls the admin API with the stored key and answers the parsed JSON, or throws an
 * {@link ApiFailure} (status 0 when the service cannot be reached).
 * @example const { data } = await api<{ data: Issuer[] }>('GET', '/workload-identity/issuers');
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const key = storedKey();
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiFailure(0, 'The service cannot be reached', null);
  }
  let parsed: unknown = null;
  try {
    parsed = await response.json();
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { message?: unknown; metadata?: { parameter?: unknown } } } | null)?.error;
    const message = typeof error?.message === 'string' ? error.message : `The service answered ${response.status}`;
    const parameter = typeof error?.metadata?.parameter === 'string' ? error.metadata.parameter : null;
    throw new ApiFailure(response.status, message, parameter);
  }
  return parsed as T;
}

/** `GET /workload-identity/entitlement`: whether the plan includes workload identity federation, and whether this key may change anything. */
export interface Entitlement {
  entitled: boolean;
  plan: string;
  access_level: 'read-write' | 'read-only' | null;
}

/** A trusted identity provider, as the API lists it. */
export interface Issuer {
  id: string;
  name: string;
  issuer_url: string;
  jwks_url: string | null;
  jwks: { keys: unknown[] } | null;
  check_jti: boolean;
}

/** A policy's checks of the token's `scopes` and `token_type` claims; null where it checks none. */
export interface ClaimChecks {
  scopes: string | null;
  token_type: string | null;
}

/** A federation policy, as the API lists it: which tokens of an issuer act as which key. */
export interface Policy {
  id: string;
  name: string;
  issuer_id: string;
  subject: string | null;
  audience: string;
  condition: string | null;
  api_key_hash: string;
  scope: 'inference' | 'management';
  enabled: boolean;
  claim_checks: ClaimChecks;
  /** Issue DPoP-bound tokens only (RFC 9449). */
  require_dpop: boolean;
}

/** An API key as the keys listing gives it: a policy names one by its hash. */
export interface ApiKey {
  hash: string;
  name: string;
  label: string;
  kind: 'workspace' | 'management' | 'personal';
  access_level: string | null;
  disabled: boolean;
}

/** One check of the policy tester, in order; those after a failure are `not_reached`. */
export interface TestStep {
  name: string;
  status: 'passed' | 'failed' | 'not_reached';
  detail: string;
}

/** What the policy tester answers for a token (`POST /workload-identity/policies/{id}/evaluate`): the outcome and each step. */
export interface TestResult {
  result: 'pass' | 'fail';
  expires_in: number | null;
  /** The token the exchange would issue: DPoP-bound with a valid proof, else Bearer; null on fail. */
  token_type: 'DPoP' | 'Bearer' | null;
  /** The RFC 7638 thumbprint of the proof key the token would be bound to. */
  dpop_jkt: string | null;
  steps: TestStep[];
}

/** Whether a CEL condition compiles (`POST /workload-identity/conditions/check`), and why not. */
export interface ConditionCheck {
  valid: boolean;
  message: string | null;
}

/** One token exchange under a policy, issued or refused, as the events listing gives it. */
export interface ExchangeEvent {
  id: string;
  time: string;
  policy_id: string;
  outcome: 'issued' | 'refused';
  reason: string | null;
  subject: string | null;
  subject_verified: boolean;
  source_ip: string;
  /** The thumbprint of the exchange's valid DPoP proof key: what an issued token is bound to; null for a Bearer token. */
  dpop_jkt: string | null;
}
