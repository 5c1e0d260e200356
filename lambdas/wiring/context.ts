import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock, Random } from '../clock';
import type { Telemetry } from '../observability/telemetry';
import type { TableId } from '../aws/table-schemas';
import type { Settings } from '../settings';

/**
 * What every function is wired from, by its Lambda entry and by the local runtime alike: the
 * modules of this folder build the same stores, caches and verifiers from it for both, so the two
 * cannot drift.
 */
export interface FunctionContext<T extends TableId> {
  /** The function's own client: its own credentials, traced in Lambda. */
  readonly documentClient: DynamoDBDocumentClient;
  /** The physical names of exactly the tables the function declares. */
  readonly tables: Readonly<Record<T, string>>;
  readonly clock: Clock;
  readonly telemetry: Telemetry;
  /**
   * Locally, the runtime's start: no writer from before it still runs (one process holds the data
   * folder), so a claim taken earlier whose item never came is reclaimed at once. Absent in AWS.
   */
  readonly writersSince?: Date;
  /** Picks the copy of a hot item a request reads and the counter shard it writes (docs/architecture.md, "Data layout"). @default Math.random */
  readonly random?: Random;
  /** How many partitions an hour's open completions spread over: `OPEN_SHARDS` in AWS; locally a few, for one process's rate. */
  readonly openShards?: number;
  /** How many spend shards a key's and a workspace's writes spread over: `SPEND_SHARDS` in AWS; locally a few. */
  readonly spendShards?: Readonly<Record<'key' | 'workspace', number>>;
  /** How many branches each spending ledger has (lambdas/aws/dynamo-ledger-branches.ts): `LEDGER_BRANCHES` in AWS; locally none, one process being one container. */
  readonly ledgerBranches?: number;
}

/** The API base URL, the `iss` and `aud` of issued access tokens, and their longest lifetime (docs/reference.md#access-tokens, docs/reference.md#limits). */
export type AccessTokenSettings = Pick<Settings, 'apiBaseUrl' | 'accessTokenMaxLifetimeSeconds'>;

/** The regional hostnames: a catalog on one lists that region's models, and a DPoP proof may name a URL on any of them. */
export type ServedHostSettings = Pick<Settings, 'regionalHostnames'>;

/** The origins whose pages may read a function's answers (lambdas/http/cors.ts). */
export type ApiSettings = Pick<Settings, 'corsAllowedOrigins'>;

/** How stale the in-memory catalog and its usage figures may get, and the regional hostnames it filters by. */
export interface CatalogSettings extends Pick<Settings, 'catalogCacheSeconds' | 'catalogReloadSpreadSeconds' | 'regionalHostnames'> {
  /** `USAGE_FIGURES_SECONDS` in a deployed function. */
  readonly usageFiguresSeconds: number;
}

/** Exchanges (and policy tester calls) one source address may make per window (docs/reference.md#limits). */
export type ExchangeRateSettings = Pick<Settings, 'exchangeRateLimit' | 'exchangeRateWindowSeconds'>;
