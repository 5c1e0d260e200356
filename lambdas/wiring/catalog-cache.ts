import { CatalogCache } from '../catalog/catalog-cache';
import { DynamoCatalogStore } from '../aws/dynamo-catalog-store';
import { DynamoUsageStore } from '../aws/dynamo-usage-store';
import { catalogLoadRecorder } from '../observability/telemetry';
import { USAGE_SORT_DAYS } from '../usage/usage';
import type { CatalogSettings, FunctionContext } from './context';

/**
 * The function's in-memory catalog: the models table, checked for a new version every
 * `catalogCacheSeconds`, with the gateway's own usage over the last week for the popularity sorts.
 */
export function catalogCache(context: FunctionContext<'models' | 'usage'>, settings: CatalogSettings): CatalogCache {
  const usage = new DynamoUsageStore(context.documentClient, context.tables.usage);
  return new CatalogCache(
    new DynamoCatalogStore(context.documentClient, context.tables.models),
    context.clock,
    settings.catalogCacheSeconds,
    catalogLoadRecorder(context.telemetry),
    { recent: (now) => usage.modelUsage(now, USAGE_SORT_DAYS), maxAgeSeconds: settings.usageFiguresSeconds },
  );
}
