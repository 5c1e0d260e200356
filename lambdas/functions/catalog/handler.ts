/**
 * Handler factory of the catalog function, the model for every handler module in this folder
 * (docs/architecture.md, "Functions, routes and grants"): `<NAME>_FUNCTION`, the tables and
 * settings the function reads, which its entry passes to `loadConfig` and the stack binds;
 * `<Name>HandlerDeps`, everything the handler uses, already built (no environment, no AWS
 * client construction here); `create<Name>Handler(deps)`, its routes in their protocol's wrapper.
 */
import type { FunctionRequirements } from '../../config';
import { createCatalogApi, type CatalogApiDeps } from '../../catalog/catalog-api';
import { apiHandler } from '../../http/middleware';
import { routesOf } from '../../routes';
import type { Telemetry } from '../../observability/telemetry';

/** docs/reference.md#the-catalog: API keys, the catalog and the usage figures its sorts add, all read-only. */
export const CATALOG_FUNCTION = {
  tables: ['keys', 'models', 'usage', 'rateCounters'],
  // Access tokens are verified against the API base URL (docs/reference.md#access-tokens); the listing follows the regional hostname called (docs/reference.md#the-catalog);
  // the public catalog may answer without a credential; every answer names the origins its page may read it from.
  settings: ['apiBaseUrl', 'accessTokenMaxLifetimeSeconds', 'regionalHostnames', 'catalogCacheSeconds', 'catalogReloadSpreadSeconds', 'publicCatalog', 'corsAllowedOrigins'],
} as const satisfies FunctionRequirements;

/** What the catalog function's handler uses: its operations' dependencies, and what the API wrapper adds to every answer. */
export interface CatalogHandlerDeps extends CatalogApiDeps {
  /** Named by the challenge of every 401 (RFC 9728 §5.1). */
  resourceMetadataUrl: string;
  corsAllowedOrigins: readonly string[];
  telemetry: Telemetry;
}

/** `GET /models/user`, `GET /models/{author}/{slug}/endpoints` and the public catalog (`GET /models`, …). */
export function createCatalogHandler(deps: CatalogHandlerDeps) {
  const { resourceMetadataUrl, corsAllowedOrigins } = deps;
  return apiHandler(createCatalogApi(routesOf('catalog'), deps), deps.telemetry, { resourceMetadataUrl, corsAllowedOrigins });
}
