import { CatalogCache } from '../catalog/catalog-cache';
import { createCatalogApi } from '../catalog/catalog-api';
import { apiHandler } from '../http/middleware';
import { DynamoCatalogStore } from '../store/dynamo-catalog-store';
import { buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys', 'models']);
// Module scope: the catalog stays in memory for the life of the container.
const catalog = new CatalogCache(
  new DynamoCatalogStore(deps.documentClient, deps.config.tables.models!),
  deps.clock,
  deps.config.catalogCacheSeconds,
);

export const handler = apiHandler(
  createCatalogApi({ accounts: deps.accounts, clock: deps.clock, catalog, regionalHostnames: deps.config.regionalHostnames }),
);
