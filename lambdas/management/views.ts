import { defaultGuardrailId } from '../accounts/derived-ids';
import type { KeyAssignment } from '../accounts/guardrails-service';
import type { WorkspaceBudgetOf } from '../accounts/workspace-budgets-service';
import type { ApiKeyRecord, Guardrail, Principal, Workspace } from '../accounts/types';
import { plainDecimal, type StoredLimit } from '../accounts/stored-limits';
import { compare, minus } from '../usd';
import type { FederationIssuer, FederationPolicy } from '../federation/types';
import { NO_USAGE, type ActivityRow, type KeyUsage } from '../usage/usage';

/** Wire shapes of the management API, following the public OpenAPI document's field names. */

/**
 * A key's spend in USD (docs/reference.md#keys-and-credentials: usage is attributed to the acting key) and its limit
 * (docs/limits.md), with the fields the public document requires beside them: no
 * bring-your-own-key usage here.
 */
function usageFields(key: Pick<ApiKeyRecord, 'limit' | 'includeByokInLimit'>, usage: KeyUsage) {
  const limit = key.limit ?? null;
  return {
    usage: usage.usage,
    usage_daily: usage.daily,
    usage_weekly: usage.weekly,
    usage_monthly: usage.monthly,
    byok_usage: 0,
    byok_usage_daily: 0,
    byok_usage_weekly: 0,
    byok_usage_monthly: 0,
    include_byok_in_limit: key.includeByokInLimit ?? false,
    limit: limit && Number(limit.amountUsd),
    limit_remaining: limit && limitRemaining(limit, usage),
    limit_reset: limit?.reset ?? null,
  };
}

/** docs/limits.md: the limit less what the key spent in the limit's current UTC window, never below 0. */
export function limitRemaining(limit: StoredLimit, usage: KeyUsage): number {
  const spent = plainDecimal({ daily: usage.daily, weekly: usage.weekly, monthly: usage.monthly, none: usage.usage }[limit.reset ?? 'none']);
  return compare(spent, limit.amountUsd) >= 0 ? 0 : Number(minus(limit.amountUsd, spent));
}

/**
 * A key's wire shape. `defaultWorkspaceId` stands for a management key's workspace: it belongs
 * to none, and the public key shape requires one (a string, never null), so the management API
 * names the organization's default workspace, where the public API puts what has no workspace.
 * Without it a management key's `workspace_id` is null (the operator CLI shows the record).
 */
export function keyView(key: ApiKeyRecord, usage: KeyUsage = NO_USAGE, defaultWorkspaceId: string | null = null) {
  return {
    ...usageFields(key, usage),
    hash: key.hash,
    name: key.name,
    label: key.label,
    kind: key.kind,
    access_level: key.accessLevel,
    disabled: key.disabled,
    workspace_id: key.workspaceId ?? defaultWorkspaceId,
    creator_user_id: key.userId,
    guardrail_ids: key.guardrailIds,
    // The official SDK requires the field; no key here belongs to an external user.
    external_user: null,
    expires_at: key.expiresAt,
    created_at: key.createdAt,
    updated_at: key.updatedAt,
  };
}

/** Workspace settings the public shape requires and modelgate does not have: no default models, no logging. */
export const WORKSPACE_SETTINGS = Object.freeze({
  default_text_model: null,
  default_image_model: null,
  default_provider_sort: null,
  is_observability_io_logging_enabled: false,
  is_observability_broadcast_enabled: false,
  is_data_discount_logging_enabled: false,
  io_logging_sampling_rate: 1,
  io_logging_api_key_ids: null,
  created_by: null,
});

/** A workspace's wire shape (public `Workspace`), with its default guardrail's id and the settings modelgate does not have. */
export function workspaceView(workspace: Workspace) {
  return {
    id: workspace.id,
    name: workspace.name,
    slug: workspace.slug,
    description: workspace.description,
    // Known before the guardrail exists: it exists once first written (PATCH /guardrails/{id}).
    default_guardrail_id: defaultGuardrailId(workspace.id),
    guardrail_ids: workspace.guardrailIds,
    created_at: workspace.createdAt,
    updated_at: workspace.updatedAt,
    ...WORKSPACE_SETTINGS,
    // Set with the workspace's budgets (PUT /workspaces/{id}/budgets/{interval}).
    include_byok_in_budgets: workspace.includeByokInBudgets ?? false,
  };
}

