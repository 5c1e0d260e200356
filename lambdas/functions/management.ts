import { FederationService } from '../federation/federation-service';
import { apiHandler } from '../http/middleware';
import { createManagementApi } from '../management/management-api';
import { DynamoFederationStore } from '../store/dynamo-federation-store';
import { buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models', 'policies']);
const federation = new FederationService({
  store: new DynamoFederationStore(deps.documentClient, deps.config.tables.policies!, deps.clock),
  accounts: deps.accounts,
  hosts: { allowLoopback: deps.config.allowLoopbackIssuers },
  clock: deps.clock,
});

export const handler = apiHandler(
  createManagementApi({ accounts: deps.accounts, clock: deps.clock, service: deps.accountsService, federation }),
);
