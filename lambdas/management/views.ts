import type { ApiKeyRecord, Guardrail, Workspace } from '../accounts/types';

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
