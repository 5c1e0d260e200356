import type { IdGenerator } from '../../clock';
import type { IssuerKeySource } from '../../federation/issuer-keys';
import type { TokenExchangeHandlerDeps } from './handler';
import { ActiveSigner } from '../../signing/active-signer';
import type { Signer, SigningKeyRecord } from '../../signing/signer';
import { DynamoExchangeEventStore } from '../../aws/dynamo-exchange-event-store';
import { DynamoJtiStore } from '../../aws/dynamo-jti-store';
import { DynamoRateCounterStore } from '../../aws/dynamo-rate-counter-store';
import { DynamoSigningKeyStore } from '../../aws/dynamo-signing-key-store';
import type { AccessTokenSettings, ApiSettings, ExchangeRateSettings, FunctionContext, ServedHostSettings } from '../../wiring/context';
import { exchangeEvaluator, exchangeRateLimit } from '../../wiring/exchange';
import { dpopChecker } from '../../wiring/credentials';
import { RememberingRateCounters } from '../../oauth/exchange-rate-limit';

/** What the token exchange's dependencies are built from beside its context: its settings, the issuers' keys, the signers and the id generator. */
export interface TokenExchangeSettings extends AccessTokenSettings, ServedHostSettings, ExchangeRateSettings, ApiSettings {
  /** Where the issuers' keys come from: HTTPS with the address rules, cached. */
  readonly issuerKeys: IssuerKeySource;
  /** The signer for a signing-key record: KMS in AWS, a key file locally. */
  readonly signerForRecord: (record: SigningKeyRecord) => Promise<Signer>;
  readonly newId: IdGenerator;
}

/** The token exchange function's dependencies (`POST /oauth/token`, docs/reference.md#the-token-exchange). */
export function tokenExchangeDependencies(
  context: FunctionContext<'keys' | 'policies' | 'rateCounters'>,
  settings: TokenExchangeSettings,
): TokenExchangeHandlerDeps {
  const { documentClient, tables, clock } = context;
  // Re-reads the active signing-key record, so a rotated key signs without a restart or redeploy.
  const signers = new ActiveSigner(new DynamoSigningKeyStore(documentClient, tables.keys), settings.signerForRecord, clock);
  return {
    config: { issuer: settings.apiBaseUrl, maxLifetimeSeconds: settings.accessTokenMaxLifetimeSeconds, rateLimit: exchangeRateLimit(settings) },
    clock,
    newId: settings.newId,
    rateCounters: new RememberingRateCounters(new DynamoRateCounterStore(documentClient, tables.rateCounters)),
    evaluate: exchangeEvaluator(context, settings.issuerKeys),
    // Exchange events and seen `jti` values live in the policies table under their own key prefixes.
    jtis: new DynamoJtiStore(documentClient, tables.policies),
    proofs: dpopChecker(context, settings),
    events: new DynamoExchangeEventStore(documentClient, tables.policies),
    signer: () => signers.signer(),
    corsAllowedOrigins: settings.corsAllowedOrigins,
    telemetry: context.telemetry,
  };
}
