import * as path from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as route53 from 'aws-cdk-lib/aws-route53';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { PROOF_REPLAY_PREFIX, SIGNING_KEY_PARTITION, type TableId } from '../lambdas/aws/table-schemas';
import { INFERENCE_TIMEOUT_SECONDS, LEDGER_PREFIX } from '../lambdas/spending/ledgers';
import { API_BASE_PATH, ROUTES, resourcePath } from '../lambdas/routes';
import { ServiceAlarms } from './constructs/alarms';
import { Api } from './constructs/api';
import { CustomDomain } from './constructs/custom-domain';
import { Firewall } from './constructs/firewall';
import { nameInstance } from './constructs/instance';
import { grantBedrockModels } from './constructs/bedrock-access';
import { ProviderCredentials } from './constructs/provider-credentials';
import { ServiceFunction, functionEntry, type ServiceFunctionProps } from './constructs/service-function';
import { SigningKey } from './constructs/signing-key';
import { SigningKeyRegistration } from './constructs/signing-key-registration';
import { Tables } from './constructs/tables';
import { memoryOf } from './function-memory';
import { settingsEnvironment, type EnvironmentSettingName } from '../lambdas/settings';
import { SettingsError, checkDomainSources, validateSettings, type ModelgateSettings } from './settings';

/**
 * How one modelgate instance is built: every `modelgate:*` setting of the CDK context under the
 * same name (see {@link ModelgateSettings}, and the table of lambdas/settings.ts for each one's
 * default and range), checked the same way, and the custom domain's zone or certificate as
 * constructs rather than by id.
 */
export interface ModelgateProps extends Partial<Omit<ModelgateSettings, 'hostedZoneId' | 'hostedZoneName' | 'certificateArn'>> {
  /**
   * The instance's name (`modelgate:instance`): the prefix of every physical name it sets (KMS
   * alias, signing tag, log groups, alarms, web ACL metric, API name), so instances in one
   * account and region never collide. A letter, then up to 63 letters, digits or hyphens.
   * @default the stack's name
   */
  readonly instance?: string;
  /**
   * The API's own hostname (`modelgate:domainName`), e.g. `api.example.com`: served with every
   * regional hostname at their roots, and, unless `apiBaseUrl` is set, the issuer of access
   * tokens becomes `https://<domainName>/api/v1`. Needs `hostedZone` or `certificate`.
   * @default none: the stage's execute-api URL only
   */
  readonly domainName?: string;
  /**
   * The Route 53 zone holding the domain and every regional hostname: a DNS-validated
   * certificate for all of them, and A and AAAA alias records, are made in it.
   * @default no zone: `certificate` must be given, and the DNS records are yours
   */
  readonly hostedZone?: route53.IHostedZone;
  /**
   * An ACM certificate in this region covering the domain and every regional hostname.
   * @default a certificate validated in `hostedZone`
   */
  readonly certificate?: acm.ICertificate;
  /**
   * Whether this instance points API Gateway's account-level CloudWatch role setting (one per
   * account and region, shared by every API there; the stage's access logs need it) at a
   * role of its own, which is kept, with the setting, when the instance is deleted. A second
   * instance in the same stack waits for the first one's instead of making another. `false`
   * leaves the setting to the account's owner: it must be in place before the deploy.
   * @default true
   */
  readonly cloudWatchRole?: boolean;
}

/** The settings of the functions that filter the catalog per caller and region (docs/reference.md#the-catalog). */
const CATALOG_SETTINGS: readonly EnvironmentSettingName[] = ['regionalHostnames', 'catalogCacheSeconds', 'catalogReloadSpreadSeconds'];
/** The token endpoint's per-address budget, which the policy tester shares (docs/reference.md#limits). */
const EXCHANGE_RATE_SETTINGS: readonly EnvironmentSettingName[] = ['exchangeRateLimit', 'exchangeRateWindowSeconds'];
/** A DPoP proof may name a URL on any hostname the deployment serves (RFC 9449 §4.3 `htu`); the catalog settings carry it too. */
const PROOF_SETTINGS: readonly EnvironmentSettingName[] = ['regionalHostnames'];

/** A DPoP proof's replay record is one conditional put (lambdas/aws/dynamo-proof-replay-store.ts). */
const PROOF_REPLAY_WRITES = ['dynamodb:PutItem'];

