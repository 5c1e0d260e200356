import type { FunctionRequirements } from '../config';
import { createCatalogApi, type CatalogApiDeps } from '../catalog/catalog-api';
import { apiHandler } from '../http/middleware';
import type { Telemetry } from '../observability/telemetry';

/** SPEC 4.1: API keys, the catalog and the usage figures its sorts add, all read-only. */
export const CATALOG_FUNCTION = { tables: ['keys', 'models', 'usage'] } as const satisfies FunctionRequirements;

export interface CatalogHandlerDeps extends CatalogApiDeps {
  telemetry: Telemetry;
}

/** `GET /models/user` and `GET /models/{author}/{slug}/endpoints`. */
export function createCatalogHandler(deps: CatalogHandlerDeps) {
  return apiHandler(createCatalogApi(deps), deps.telemetry);
}