/** One of a workspace's budgets (public `WorkspaceBudget`): `lifetime` is the one that never resets. */
export function workspaceBudgetView({ workspace, interval, budget }: WorkspaceBudgetOf) {
  return {
    id: budget.id,
    workspace_id: workspace.id,
    limit_usd: Number(budget.amountUsd),
    reset_interval: interval === 'lifetime' ? null : interval,
    created_at: budget.createdAt,
    updated_at: budget.updatedAt,
  };
}

/** The answer about one of a workspace's budgets, with the workspace-wide bring-your-own-key flag beside it. */
export function workspaceBudgetAnswer(of: WorkspaceBudgetOf) {
  return { data: workspaceBudgetView(of), include_byok_in_budgets: of.workspace.includeByokInBudgets ?? false };
}

/** The answer listing a workspace's budgets, with its bring-your-own-key flag. */
export function workspaceBudgetsAnswer({ workspace, budgets }: { workspace: Workspace; budgets: readonly WorkspaceBudgetOf[] }) {
  return { data: budgets.map(workspaceBudgetView), include_byok_in_budgets: workspace.includeByokInBudgets ?? false };
}

/** A guardrail's wire shape (public `Guardrail`): its model and provider lists, and its budget. */
export function guardrailView(guardrail: Guardrail) {
  return {
    id: guardrail.id,
    name: guardrail.name,
    description: guardrail.description,
    workspace_id: guardrail.workspaceId,
    allowed_models: guardrail.allowedModels,
    ignored_models: guardrail.ignoredModels,
    allowed_providers: guardrail.allowedProviders,
    ignored_providers: guardrail.ignoredProviders,
    enforce_zdr: guardrail.enforceZdr,
    limit_usd: guardrail.budget ? Number(guardrail.budget.amountUsd) : null,
    reset_interval: guardrail.budget?.reset ?? null,
    include_byok_in_budgets: guardrail.includeByokInBudgets ?? false,
    created_at: guardrail.createdAt,
    updated_at: guardrail.updatedAt,
  };
}

/** One key's assignment to a guardrail (public `KeyAssignment`); no user made it (keys are not users here). */
export function keyAssignmentView(assignment: KeyAssignment) {
  return {
    id: assignment.id,
    key_hash: assignment.key.hash,
    guardrail_id: assignment.guardrailId,
    key_name: assignment.key.name,
    key_label: assignment.key.label,
    assigned_by: null,
    created_at: assignment.assignedAt,
  };
}

/** `GET /key`: the caller's own key, or the key an access token acts as (public `getCurrentKey`). */
export function currentKeyView(principal: Principal, usage: KeyUsage) {
  const { key, organization } = principal;
  return {
    label: key.label,
    ...usageFields(key, usage),
    is_management_key: key.kind === 'management',
    is_provisioning_key: false,
    is_free_tier: organization.plan === 'free',
    creator_user_id: key.userId,
    expires_at: key.expiresAt,
    organization_id: organization.id,
    workspace_id: key.workspaceId,
    allowed_data_regions: [],
    free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
    rate_limit: { requests: -1, interval: '10s', note: 'This field is deprecated and safe to ignore.' },
  };
}

/** One `GET /activity` item; `requests_via_*` say which credentials made the requests. */
export function activityView(row: Omit<ActivityRow, 'keyHash'>) {
  return {
    date: row.date,
    model: row.model,
    model_permaslug: row.modelPermaslug,
    endpoint_id: row.endpointId,
    provider_name: row.providerName,
    usage: row.usage,
    byok_usage_inference: 0,
    requests: row.requests,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    reasoning_tokens: 0,
    requests_via_api_key: row.requestsViaApiKey,
    requests_via_federation_policy: row.requestsViaPolicy,
  };
}

/** Workload identity: the admin API's issuer shape. */
export function issuerView(issuer: FederationIssuer) {
  return {
    id: issuer.id,
    name: issuer.name,
    issuer_url: issuer.issuerUrl,
    jwks_url: issuer.jwksUrl,
    jwks: issuer.jwks,
    check_jti: issuer.checkJti,
    created_at: issuer.createdAt,
    updated_at: issuer.updatedAt,
  };
}

/** Workload identity: the admin API's policy shape. */
export function policyView(policy: FederationPolicy) {
  return {
    id: policy.id,
    name: policy.name,
    issuer_id: policy.issuerId,
    subject: policy.subject,
    audience: policy.audience,
    condition: policy.condition,
    api_key_hash: policy.apiKeyHash,
    scope: policy.scope,
    enabled: policy.enabled,
    claim_checks: { scopes: policy.claimChecks.scopes, token_type: policy.claimChecks.tokenType },
    require_dpop: policy.requireDpop,
    created_at: policy.createdAt,
    updated_at: policy.updatedAt,
  };
}