/**
 * The modelgate service: WAF ─► REST API ─► one function per concern ─► DynamoDB, with a KMS
 * key that signs access tokens, and optionally a custom domain. This construct only wires the
 * constructs of `lib/constructs/` together and states, per function, which tables and key
 * operations it may use. `ModelgateStack` is one of these in a stack of its own; a CDK app of
 * one's own can hold one (or several, each with its own `instance`) beside its resources.
 *
 * @example
 * const gateway = new Modelgate(stack, 'Gateway', { instance: 'Embedded', exchangeRateLimit: 30 });
 * new CfnOutput(stack, 'GatewayUrl', { value: gateway.apiUrl });
 */
export class Modelgate extends Construct {
  /** The instance name every physical name starts with. */
  readonly instance: string;
  /** The settings, defaults applied and checked. */
  readonly settings: ModelgateSettings;
  /**
   * The API's base URL as clients call it and as access tokens name it (`iss`, `aud`):
   * `apiBaseUrl`, else `https://<domainName>/api/v1`, else the stage's execute-api URL.
   */
  readonly apiUrl: string;
  /** The Workload identity settings page, on the same origin as {@link apiUrl}. */
  readonly settingsPageUrl: string;
  readonly restApi: apigateway.RestApi;
  /** The regional web ACL on the API's stage, in front of every hostname. */
  readonly webAcl: wafv2.CfnWebACL;
  /** The tables by schema id (`keys`, `models`, `policies`, `usage`, `rateCounters`). */
  readonly tables: Readonly<Record<TableId, dynamodb.ITable>>;
  /** The KMS key that signs access tokens. */
  readonly signingKey: kms.IKey;
  /** `alias/<instance>/access-token-signing`. */
  readonly signingKeyAlias: kms.IAlias;
  /** The secret holding the inference providers' API keys (`{"<provider or *>": "<key>"}`). */
  readonly providerCredentials: secretsmanager.ISecret;
  /** The custom domain, when `domainName` is set. */
  readonly customDomain?: CustomDomain;

  constructor(scope: Construct, id: string, props: ModelgateProps = {}) {
    super(scope, id);
    const settings = (this.settings = validateSettings({ ...props, instance: props.instance ?? Stack.of(this).stackName }));
    this.instance = settings.instance;
    checkUniqueInstance(this);
    nameInstance(this, this.instance);
    checkDomainSources(settings.domainName, { hostedZone: props.hostedZone !== undefined, certificate: props.certificate !== undefined });

    const tables = new Tables(this, 'Tables');
    this.tables = Object.fromEntries(tables.all.map(({ schema, table }) => [schema.id, table])) as Record<TableId, dynamodb.ITable>;
    const signingKey = new SigningKey(this, 'SigningKey');
    const functions = serviceFunctions(this, tables, signingKey, settings);
    const registration = new SigningKeyRegistration(this, 'SigningKeyRegistration', { signingKey, registrar: functions.registrar });
    const { catalog, tokenExchange, jwks, management, inference, settingsPage } = functions;
    const api = new Api(this, 'Api', {
      stageName: settings.stageName,
      corsAllowedOrigins: settings.corsAllowedOrigins,
      functions: { catalog, tokenExchange, jwks, management, inference, settingsPage },
      ...accountLogging(this, props.cloudWatchRole ?? true),
    });
    this.restApi = api.restApi;
    this.customDomain = settings.domainName === undefined ? undefined : new CustomDomain(this, 'Domain', {
      domainName: settings.domainName,
      alsoServes: Object.values(settings.regionalHostnames),
      restApi: api.restApi,
      hostedZone: props.hostedZone,
      certificate: props.certificate,
    });
    const origin = this.customDomain ? `https://${settings.domainName}` : undefined;
    this.apiUrl = settings.apiBaseUrl || (origin ? `${origin}${API_BASE_PATH}` : api.restApi.urlForPath(API_BASE_PATH));
    this.settingsPageUrl = origin ? `${origin}${settingsPagePath()}` : api.restApi.urlForPath(settingsPagePath());
    nameTheIssuer(functions, settings, settings.apiBaseUrl || (origin ? `${origin}${API_BASE_PATH}` : stageUrl(api, settings.stageName)));
    nameTheAllowedOrigins(functions, settings);

    const firewall = new Firewall(this, 'Firewall', {
      stage: api.deploymentStage,
      stageName: settings.stageName,
      tokenEndpointPath: tokenEndpointPath(),
      tokenRateLimit: settings.wafTokenRateLimit,
      generalRateLimit: settings.wafGeneralRateLimit,
      corsAllowedOrigins: settings.corsAllowedOrigins,
    });
    this.webAcl = firewall.webAcl;
    new ServiceAlarms(this, 'Alarms', {
      stage: api.deploymentStage,
      // Every function of the instance, so a new one is watched without another line here.
      functions: Object.fromEntries(
        this.node.children.filter((child): child is ServiceFunction => child instanceof ServiceFunction).map((fn) => [fn.node.id, fn]),
      ),
      webAclMetricName: firewall.metricName,
      reservedConcurrency: settings.inferenceReservedConcurrency === undefined ? {} : { Inference: settings.inferenceReservedConcurrency },
      customResourceFunctions: [registration.frameworkFunction],
      topic: settings.alarmTopicArn ? sns.Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn) : undefined,
    });
    this.signingKey = signingKey.key;
    this.signingKeyAlias = signingKey.alias;
    this.providerCredentials = functions.providerCredentials.secret;
  }
}

