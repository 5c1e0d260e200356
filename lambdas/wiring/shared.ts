import { CatalogCache } from '../catalog/catalog-cache';
import { SigningKeyAccessTokenVerifier } from '../credentials/access-token-verifier';
import { DpopChecker } from '../credentials/dpop-binding';
import { DynamoProofReplayStore } from '../aws/dynamo-proof-replay-store';
import { catalogLoadRecorder } from '../observability/telemetry';
import { DynamoCatalogStore } from '../aws/dynamo-catalog-store';
import { DynamoSigningKeyStore } from '../aws/dynamo-signing-key-store';
import { DynamoUsageStore } from '../aws/dynamo-usage-store';
import { USAGE_SORT_DAYS } from '../usage/usage';
import type { AccessTokenSettings, CatalogSettings, FunctionContext, ServedHostSettings } from './context';

/** Access tokens from the exchange, verified against the signing-key records (SPEC 5 rule 5). */
export function accessTokenVerifier(context: FunctionContext<'keys'>, settings: AccessTokenSettings): SigningKeyAccessTokenVerifier {
  return new SigningKeyAccessTokenVerifier({
    signingKeys: new DynamoSigningKeyStore(context.documentClient, context.tables.keys),
    clock: context.clock,
    issuer: settings.apiBaseUrl,
    maxTokenLifetimeSeconds: settings.accessTokenMaxLifetimeSeconds,
  });
}

/**
 * DPoP proofs (RFC 9449) against this deployment's public URLs, on every hostname it serves,
 * remembered in the rate-counters table (`DPOP#` items) so a proof is good once across every
 * container of every function.
 */
export function dpopChecker(context: FunctionContext<'rateCounters'>, settings: AccessTokenSettings & ServedHostSettings): DpopChecker {
  return new DpopChecker({
    apiBaseUrl: settings.apiBaseUrl,
    servedHostnames: Object.values(settings.regionalHostnames),
    replays: new DynamoProofReplayStore(context.documentClient, context.tables.rateCounters),
    clock: context.clock,
  });
}

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
