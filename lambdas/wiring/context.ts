import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Clock, Random } from '../clock';
import type { Telemetry } from '../observability/telemetry';
import type { TableId } from '../aws/table-schemas';
import type { Settings } from '../settings';

/**
 * What every function is wired from, in AWS (the Lambda entries, lambdas/functions/) and
 * locally (local/runtime.ts) alike: its own DynamoDB client, the physical names of exactly the
 * tables it declares, the clock and its telemetry. The modules of this folder build the same
 * stores, caches and verifiers from it for both composition roots, so the two cannot drift.
 */
export interface FunctionContext<T extends TableId> {
  /** The function's own client: its own credentials, traced in Lambda. */
  readonly documentClient: DynamoDBDocumentClient;
  readonly tables: Readonly<Record<T, string>>;
  readonly clock: Clock;
  readonly telemetry: Telemetry;
  /**
   * Before this instant no writer still runs, so a claim taken earlier whose item never came is
   * reclaimed at once: the local runtime's start (one process holds its data folder, and the
   * previous one is gone). Absent in AWS, where only a claim's age tells.
   */
  readonly writersSince?: Date;
  /**
   * Which copy of a hot item a request reads and which shard of a counter it writes
   * (docs/architecture.md, "Data layout"). @default Math.random
   */
  readonly random?: Random;
}

/**
 * docs/reference.md#access-tokens, docs/reference.md#limits: the API base URL, the `iss` and `aud` of issued access tokens, and their
 * longest lifetime. Settings keep their names of the table (lambdas/settings.ts) from the CDK
 * context to here; a domain module may call a value what it is there (the tokens' `issuer`).
 */
export type AccessTokenSettings = Pick<Settings, 'apiBaseUrl' | 'accessTokenMaxLifetimeSeconds'>;

/**
 * The hostnames the deployment serves beside the API base URL's (`REGIONAL_HOSTNAMES`, region
 * name to hostname): a catalog on one lists that region's models, and a DPoP proof may name a
 * URL on any of them.
 */
export type ServedHostSettings = Pick<Settings, 'regionalHostnames'>;

/** What every function serving the API answers with: the origins whose pages may read its answers (lambdas/http/cors.ts). */
export type ApiSettings = Pick<Settings, 'corsAllowedOrigins'>;

/** How stale a function's in-memory catalog, and the usage figures its sorts read, may get; the regional hostnames it filters by. */
export interface CatalogSettings extends Pick<Settings, 'catalogCacheSeconds' | 'catalogReloadSpreadSeconds' | 'regionalHostnames'> {
  /** Deployed functions re-read the gateway's usage figures every `USAGE_FIGURES_SECONDS`. */
  readonly usageFiguresSeconds: number;
}

/** docs/reference.md#limits: exchanges (and policy tester calls) one source address may make per window. */
export type ExchangeRateSettings = Pick<Settings, 'exchangeRateLimit' | 'exchangeRateWindowSeconds'>;