/** Two instances of one name in one account and region would collide on every physical name. */
function checkUniqueInstance(gateway: Modelgate): void {
  const stack = Stack.of(gateway);
  const twin = gateway.node.root.node
    .findAll()
    .find((other) => other instanceof Modelgate && other !== gateway && other.instance === gateway.instance && sameEnvironment(Stack.of(other), stack));
  if (twin) {
    throw new SettingsError(
      `Two modelgate instances are named ${gateway.instance} (${twin.node.path} and ${gateway.node.path}); their physical names would collide: give each its own instance name`,
    );
  }
}
const sameEnvironment = (a: Stack, b: Stack) => a.account === b.account && a.region === b.region;

/**
 * API Gateway's account-level CloudWatch role: made by the first instance of a stack that may
 * make one; a later instance of the same stack waits for that one instead of making a second.
 */
function accountLogging(gateway: Modelgate, wanted: boolean): { cloudWatchRole: boolean; accountSetting?: apigateway.CfnAccount } {
  if (!wanted) return { cloudWatchRole: false };
  const earlier = Stack.of(gateway)
    .node.findAll()
    .find((other): other is Api => other instanceof Api && other.accountSetting !== undefined);
  return earlier ? { cloudWatchRole: false, accountSetting: earlier.accountSetting } : { cloudWatchRole: true };
}

/** The stage's own URL, spelled from the API id so that the functions naming it do not depend on the stage. */
function stageUrl(api: Api, stageName: string): string {
  const stack = Stack.of(api);
  return `https://${api.restApi.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${stageName}${API_BASE_PATH}`;
}

interface ServiceFunctions {
  readonly catalog: ServiceFunction;
  readonly tokenExchange: ServiceFunction;
  readonly jwks: ServiceFunction;
  readonly management: ServiceFunction;
  readonly inference: ServiceFunction;
  readonly registrar: ServiceFunction;
  readonly settingsPage: ServiceFunction;
  readonly usageRollup: ServiceFunction;
  readonly providerCredentials: ProviderCredentials;
}

/**
 * docs/reference.md#access-tokens: issued tokens name this API as their issuer and audience; the functions that take
 * them as bearer credentials check both, and that retired signing keys have outlived the longest
 * token (docs/reference.md#limits). JWKS publishes a retired key until then, and its discovery documents (RFC 8414,
 * RFC 9728) name the same issuer the tokens carry.
 */
function nameTheIssuer(functions: ServiceFunctions, settings: ModelgateSettings, issuer: string): void {
  const accessTokens = settingsEnvironment({ ...settings, apiBaseUrl: issuer }, ['apiBaseUrl', 'accessTokenMaxLifetimeSeconds']);
  for (const fn of [functions.tokenExchange, functions.catalog, functions.management, functions.inference, functions.jwks]) {
    for (const [name, value] of Object.entries(accessTokens)) fn.addEnvironment(name, value);
  }
}

/** Every function answering under the API base path names the origins its answers may be read from (lambdas/http/cors.ts). */
function nameTheAllowedOrigins(functions: ServiceFunctions, settings: ModelgateSettings): void {
  const cors = settingsEnvironment(settings, ['corsAllowedOrigins']);
  for (const fn of [functions.catalog, functions.tokenExchange, functions.jwks, functions.management, functions.inference]) {
    for (const [name, value] of Object.entries(cors)) fn.addEnvironment(name, value);
  }
}

/**
 * One function per concern, each with exactly the tables, items and key operations it uses.
 * Every function that authenticates callers reads the keys table: API keys, and the
 * signing-key records that verify issued access tokens without calling KMS.
 */
