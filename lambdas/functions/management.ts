import { apiHandler } from '../http/middleware';
import { createManagementApi } from '../management/management-api';
import { DynamoExchangeEventStore } from '../store/dynamo-exchange-event-store';
import { buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models', 'policies']);

export const handler = apiHandler(
  createManagementApi({
    accounts: deps.accounts,
    clock: deps.clock,
    service: deps.accountsService,
    exchangeEvents: new DynamoExchangeEventStore(deps.documentClient, deps.config.tables.policies!),
  }),
);
