import { CatalogCache, type UsageFigures } from '../catalog/catalog-cache';
import { DynamoCatalogStore } from '../aws/dynamo-catalog-store';
import { DynamoUsageFold } from '../aws/dynamo-usage-fold';
import { catalogLoadRecorder } from '../observability/telemetry';
import type { CatalogSettings, FunctionContext } from './context';

/**
 * The function's in-memory catalog: the models table, checked for a new version every
 * `catalogCacheSeconds`. The catalog function also reads the popularity figures of the last
 * week for the popularity sorts (`popularity`), folded off the request path
 * (lambdas/aws/dynamo-usage-fold.ts); the inference function reads none.
 */
export function catalogCache(context: FunctionContext<'models' | 'usage'>, settings: CatalogSettings, { popularity }: { popularity: boolean }): CatalogCache {
  const figures: UsageFigures | undefined = popularity
    ? { recent: () => new DynamoUsageFold(context.documentClient, context.tables.usage, context.random).popularity(), maxAgeSeconds: settings.usageFiguresSeconds }
    : undefined;
  return new CatalogCache(
    new DynamoCatalogStore(context.documentClient, context.tables.models),
    context.clock,
    settings.catalogCacheSeconds,
    catalogLoadRecorder(context.telemetry),
    figures,
    { reloadSpreadSeconds: settings.catalogReloadSpreadSeconds, onFailure: (what, error) => context.telemetry.logger.warn('catalog background read failed; serving the catalog held', { read: what, error: error.name, detail: error.message }) },
  );
}
