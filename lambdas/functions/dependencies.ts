import { AccountsService } from '../accounts/accounts-service';
import type { AccountStore } from '../accounts/account-store';
import { systemClock, type Clock } from '../clock';
import { loadConfig, type ServiceConfig } from '../config';
import { DynamoAccountStore } from '../store/dynamo-account-store';
import { createDocumentClient } from '../store/dynamo-client';
import { DynamoSigningKeyStore } from '../store/dynamo-signing-key-store';
import type { TableId } from '../store/table-schemas';
import type { SigningKeyStore } from '../signing/signer';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
