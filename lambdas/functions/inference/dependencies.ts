import { KeyPlacements } from '../../credentials/authenticate';
import type { IdGenerator } from '../../clock';
import type { Settings } from '../../settings';
import type { InferenceHandlerDeps } from './handler';
import type { ProviderCredentials } from '../../inference/upstream';
import { upstreamOptions, type ProviderClientSettings } from '../../wiring/upstream-options';
import { DynamoAccountStore } from '../../aws/dynamo-account-store';
import { DynamoUsageStore } from '../../aws/dynamo-usage-store';
import { DynamoGenerationStore } from '../../aws/dynamo-generation-store';
import { DynamoResponseStore } from '../../aws/dynamo-response-store';
import { DynamoLedgers } from '../../aws/dynamo-ledgers';
import { LEDGER_BRANCHES } from '../../aws/dynamo-ledger-branches';
import { SpendingGate } from '../../spending/spending-gate';
import { spendBeforeFrom } from '../../spending/spend-before';
import type { AccessTokenSettings, ApiSettings, CatalogSettings, FunctionContext } from '../../wiring/context';
import { catalogCache } from '../../wiring/catalog-cache';
import { openCompletionsOf } from '../../wiring/open-completions';
import { accessTokenVerifier, dpopChecker } from '../../wiring/credentials';
import { protectedResourceMetadataUrl } from '../../oauth/discovery';

/** What the inference function's dependencies are built from beside its context: its settings, the providers' keys and the id generator. */
export interface InferenceSettings extends AccessTokenSettings, CatalogSettings, ApiSettings, Pick<Settings, 'inferenceUpstreams' | 'upstreamTimeoutSeconds' | 'responseRetentionDays'> {
  /** The providers' API keys: Secrets Manager in AWS, a file locally; none: unauthenticated upstreams. */
  readonly credentials: ProviderCredentials | undefined;
  readonly newId: IdGenerator;
  /** The function's region and Bedrock client settings. */
  readonly providers?: ProviderClientSettings;
}

/** The inference function's dependencies (`POST /chat/completions`). */
export function inferenceDependencies(
  context: FunctionContext<'keys' | 'models' | 'usage' | 'rateCounters' | 'responses'>,
  settings: InferenceSettings,
): InferenceHandlerDeps {
  const { documentClient, tables, clock } = context;
  const accounts = new DynamoAccountStore(documentClient, tables.keys, { random: context.random });
  const usage = new DynamoUsageStore(documentClient, tables.usage, context.random);
  return {
    accounts,
    accessTokens: accessTokenVerifier(context, settings),
    placements: new KeyPlacements(),
    proofs: dpopChecker(context, settings),
    usage,
    generations: new DynamoGenerationStore(documentClient, tables.usage, clock),
    openCompletions: openCompletionsOf(context),
    responses: new DynamoResponseStore(documentClient, tables.responses, clock, settings.responseRetentionDays),
    // One per container: what it holds of each spending limit lives as long as it does.
    spending: new SpendingGate({
      ledgers: new DynamoLedgers(documentClient, tables.usage, { spendShards: context.spendShards, branches: context.ledgerBranches ?? LEDGER_BRANCHES, random: context.random }),
      spendBefore: spendBeforeFrom(accounts, usage),
      clock,
      random: context.random,
      writersSince: context.writersSince,
    }),
    catalog: catalogCache(context, settings, { popularity: false }),
    clock,
    regionalHostnames: settings.regionalHostnames,
    upstream: upstreamOptions(settings, { clock, newId: settings.newId, credentials: settings.credentials, providers: settings.providers }),
    resourceMetadataUrl: protectedResourceMetadataUrl(settings.apiBaseUrl),
    corsAllowedOrigins: settings.corsAllowedOrigins,
    telemetry: context.telemetry,
  };
}
