import type { ApiKeyRecord, Guardrail, Organization, User, Workspace } from './types';

export type OrganizationPatch = Partial<Pick<Organization, 'name' | 'plan' | 'providerPreferences' | 'privacy'>>;
export type ApiKeyPatch = Partial<Pick<ApiKeyRecord, 'name' | 'disabled' | 'guardrailIds' | 'expiresAt'>>;
export type WorkspacePatch = Partial<Pick<Workspace, 'name' | 'description' | 'guardrailIds'>>;
export type GuardrailPatch = Partial<
  Pick<Guardrail, 'name' | 'description' | 'allowedModels' | 'ignoredModels' | 'allowedProviders' | 'ignoredProviders' | 'enforceZdr'>
>;

/**
 * Persistence of accounts. Creates fail with {@link AlreadyExistsError} when the item
 * exists; updates and deletes of a missing item return `undefined` / `false`.
 */
export interface AccountStore {
  createOrganization(organization: Organization): Promise<void>;
  getOrganization(id: string): Promise<Organization | undefined>;
  listOrganizations(): Promise<Organization[]>;
  updateOrganization(id: string, patch: OrganizationPatch, updatedAt: string): Promise<Organization | undefined>;

  createWorkspace(workspace: Workspace): Promise<void>;
  getWorkspace(organizationId: string, id: string): Promise<Workspace | undefined>;
  listWorkspaces(organizationId: string): Promise<Workspace[]>;
  updateWorkspace(organizationId: string, id: string, patch: WorkspacePatch, updatedAt: string): Promise<Workspace | undefined>;

  createUser(user: User): Promise<void>;
  getUser(organizationId: string, id: string): Promise<User | undefined>;

  createApiKey(key: ApiKeyRecord): Promise<void>;
  getApiKey(hash: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(organizationId: string): Promise<ApiKeyRecord[]>;
  updateApiKey(hash: string, patch: ApiKeyPatch, updatedAt: string): Promise<ApiKeyRecord | undefined>;
  deleteApiKey(hash: string): Promise<boolean>;

  createGuardrail(guardrail: Guardrail): Promise<void>;
  getGuardrail(organizationId: string, id: string): Promise<Guardrail | undefined>;
  getGuardrails(organizationId: string, ids: readonly string[]): Promise<Guardrail[]>;
  listGuardrails(organizationId: string): Promise<Guardrail[]>;
  updateGuardrail(organizationId: string, id: string, patch: GuardrailPatch, updatedAt: string): Promise<Guardrail | undefined>;
  deleteGuardrail(organizationId: string, id: string): Promise<boolean>;
}

export class AlreadyExistsError extends Error {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'AlreadyExistsError';
  }
}
