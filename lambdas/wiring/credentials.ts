import { SigningKeyAccessTokenVerifier } from '../credentials/access-token-verifier';
import { DpopChecker } from '../credentials/dpop-binding';
import { DynamoProofReplayStore } from '../aws/dynamo-proof-replay-store';
import { DynamoSigningKeyStore } from '../aws/dynamo-signing-key-store';
import type { AccessTokenSettings, FunctionContext, ServedHostSettings } from './context';

/** Access tokens from the exchange, verified against the signing-key records (docs/reference.md#scopes-and-access rule 5). */
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
