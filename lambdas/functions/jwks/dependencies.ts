import type { JwksHandlerDeps } from './handler';
import { DynamoSigningKeyStore } from '../../aws/dynamo-signing-key-store';
import { cachedSigningKeys } from '../../signing/cached-signing-keys';
import type { AccessTokenSettings, ApiSettings, FunctionContext } from '../../wiring/context';

/** The JWKS function's dependencies: the signing-key records and the issuer, nothing else. */
export function jwksDependencies(context: FunctionContext<'keys'>, settings: AccessTokenSettings & ApiSettings): JwksHandlerDeps {
  return {
    // Read once a container every few seconds, whatever the rate of key set requests.
    signingKeys: cachedSigningKeys(new DynamoSigningKeyStore(context.documentClient, context.tables.keys), context.clock),
    clock: context.clock,
    // docs/reference.md#limits: a retired key is published until the longest token it may have signed expires.
    accessTokenMaxLifetimeSeconds: settings.accessTokenMaxLifetimeSeconds,
    // The discovery documents name the issuer the token exchange puts in `iss`.
    issuer: settings.apiBaseUrl,
    corsAllowedOrigins: settings.corsAllowedOrigins,
    telemetry: context.telemetry,
  };
}
