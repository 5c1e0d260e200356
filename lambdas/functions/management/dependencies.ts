import { KeyPlacements } from '../../credentials/authenticate';
import { AccountsService } from '../../accounts/accounts-service';
import { FederationService } from '../../federation/federation-service';
import type { IssuerKeySource } from '../../federation/issuer-keys';
import type { ManagementHandlerDeps } from './handler';
import { DynamoAccountStore } from '../../aws/dynamo-account-store';
import { DynamoExchangeEventStore } from '../../aws/dynamo-exchange-event-store';
import { DynamoFederationStore } from '../../aws/dynamo-federation-store';
import { DynamoUsageStore } from '../../aws/dynamo-usage-store';
import { DynamoLedgers } from '../../aws/dynamo-ledgers';
import { DynamoGenerationStore } from '../../aws/dynamo-generation-store';
import { spendBeforeFrom } from '../../spending/spend-before';
import { ledgerSeeds } from '../../spending/ledger-seeds';
import type { AccessTokenSettings, ApiSettings, ExchangeRateSettings, FunctionContext, ServedHostSettings } from '../../wiring/context';
import { exchangeEvaluator, exchangeRateCheck } from '../../wiring/exchange';
import { accessTokenVerifier, dpopChecker } from '../../wiring/credentials';
import { protectedResourceMetadataUrl } from '../../oauth/discovery';

/** The token endpoint's limit (ExchangeRateSettings): tester calls and exchanges share one budget per address. */
export interface ManagementSettings extends AccessTokenSettings, ServedHostSettings, ExchangeRateSettings, ApiSettings {
  /** Loopback issuer hosts: the local runtime's development identity provider, never in AWS. */
  readonly allowLoopbackIssuers: boolean;
  /** The policy tester fetches issuer keys as the exchange does. */
  readonly issuerKeys: IssuerKeySource;
}

/** The management function's dependencies: keys, workspaces, guardrails, workload identity, activity. */
export function managementDependencies(
  context: FunctionContext<'keys' | 'policies' | 'usage' | 'rateCounters'>,
  settings: ManagementSettings,
): ManagementHandlerDeps {
  const { documentClient, tables, clock } = context;
  const accounts = new DynamoAccountStore(documentClient, tables.keys, { random: context.random, writersSince: context.writersSince, ledgersTable: tables.usage });
  const proofs = dpopChecker(context, settings);
  const service = new AccountsService({ store: accounts, clock });
  const usage = new DynamoUsageStore(documentClient, tables.usage);
  return {
    accounts,
    accessTokens: accessTokenVerifier(context, settings),
    placements: new KeyPlacements(),
    proofs,
    service,
    usage,
    generations: new DynamoGenerationStore(documentClient, tables.usage, clock),
    ledgerSeeds: ledgerSeeds(service, new DynamoLedgers(documentClient, tables.usage, { spendShards: context.spendShards }), { spendBefore: spendBeforeFrom(accounts, usage), usage }, clock),
    federation: new FederationService({
      store: new DynamoFederationStore(documentClient, tables.policies, clock, undefined, context.writersSince),
      accounts,
      hosts: { allowLoopback: settings.allowLoopbackIssuers },
      clock,
    }),
    // The policy tester runs the exchange's own decision over the same stores and key source.
    policyTester: {
      evaluate: exchangeEvaluator(context, settings.issuerKeys),
      clock,
      maxLifetimeSeconds: settings.accessTokenMaxLifetimeSeconds,
      proofs,
    },
    exchangeRate: exchangeRateCheck(context, settings),
    clock,
    exchangeEvents: new DynamoExchangeEventStore(documentClient, tables.policies),
    resourceMetadataUrl: protectedResourceMetadataUrl(settings.apiBaseUrl),
    corsAllowedOrigins: settings.corsAllowedOrigins,
    telemetry: context.telemetry,
  };
}
