/** Organizations, workspaces, users, API keys and guardrails: what authentication and the catalog stand on. */
import type { StoredLimit, WorkspaceBudgets } from './stored-limits';

/** An organization's plans, lowest first: the two highest carry workload identity federation. */
export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
/** One of {@link PLANS}. */
export type Plan = (typeof PLANS)[number];

/** An organization's choice of providers, applied to every catalog it sees. */
export interface ProviderPreferences {
  /** When set, only these providers (endpoint tags) are used. */
  allowedProviders: string[] | null;
  /** Providers never used. */
  ignoredProviders: string[];
}

/** An organization's privacy settings: which providers' data handling it accepts. */
export interface PrivacySettings {
  /** Allow providers that may train on prompts. */
  allowTrainingProviders: boolean;
  /** Allow providers that retain prompts. */
  allowRetainingProviders: boolean;
  /** Only zero-data-retention endpoints. */
  zeroDataRetentionOnly: boolean;
}

/** An organization as stored: its plan, provider preferences and privacy settings. */
export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  providerPreferences: ProviderPreferences;
  privacy: PrivacySettings;
  createdAt: string;
  updatedAt: string | null;
}

/** A new organization's provider preferences: every provider allowed, none ignored. */
export const DEFAULT_PROVIDER_PREFERENCES: ProviderPreferences = Object.freeze({
  allowedProviders: null,
  ignoredProviders: [],
}) as ProviderPreferences;

/** A new organization's privacy settings: every provider accepted. */
export const DEFAULT_PRIVACY: PrivacySettings = Object.freeze({
  allowTrainingProviders: true,
  allowRetainingProviders: true,
  zeroDataRetentionOnly: false,
});

/** A workspace as stored: a group of keys, with the guardrails and budgets that apply to them all. */
export interface Workspace {
  id: string;
  organizationId: string;
  name: string;
  slug: string;
  description: string | null;
  /**
   * The guardrails that apply to every key of the workspace; its default guardrail
   * (derived-ids.ts) joins them when first written, and stays.
   */
  guardrailIds: string[];
  /** When each of `guardrailIds` was assigned, where known (the request path reads it; views do not show it). */
  guardrailAssignedAt?: Readonly<Record<string, string>>;
  /** Pooled caps on what the workspace's keys spend, by interval (docs/limits.md). */
  budgets?: WorkspaceBudgets;
  /** Stored and shown as given: no spend here is bring-your-own-key. */
  includeByokInBudgets?: boolean;
  createdAt: string;
  updatedAt: string | null;
}

/** A user of an organization, the owner of personal keys. */
export interface User {
  id: string;
  organizationId: string;
  email: string;
  name: string;
  createdAt: string;
}

/** Workspace keys act in a workspace, personal keys are a user's own, management keys call the management API. */
export const KEY_KINDS = ['workspace', 'management', 'personal'] as const;
/** One of {@link KEY_KINDS}. */
export type KeyKind = (typeof KEY_KINDS)[number];

/** What a management key may do: read and change, or only read. */
export const ACCESS_LEVELS = ['read-write', 'read-only'] as const;
/** One of {@link ACCESS_LEVELS}. */
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/** An API key as stored: never the secret, only its SHA-256 hash. */
export interface ApiKeyRecord {
  hash: string;
  organizationId: string;
  kind: KeyKind;
  /** Workspace keys and personal keys act in a workspace; management keys in none. */
  workspaceId: string | null;
  /** Management keys only. */
  accessLevel: AccessLevel | null;
  /** Personal keys: the user who owns the key. */
  userId: string | null;
  name: string;
  /** Recognisable, non-secret form: prefix and last four characters. */
  label: string;
  disabled: boolean;
  guardrailIds: string[];
  /** When each of `guardrailIds` was assigned, where known (assignments since this was recorded). */
  guardrailAssignedAt?: Readonly<Record<string, string>>;
  /** The key's own spending limit (docs/limits.md); absent or null: none. */
  limit?: StoredLimit | null;
  /** Stored and shown as given: no spend here is bring-your-own-key. */
  includeByokInLimit?: boolean;
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string | null;
}

/** Guardrail restrictions (public OpenAPI `Guardrail`), the part the catalog enforces. */
export interface Guardrail {
  id: string;
  organizationId: string;
  workspaceId: string | null;
  name: string;
  description: string | null;
  /** Model canonical slugs or ids; null means no allowlist. */
  allowedModels: string[] | null;
  ignoredModels: string[] | null;
  allowedProviders: string[] | null;
  ignoredProviders: string[] | null;
  /** Only zero-data-retention endpoints. */
  enforceZdr: boolean;
  /** A budget applying to each key the guardrail covers (docs/limits.md); absent or null: none. Always resets. */
  budget?: StoredLimit | null;
  /** Stored and shown as given: no spend here is bring-your-own-key. */
  includeByokInBudgets?: boolean;
  /**
   * Bumped by every update, which is written only at the version it read. Absent on
   * guardrails written before updates were versioned (their first update writes 1).
   */
  version?: number;
  createdAt: string;
  updatedAt: string | null;
}

/** Who is calling, after authentication. */
export interface Principal {
  organization: Organization;
  key: ApiKeyRecord;
  /** The key's workspace; null for a key outside any workspace, or a workspace since deleted. */
  workspace: Workspace | null;
  /** docs/reference.md#federation-policies: what the credential may do. */
  scope: 'inference' | 'management';
  /** How the caller authenticated. */
  credential: 'api_key' | 'access_token';
  /** The federation policy that authorized an access token (docs/reference.md#access-tokens); null for an API key. */
  federationPolicyId: string | null;
}

/**
 * The most keys one key list answers: a workspace may hold 100,000, and their views would pass
 * what an answer may carry (API Gateway's 10 MB, Lambda's 6 MB); `offset` pages on.
 */
export const KEYS_PAGE = 1000;

/**
 * Longest values of the management API's text fields; workspaces and guardrails as the public
 * shapes bound them. `keys`: the most keys one workspace holds, counted on its item
 * (lambdas/aws/dynamo-workspace-keys.ts), which stays one size whatever the count.
 */
export const WORKSPACE_LIMITS = Object.freeze({ name: 100, description: 500, keys: 100_000 });
/**
 * Longest guardrail name and description, and the bounds of its four model and provider lists:
 * entries per list, characters per entry (catalog ids run to about 60), and UTF-8 bytes of all
 * four together, which keeps a guardrail, read on every request of the keys it covers, within
 * five read units; and how many guardrails one key or workspace may hold, so a request reads at
 * most twice that many (docs/api.md, "Keys and guardrail assignments").
 */
export const GUARDRAIL_LIMITS = Object.freeze({ name: 200, description: 1000, listEntries: 1000, entry: 128, listBytes: 16_384, perHolder: 10 });
/** Longest key name. */
export const KEY_NAME_MAX = 256;

/** Workspace slugs: safe in URLs and file names, unique per organization. */
export const WORKSPACE_SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