function serviceFunctions(scope: Construct, tables: Tables, signingKey: SigningKey, settings: ModelgateSettings): ServiceFunctions {
  const serviceFunction = (id: string, name: string, options: Omit<ServiceFunctionProps, 'entry' | 'stageName' | 'logLevel'>) =>
    new ServiceFunction(scope, id, { entry: functionEntry(name), stageName: settings.stageName, logLevel: settings.logLevel, ...options });
  const catalog = serviceFunction('Catalog', 'catalog', {
    description: 'GET /models/user: the model catalog as one caller may use it',
    // Holds the whole catalog in memory and filters it per request (lib/function-memory.ts).
    memorySize: memoryOf('catalog'),
    // The public catalog may answer without a credential (docs/reference.md#the-catalog).
    environment: settingsEnvironment(settings, [...CATALOG_SETTINGS, 'publicCatalog']),
  })
    .bindTable(tables.get('models'), 'read')
    .bindTable(tables.get('keys'), 'read')
    // The popularity figures, folded from the gateway's own traffic, feed the most-popular and top-weekly sorts.
    .bindTable(tables.get('usage'), 'read')
    // Every function that takes DPoP-bound tokens records each proof it accepts, once.
    .bindTableItems(tables.get('rateCounters'), PROOF_REPLAY_WRITES, [PROOF_REPLAY_PREFIX]);
  const tokenExchange = tokenExchangeFunction(serviceFunction, tables, signingKey, settings);
  // Publishes public keys from the keys table: it can neither sign nor call KMS, and it
  // reads the signing-key records only, not API keys or organizations.
  const jwks = serviceFunction('Jwks', 'jwks', {
    description: 'GET /oauth/jwks, /openapi.json and /.well-known/*: the access-token verification keys, the API description and the discovery documents',
    timeout: Duration.seconds(5),
  }).bindTable(tables.get('keys'), 'read', { partitionKeys: [SIGNING_KEY_PARTITION] });
  const management = serviceFunction('Management', 'management', {
    description: 'Management API: keys, workspaces, guardrails, workload identity',
    // The policy tester verifies tokens like the exchange, fetching issuer keys, and shares its per-address limit.
    timeout: Duration.seconds(15),
    environment: settingsEnvironment(settings, [...PROOF_SETTINGS, ...EXCHANGE_RATE_SETTINGS]),
  })
    .bindTable(tables.get('keys'), 'readWrite')
    .bindTable(tables.get('policies'), 'readWrite')
    .bindTable(tables.get('usage'), 'read')
    // A change that sets a spending limit starts its ledger (lambdas/spending/ledger-seeds.ts): those items only.
    .bindTableItems(tables.get('usage'), ['dynamodb:UpdateItem'], [LEDGER_PREFIX])
    .bindTable(tables.get('rateCounters'), 'readWrite');
  const { inference, providerCredentials } = inferenceFunction(scope, serviceFunction, tables, settings);
  const registrar = serviceFunction('SigningKeyRegistrar', 'signing-key-registrar', {
    description: 'Deploy time: records the KMS public key as a signing-key record',
    timeout: Duration.seconds(30),
  }).bindTable(tables.get('keys'), 'readWrite');
  // The Workload identity settings page: static files built into its package, no table, no key.
  const settingsPage = serviceFunction('SettingsPage', 'settings-page', {
    description: 'GET /settings/workload-identity: the settings page and its assets',
    timeout: Duration.seconds(5),
    environment: { PAGE_ASSETS_DIR },
    afterBundling: (outputDir) => [buildSettingsPageCommand(path.join(outputDir, PAGE_ASSETS_DIR))],
  });
  const usageRollup = usageRollupFunction(scope, serviceFunction, tables);
  return { catalog, tokenExchange, jwks, management, inference, registrar, settingsPage, usageRollup, providerCredentials };
}

/**
 * The usage rollup, every hour: folds each organization's closed days of usage and rebuilds the
 * popularity figures the catalog reads (docs/architecture.md, "Usage over time"). It reads the
 * organizations from the keys table and writes only the usage table.
 */
function usageRollupFunction(scope: Construct, serviceFunction: FunctionFactory, tables: Tables): ServiceFunction {
  const rollup = serviceFunction('UsageRollup', 'usage-rollup', {
    description: 'Every hour: folds closed days of usage, rebuilds the popularity figures',
    timeout: Duration.minutes(15),
    memorySize: 1024,
  })
    .bindTable(tables.get('keys'), 'read')
    .bindTable(tables.get('usage'), 'readWrite');
  new events.Rule(scope, 'UsageRollupSchedule', {
    description: 'Runs the usage rollup every hour; a run that fails is retried, and the next one folds what is left',
    schedule: events.Schedule.rate(Duration.hours(1)),
    targets: [new targets.LambdaFunction(rollup, { retryAttempts: 2 })],
  });
  return rollup;
}

