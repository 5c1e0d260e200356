import { apiHandler } from '../http/middleware';
import { createManagementApi } from '../management/management-api';
import { buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models']);

export const handler = apiHandler(
  createManagementApi({ accounts: deps.accounts, clock: deps.clock, service: deps.accountsService }),
);
