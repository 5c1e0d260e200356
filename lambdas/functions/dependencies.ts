import { AccountsService } from '../accounts/accounts-service';
import { CatalogCache } from '../catalog/catalog-cache';
import { DynamoCatalogStore } from '../store/dynamo-catalog-store';
import type { AccountStore } from '../accounts/account-store';
import { systemClock, type Clock } from '../clock';
import { loadConfig, type ServiceConfig } from '../config';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import type { TableId } from '../store/table-schemas';
import type { SigningKeyStore } from '../signing/signer';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DEVELOPMENT_PROVIDER } from '../config';
import { randomId } from '../clock';
import { developmentProvider } from '../inference/development-provider';
import { fileCredentials } from '../inference/provider-credentials';
import { secretsManagerCredentials } from '../inference/secrets-manager-credentials';
import { NO_CREDENTIALS, type UpstreamOptions } from '../inference/upstream';

/**
 * The composition root shared by the function entry points: configuration and AWS clients
 * are built once per cold start from the environment and handed to the domain code.
 */
export interface ServiceDependencies {
  config: ServiceConfig;
  clock: Clock;
  documentClient: DynamoDBDocumentClient;
  accounts: AccountStore;
  accountsService: AccountsService;
  signingKeys: SigningKeyStore;
}

export function buildDependencies(env: NodeJS.ProcessEnv, tables: readonly TableId[]): ServiceDependencies {
  const config = loadConfig(env, tables);
  const documentClient = createDocumentClient();
  const keysTable = config.tables.keys;
  if (!keysTable) throw new Error('every function reads the keys table');
  const accounts = new DynamoAccountStore(documentClient, keysTable);
  return {
    config,
    clock: systemClock,
    documentClient,
    accounts,
    accountsService: new AccountsService({ store: accounts }),
    signingKeys: new DynamoSigningKeyStore(documentClient, keysTable),
  };
}

/**
 * The container's in-memory catalog. Built at module scope by the functions that list or
 * route models, so it lives as long as the container.
 */
export function buildCatalogCache(deps: ServiceDependencies): CatalogCache {
  const table = deps.config.tables.models;
  if (!table) throw new Error('the catalog needs the models table');
  return new CatalogCache(new DynamoCatalogStore(deps.documentClient, table), deps.clock, deps.config.catalogCacheSeconds);
}

/**
 * Where completions go: the configured upstreams, with provider credentials from Secrets
 * Manager in AWS or the credentials file locally.
 */
export function buildUpstreamOptions(deps: ServiceDependencies): UpstreamOptions {
  const { inference } = deps.config;
  const credentials = inference.providerCredentialsSecretArn
    ? secretsManagerCredentials(new SecretsManagerClient({}), inference.providerCredentialsSecretArn, deps.clock)
    : inference.providerCredentialsFile
      ? fileCredentials(inference.providerCredentialsFile, deps.clock)
      : NO_CREDENTIALS;
  return {
    upstreams: inference.upstreams,
    transport: (url, init) => fetch(url, init),
    development: developmentProvider(deps.clock, randomId),
    developmentName: DEVELOPMENT_PROVIDER,
    credentials,
    timeoutMs: inference.upstreamTimeoutSeconds * 1000,
  };
}
