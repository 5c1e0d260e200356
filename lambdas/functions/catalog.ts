import { createCatalogApi } from '../catalog/catalog-api';
import { apiHandler } from '../http/middleware';
import { buildCatalogCache, buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models']);
const catalog = buildCatalogCache(deps);

export const handler = apiHandler(
  createCatalogApi({ accounts: deps.accounts, clock: deps.clock, catalog, regionalHostnames: deps.config.regionalHostnames }),
);
