import { KeyPlacements } from '../../credentials/authenticate';
import type { CatalogHandlerDeps } from './handler';
import { DynamoAccountStore } from '../../aws/dynamo-account-store';
import type { AccessTokenSettings, ApiSettings, CatalogSettings, FunctionContext } from '../../wiring/context';
import { catalogCache } from '../../wiring/catalog-cache';
import { accessTokenVerifier, dpopChecker } from '../../wiring/credentials';
import { protectedResourceMetadataUrl } from '../../oauth/discovery';
import type { Settings } from '../../settings';

/** The catalog function's dependencies (`GET /models/user`, a model's endpoints). */
export function catalogDependencies(
  context: FunctionContext<'keys' | 'models' | 'usage' | 'rateCounters'>,
  settings: AccessTokenSettings & CatalogSettings & ApiSettings & Pick<Settings, 'publicCatalog'>,
): CatalogHandlerDeps {
  return {
    accounts: new DynamoAccountStore(context.documentClient, context.tables.keys, { random: context.random }),
    accessTokens: accessTokenVerifier(context, settings),
    placements: new KeyPlacements(),
    proofs: dpopChecker(context, settings),
    catalog: catalogCache(context, settings, { popularity: true }),
    clock: context.clock,
    regionalHostnames: settings.regionalHostnames,
    publicCatalog: settings.publicCatalog,
    corsAllowedOrigins: settings.corsAllowedOrigins,
    resourceMetadataUrl: protectedResourceMetadataUrl(settings.apiBaseUrl),
    telemetry: context.telemetry,
  };
}
