import type { FederationIssuer, FederationPolicy, FederationReader } from './types';

/**
 * Persistence of issuers and policies: what the token exchange reads ({@link FederationReader})
 * plus the admin operations. Every write of an existing item is conditional on the version
 * the caller read, so two concurrent updates never silently overwrite each other: the loser
 * gets `false` and retries on a fresh read. An operation that spans two items writes them one
 * at a time, in an order chosen so that an interrupted operation leaves nothing a reader could
 * take for valid configuration.
 */
export interface FederationStore extends FederationReader {
  /**
   * Claims the issuer URL within the organization, then writes the issuer. Throws
   * {@link IssuerUrlTakenError} when another issuer of the organization holds the URL, and
   * {@link CountLimitReachedError} when the organization has `limit` issuers: the bound holds
   * under concurrent creates and after a crash, never by counting first. When the URL is held
   * by another issuer's write that has not finished (it may still, or its process stopped), an
   * `UnfinishedWriteError` says when it is free again.
   * @default limit {@link FEDERATION_LIMITS}.issuers
   */
  createIssuer(issuer: FederationIssuer, limit?: number): Promise<void>;
  /** Strongly consistent, oldest first. */
  listIssuers(organizationId: string): Promise<FederationIssuer[]>;
  /**
   * Replaces the issuer when its stored version is `expectedVersion` (`next.version` is the
   * new one). A changed URL is claimed first and the old claim released after; a claim
   * belongs to the write that made it, so a write that loses releases only its own. Returns
   * false when the issuer is gone or was changed meanwhile (another write of it holds the
   * new URL included); throws {@link IssuerUrlTakenError} (or `UnfinishedWriteError`) as a create.
   */
  updateIssuer(next: FederationIssuer, expectedVersion: number): Promise<boolean>;
  /** Deletes the issuer, releases its URL and gives its place under the limit back; false when it did not exist. */
  deleteIssuer(organizationId: string, issuerId: string): Promise<boolean>;

  /**
   * Writes the policy; {@link CountLimitReachedError} when the organization has `limit`
   * policies (as for issuers). @default limit {@link FEDERATION_LIMITS}.policies
   */
  createPolicy(policy: FederationPolicy, limit?: number): Promise<void>;
  /** Oldest first; with `issuerId`, only that issuer's policies. May lag a write briefly (index). */
  listPolicies(organizationId: string, issuerId?: string): Promise<FederationPolicy[]>;
  /** Replaces the policy when its stored version is `expectedVersion`; false when gone or changed meanwhile. */
  updatePolicy(next: FederationPolicy, expectedVersion: number): Promise<boolean>;
  /** Deletes the policy and gives its place under the limit back; false when it did not exist in that organization. */
  deletePolicy(organizationId: string, policyId: string): Promise<boolean>;
}

/** Another issuer of the organization has this issuer URL. */
export class IssuerUrlTakenError extends Error {
  constructor(readonly issuerUrl: string) {
    super(`An issuer with issuer_url ${issuerUrl} already exists in this organization`);
    this.name = 'IssuerUrlTakenError';
  }
}

/** Per organization: generous for real use, and a bound on what one admin key can make the service store and list. */
export const FEDERATION_LIMITS = Object.freeze({ issuers: 100, policies: 1000 });

/** What a per-organization count limit bounds. */
export type CountedKind = 'issuers' | 'policies';

/** The organization has as many issuers or policies as it may. */
export class CountLimitReachedError extends Error {
  constructor(
    readonly kind: CountedKind,
    readonly limit: number,
  ) {
    super(`An organization has at most ${limit} ${kind}: delete one first`);
    this.name = 'CountLimitReachedError';
  }
}

/** Listing order of issuers and policies: by creation time, ties by id. */
export function byCreation(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number {
  return a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}
