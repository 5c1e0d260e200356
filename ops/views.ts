import type { Organization, User } from '../lambdas/accounts/types';

export { guardrailView, issuerView, keyView, policyView, workspaceBudgetAnswer, workspaceBudgetsAnswer, workspaceView } from '../lambdas/management/views';

/** An organization as `--json` prints it: the management API's wire names (snake_case), as its views use. */
export function organizationView(organization: Organization) {
  return {
    id: organization.id,
    name: organization.name,
    plan: organization.plan,
    provider_preferences: {
      allowed_providers: organization.providerPreferences.allowedProviders,
      ignored_providers: organization.providerPreferences.ignoredProviders,
    },
    privacy: {
      allow_training_providers: organization.privacy.allowTrainingProviders,
      allow_retaining_providers: organization.privacy.allowRetainingProviders,
      zero_data_retention_only: organization.privacy.zeroDataRetentionOnly,
    },
    created_at: organization.createdAt,
    updated_at: organization.updatedAt,
  };
}

/** A user as `--json` prints it, in the management API's wire names. */
export function userView(user: User) {
  return { id: user.id, email: user.email, name: user.name, created_at: user.createdAt };
}
