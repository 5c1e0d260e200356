import type { BedrockRuntimeClientConfig } from '@aws-sdk/client-bedrock-runtime';
import type { Clock, Random } from '../lambdas/clock';
import { settingsFromEnvironment } from '../lambdas/config';
import { DEFAULT_SETTINGS, DEVELOPMENT_PROVIDER, SETTINGS, settingsEnvironment, type EnvironmentSettingName, type SettingName, type Settings } from '../lambdas/settings';
import type { AwsCallObserver, CallRecording } from './aws-calls';
import type { EmbeddedDynamoDb } from './embedded-dynamodb';
import type { ExchangeObserver } from './http-server';

/**
 * The settings the local runtime's functions read, under their names of the table
 * (lambdas/settings.ts); `stageName` is the runtime's own (`local`) and `apiBaseUrl` the address
 * it binds.
 */
export type LocalSettingName = Exclude<EnvironmentSettingName, 'stageName' | 'apiBaseUrl'>;

/**
 * What the local runtime sets over the table's defaults: an EU hostname that
 * resolves to this machine, a catalog that refreshes within seconds (a demo sees its own traffic
 * in the sorts), and the development provider for every model.
 */
const LOCAL_DEFAULTS: Partial<Settings> = {
  regionalHostnames: { eu: 'eu.localhost' },
  catalogCacheSeconds: 2,
  catalogReloadSpreadSeconds: 0,
  inferenceUpstreams: { '*': DEVELOPMENT_PROVIDER },
};

/**
 * Every setting defaults as in the table (lambdas/settings.ts), except `regionalHostnames`
 * (`{ eu: 'eu.localhost' }`), `catalogCacheSeconds` (2), `catalogReloadSpreadSeconds` (0: one
 * process reloads at once) and `inferenceUpstreams` (the built-in
 * development provider for every model). Settings are checked as a function checks its
 * environment in AWS: a value out of range fails the start, naming its variable.
 */
export interface LocalRuntimeOptions extends Partial<Pick<Settings, LocalSettingName>> {
  /** @default 8787 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Where keys, data and demo.json live. @default '.local' */
  dataDir?: string;
  /** Keep DynamoDB data on disk under dataDir. @default true */
  persist?: boolean;
  /** Where log lines go. @default standard error */
  log?: (line: string) => void;
  /** @default the system clock */
  clock?: Clock;
  /** Which copy of a hot item each request reads, which shard of a counter it writes. @default Math.random */
  random?: Random;
  /**
   * Accept loopback issuer and JWKS hosts, so a development identity provider on this machine
   * can be configured (`npm start` reads `MODELGATE_ALLOW_LOOPBACK_ISSUERS`, local/environment.ts).
   * @default true
   */
  allowLoopbackIssuers?: boolean;
  /** How long `stop()` (Ctrl-C) lets the requests under way finish before cutting them. @default 10,000 */
  drainMs?: number;
  /** Sees every routed request and its whole answer once sent (the test suites check them against the OpenAPI document). */
  observe?: ExchangeObserver;
  /**
   * Puts a server between the functions and the embedded DynamoDB (the test suites' IAM gate,
   * test/support/iam/): given the embedded server's endpoint, returns the one the functions'
   * clients call, which `dynamoEndpoint` reports. Start-up administration calls the embedded
   * server directly. @default none: the functions call the embedded server
   */
  interposeDynamoDb?: (endpoint: string) => Promise<InterposedDynamoDb>;
  /**
   * Starts the DynamoDB the runtime keeps its data in, empty, in place of the embedded dynalite:
   * the test suites run against AWS's DynamoDB Local with it (test/support/dynamodb-local.ts).
   * Only for a runtime that keeps no data (`persist: false`). @default the embedded dynalite
   */
  startDynamoDb?: () => Promise<EmbeddedDynamoDb>;
  /**
   * Told of every AWS call the functions make, with the request it served, and of every
   * signature (KMS `Sign` in AWS): what a request costs in round trips (local/aws-calls.ts).
   */
  observeAwsCalls?: AwsCallObserver;
  /**
   * Added to the inference function's Bedrock clients (lambdas/aws/bedrock-converse.ts): a request
   * handler that trusts a local stand-in's CA, credentials. @default the AWS SDK's defaults
   */
  bedrock?: Partial<BedrockRuntimeClientConfig>;
  /** How often the usage rollup runs on its own; 0: only when the runtime's `rollUpUsage()` is called. @default an hour */
  usageRollupEveryMs?: number;
  /**
   * What {@link observeAwsCalls} is told of each DynamoDB call: its timing, or also the items
   * it read and wrote with their sizes (the scale model, local/scale-model.ts). @default 'timing'
   */
  awsCallRecording?: CallRecording;
}

/** A server in front of the embedded DynamoDB, see {@link LocalRuntimeOptions.interposeDynamoDb}. */
export interface InterposedDynamoDb {
  endpoint: string;
  stop(): Promise<void>;
}

const LOCAL_SETTING_NAMES = (Object.keys(SETTINGS) as SettingName[]).filter(
  (name): name is LocalSettingName => 'env' in SETTINGS[name] && name !== 'stageName' && name !== 'apiBaseUrl',
);

/**
 * The settings of the runtime's functions: the options over the runtime's defaults over the
 * table's, written to an environment record and read back by the loader the Lambda entries use
 * (lambdas/config.ts), so they are checked against the same ranges and come out in the same form.
 */
export function localSettings(options: LocalRuntimeOptions): Pick<Settings, LocalSettingName> {
  const given = Object.fromEntries(LOCAL_SETTING_NAMES.filter((name) => options[name] !== undefined).map((name) => [name, options[name]]));
  const environment = settingsEnvironment({ ...DEFAULT_SETTINGS, ...LOCAL_DEFAULTS, ...given }, LOCAL_SETTING_NAMES);
  return settingsFromEnvironment(environment, LOCAL_SETTING_NAMES);
}
