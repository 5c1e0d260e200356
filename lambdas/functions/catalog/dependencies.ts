import type { CatalogHandlerDeps } from './handler';
import { DynamoAccountStore } from '../../aws/dynamo-account-store';
import type { AccessTokenSettings, CatalogSettings, FunctionContext } from '../../wiring/context';
import { accessTokenVerifier, catalogCache, dpopChecker } from '../../wiring/shared';
import { protectedResourceMetadataUrl } from '../../oauth/discovery';

/** The catalog function's dependencies (`GET /models/user`, a model's endpoints). */
export function catalogDependencies(
  context: FunctionContext<'keys' | 'models' | 'usage' | 'rateCounters'>,
  settings: AccessTokenSettings & CatalogSettings,
): CatalogHandlerDeps {
  return {
    accounts: new DynamoAccountStore(context.documentClient, context.tables.keys, context.random),
    accessTokens: accessTokenVerifier(context, settings),
    proofs: dpopChecker(context, settings),
    catalog: catalogCache(context, settings),
    clock: context.clock,
    regionalHostnames: settings.regionalHostnames,
    resourceMetadataUrl: protectedResourceMetadataUrl(settings.apiBaseUrl),
    telemetry: context.telemetry,
  };
}
