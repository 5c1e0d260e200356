/**
 * Handler factory of the catalog function, and the model for every function's handler
 * module in this folder. Each one exports:
 * - `<NAME>_FUNCTION`: the tables (and settings) the function reads. Its Lambda entry passes
 *   it to `loadConfig`, so the cold start fails without one; the stack binds exactly these
 *   tables (`ServiceFunction.bindTable`), which the synth test checks.
 * - `<Name>HandlerDeps`: everything the handler uses (stores, services, clock, settings,
 *   telemetry), already built: no environment, no AWS client construction here.
 * - `create<Name>Handler(deps)`: the route adapter wrapped in its protocol's wrapper
 *   (`apiHandler` or `oauthHandler`, which add Powertools, the request log line and the
 *   error serializer).
 *
 * Adding a function: a folder in lambdas/functions/ with its handler module, its Lambda entry
 * (which reads as catalog/entry.ts does) and its dependencies; its routes in lambdas/routes.ts; a `serviceFunction(...)` with its
 * `bindTable` calls in lib/modelgate-stack.ts (alarms follow automatically); the same
 * factory called in local/runtime.ts; a line in test/support/function-requirements.ts.
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
