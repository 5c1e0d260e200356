import type { ApiKeyRecord, Guardrail, Workspace } from '../accounts/types';
import type { FederationIssuer, FederationPolicy } from '../federation/types';

/** Wire shapes of the management API, following the public OpenAPI document's field names. */

export function keyView(key: ApiKeyRecord) {
  return {
    hash: key.hash,
    name: key.name,
    label: key.label,
    kind: key.kind,
    access_level: key.accessLevel,
    disabled: key.disabled,
    workspace_id: key.workspaceId,
    creator_user_id: key.userId,
    guardrail_ids: key.guardrailIds,
    expires_at: key.expiresAt,
    created_at: key.createdAt,
    updated_at: key.updatedAt,
  };
}

export function workspaceView(workspace: Workspace) {
  return {
    id: workspace.id,
    name: workspace.name,
    slug: workspace.slug,
    description: workspace.description,
    guardrail_ids: workspace.guardrailIds,
    created_at: workspace.createdAt,
    updated_at: workspace.updatedAt,
  };
}

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
    created_at: guardrail.createdAt,
    updated_at: guardrail.updatedAt,
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
    created_at: policy.createdAt,
    updated_at: policy.updatedAt,
  };
}