type FunctionFactory = (id: string, name: string, options: Omit<ServiceFunctionProps, 'entry' | 'stageName' | 'logLevel'>) => ServiceFunction;

/** The token exchange: the one function that signs, and writes only its own items of the policies table. */
function tokenExchangeFunction(serviceFunction: FunctionFactory, tables: Tables, signingKey: SigningKey, settings: ModelgateSettings): ServiceFunction {
  const policies = tables.get('policies');
  const tokenExchange = serviceFunction('TokenExchange', 'token-exchange', {
    description: 'POST /oauth/token: RFC 8693 token exchange',
    // Fetches the issuer's discovery document and key set before it can verify.
    timeout: Duration.seconds(15),
    environment: settingsEnvironment(settings, [...PROOF_SETTINGS, ...EXCHANGE_RATE_SETTINGS]),
  })
    .bindTable(policies, 'read')
    .bindTable(tables.get('keys'), 'read')
    .bindTable(tables.get('rateCounters'), 'readWrite');
  signingKey.grantSign(tokenExchange.role!);
  // The active signing-key record names the key; rotated keys carry the instance's tag.
  signingKey.grantSignRotated(tokenExchange.role!);
  // Exchange events and seen `jti` values live in the policies table under their own key
  // prefixes; the exchange may write those items and never an issuer or a policy.
  tokenExchange.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
      resources: [policies.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVENT#*', 'JTI#*'] } },
    }),
  );
  return tokenExchange;
}

/** The inference function, and the secret only it may read: the providers' API keys. */
function inferenceFunction(scope: Construct, serviceFunction: FunctionFactory, tables: Tables, settings: ModelgateSettings) {
  const inference = serviceFunction('Inference', 'inference', {
    description: 'POST /chat/completions, /messages and /responses; kept responses',
    // A streamed completion may run for minutes; API Gateway streams for up to 15. Spending-limit
    // holds lapse only once no completion admitted under them can still run (docs/limits.md).
    timeout: Duration.seconds(INFERENCE_TIMEOUT_SECONDS),
    // The bulkhead: streams hold an instance each for their whole length, and without a cap a
    // surge of them takes the account's concurrency from the token exchange, JWKS and catalog.
    reservedConcurrentExecutions: settings.inferenceReservedConcurrency,
    // Completions are routed within the region of the hostname called, over the same catalog.
    environment: settingsEnvironment(settings, ['inferenceUpstreams', 'upstreamTimeoutSeconds', 'responseRetentionDays', ...CATALOG_SETTINGS]),
  })
    .bindTable(tables.get('keys'), 'read')
    .bindTable(tables.get('models'), 'read')
    .bindTable(tables.get('usage'), 'readWrite')
    .bindTable(tables.get('responses'), 'readWrite')
    .bindTableItems(tables.get('rateCounters'), PROOF_REPLAY_WRITES, [PROOF_REPLAY_PREFIX]);
  const providerCredentials = new ProviderCredentials(scope, 'ProviderCredentials');
  providerCredentials.bindReader(inference);
  grantBedrockModels(inference, settings.inferenceUpstreams);
  return { inference, providerCredentials };
}

/** Where the settings page's built files sit in its function package. */
const PAGE_ASSETS_DIR = 'settings-page';
const PROJECT_ROOT = path.resolve(__dirname, '..');

/** The page's own build (web/build.ts), the one the local runtime serves from memory. */
function buildSettingsPageCommand(outDir: string): string {
  const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
  return ['node', path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(PROJECT_ROOT, 'web', 'build-cli.ts'), outDir].map(quote).join(' ');
}

/** The settings page's path, from the route table. */
function settingsPagePath(): string {
  const route = ROUTES.find((r) => r.function === 'settingsPage' && !r.path.includes('{'));
  if (!route) throw new Error('The route table has no settings page route');
  return resourcePath(route);
}

/** The token endpoint's full path, from the route table rather than a second literal. */
function tokenEndpointPath(): string {
  const route = ROUTES.find((r) => r.function === 'tokenExchange');
  if (!route) throw new Error('The route table has no tokenExchange route');
  return resourcePath(route);
}
