import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AccountStore, RecordIds } from '../../lambdas/accounts/account-store';
import { AccountsService, type GuardrailInput } from '../../lambdas/accounts/accounts-service';
import { DEFAULT_PRIVACY, type ApiKeyRecord, type Organization } from '../../lambdas/accounts/types';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { DynamoCatalogStore } from '../../lambdas/aws/dynamo-catalog-store';
import { createDocumentClient } from '../../lambdas/aws/dynamo-client';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { localDynamoDbClient } from '../../local/embedded-dynamodb';
import type { LocalRuntime } from '../../local/runtime';

export interface RuntimeStores {
  documentClient: DynamoDBDocumentClient;
  /** What the management API and the operator CLI use: org settings have no HTTP endpoint. */
  accounts: AccountsService;
  catalog: DynamoCatalogStore;
  /** Puts the organization's provider preferences and privacy back to their defaults. */
  resetOrganization(organizationId: string): Promise<void>;
  destroy(): void;
}

/**
 * The stores of a running local runtime, over its embedded DynamoDB, for tests that change
 * what the service reads per request (organization settings, the catalog) behind its back.
 */
export function connectToRuntime(runtime: Pick<LocalRuntime, 'dynamoEndpoint'>): RuntimeStores {
  const client = localDynamoDbClient(runtime.dynamoEndpoint);
  const documentClient = createDocumentClient(client);
  const accounts = new AccountsService({ store: new DynamoAccountStore(documentClient, TABLE_SCHEMAS.keys.localName) });
  return {
    documentClient,
    accounts,
    catalog: new DynamoCatalogStore(documentClient, TABLE_SCHEMAS.models.localName),
    async resetOrganization(organizationId) {
      await accounts.setProviderPreferences(organizationId, { allowedProviders: null, ignoredProviders: [] });
      await accounts.setPrivacy(organizationId, { ...DEFAULT_PRIVACY });
    },
    destroy: () => client.destroy(),
  };
}

/**
 * The one read authentication makes (`getRecords`), in memory: an organization and its keys.
 * The rest of the store is absent: a handler that reads more fails loudly.
 */
export function authenticationRecords(organization: Organization, ...keys: ApiKeyRecord[]): AccountStore {
  return {
    getRecords: async ({ keyHash, organizationId }: RecordIds) => ({
      key: keys.find((key) => key.hash === keyHash),
      organization: organizationId === organization.id ? organization : undefined,
    }),
  } as Partial<AccountStore> as AccountStore;
}

/** A guardrail that restricts nothing, with `fields` over it: what a guardrail test starts from. */
export function guardrailInput(fields: Partial<GuardrailInput> = {}): GuardrailInput {
  return { name: 'g', description: null, workspaceId: null, allowedModels: null, ignoredModels: null, allowedProviders: null, ignoredProviders: null, enforceZdr: false, ...fields };
}
