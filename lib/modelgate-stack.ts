import * as path from 'node:path';
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { API_BASE_PATH, ROUTES, resourcePath } from '../lambdas/routes';
import * as sns from 'aws-cdk-lib/aws-sns';
import { PROOF_REPLAY_PREFIX, SIGNING_KEY_PARTITION } from '../lambdas/aws/table-schemas';
import { ServiceAlarms } from './constructs/alarms';
import { Api } from './constructs/api';
import { Firewall } from './constructs/firewall';
import { ProviderCredentials } from './constructs/provider-credentials';
import { ServiceFunction, functionEntry, type ServiceFunctionProps } from './constructs/service-function';
import { SigningKey } from './constructs/signing-key';
import { SigningKeyRegistration } from './constructs/signing-key-registration';
import { Tables } from './constructs/tables';
import { memoryOf } from './function-memory';
import { validateSettings, type ModelgateSettings } from './settings';

/** A DPoP proof's replay record is one conditional put (lambdas/aws/dynamo-proof-replay-store.ts). */
const PROOF_REPLAY_WRITES = ['dynamodb:PutItem'];

/** Settings are validated when the stack is built; see {@link ModelgateSettings} for ranges. */
export interface ModelgateStackProps extends StackProps, ModelgateSettings {}

/**
 * The modelgate service: WAF ─► REST API ─► one function per concern ─► DynamoDB, with
 * a KMS key that signs access tokens. This class only wires the constructs together and
 * states, per function, which tables and key operations it may use.
 */
export class ModelgateStack extends Stack {
  constructor(scope: Construct, id: string, props: ModelgateStackProps) {
    super(scope, id, props);
    const settings = validateSettings(props);
    const { stageName } = settings;

    const tables = new Tables(this, 'Tables');
    const models = tables.get('models');
    const policies = tables.get('policies');
    const keys = tables.get('keys');
    const rateCounters = tables.get('rateCounters');
    const usage = tables.get('usage');
    const signingKey = new SigningKey(this, 'SigningKey');

    const serviceFunction = (
      id: string,
      name: string,
      options: Omit<ServiceFunctionProps, 'entry' | 'stageName' | 'logLevel'>,
    ): ServiceFunction =>
      new ServiceFunction(this, id, { entry: functionEntry(name), stageName, logLevel: settings.logLevel, ...options });

    // Every function that authenticates callers reads the keys table: API keys, and the
    // signing-key records that verify issued access tokens without calling KMS.
    const catalog = serviceFunction('Catalog', 'catalog', {
      description: 'GET /models/user: the model catalog as one caller may use it',
      memorySize: memoryOf('catalog'),
      environment: {
        REGIONAL_HOSTNAMES: JSON.stringify(settings.regionalHostnames),
        CATALOG_CACHE_SECONDS: String(settings.catalogCacheSeconds),
      },
    })
      .bindTable(models, 'read')
      .bindTable(keys, 'read')
      // The gateway's own traffic feeds the most-popular and top-weekly sorts.
      .bindTable(usage, 'read')
      // Every function that takes DPoP-bound tokens records each proof it accepts, once.
      .bindTableItems(rateCounters, PROOF_REPLAY_WRITES, [PROOF_REPLAY_PREFIX]);

    const tokenExchange = serviceFunction('TokenExchange', 'token-exchange', {
      description: 'POST /oauth/token: RFC 8693 token exchange',
      // Fetches the issuer's discovery document and key set before it can verify.
      timeout: Duration.seconds(15),
      environment: {
        ACCESS_TOKEN_MAX_LIFETIME_SECONDS: String(settings.accessTokenMaxLifetimeSeconds),
        EXCHANGE_RATE_LIMIT: String(settings.exchangeRateLimit),
        EXCHANGE_RATE_WINDOW_SECONDS: String(settings.exchangeRateWindowSeconds),
      },
    })
      .bindTable(policies, 'read')
      .bindTable(keys, 'read')
      .bindTable(rateCounters, 'readWrite');
    signingKey.grantSign(tokenExchange.role!);
    // The active signing-key record names the key; rotated keys carry the stack's tag.
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

    // Publishes public keys from the keys table: it can neither sign nor call KMS, and it
    // reads the signing-key records only, not API keys or organizations.
    const jwks = serviceFunction('Jwks', 'jwks', {
      description: 'GET /oauth/jwks, /openapi.json and /.well-known/*: the access-token verification keys, the API description and the discovery documents',
      timeout: Duration.seconds(5),
    }).bindTable(keys, 'read', { partitionKeys: [SIGNING_KEY_PARTITION] });

    const management = serviceFunction('Management', 'management', {
      description: 'Management API: keys, workspaces, guardrails, workload identity',
      // The policy tester verifies tokens like the exchange, fetching issuer keys, and shares its per-address limit.
      timeout: Duration.seconds(15),
      environment: {
        EXCHANGE_RATE_LIMIT: String(settings.exchangeRateLimit),
        EXCHANGE_RATE_WINDOW_SECONDS: String(settings.exchangeRateWindowSeconds),
      },
    })
      .bindTable(keys, 'readWrite')
      .bindTable(policies, 'readWrite')
      .bindTable(usage, 'read')
      .bindTable(rateCounters, 'readWrite');

    const inference = serviceFunction('Inference', 'inference', {
      description: 'POST /chat/completions',
      // A streamed completion may run for minutes; API Gateway streams for up to 15.
      timeout: Duration.minutes(5),
      // The bulkhead: streams hold an instance each for their whole length, and without a cap a
      // surge of them takes the account's concurrency from the token exchange, JWKS and catalog.
      reservedConcurrentExecutions: settings.inferenceReservedConcurrency,
      environment: {
        INFERENCE_UPSTREAMS: JSON.stringify(settings.inferenceUpstreams),
        UPSTREAM_TIMEOUT_SECONDS: String(settings.upstreamTimeoutSeconds),
      },
    })
      .bindTable(keys, 'read')
      .bindTable(models, 'read')
      .bindTable(usage, 'readWrite')
      .bindTableItems(rateCounters, PROOF_REPLAY_WRITES, [PROOF_REPLAY_PREFIX]);
    // Only the inference function can read the provider API keys.
    const providerCredentials = new ProviderCredentials(this, 'ProviderCredentials');
    providerCredentials.bindReader(inference);

    const registrar = serviceFunction('SigningKeyRegistrar', 'signing-key-registrar', {
      description: 'Deploy time: records the KMS public key as a signing-key record',
      timeout: Duration.seconds(30),
    }).bindTable(keys, 'readWrite');
    const registration = new SigningKeyRegistration(this, 'SigningKeyRegistration', { signingKey, registrar });

    // The Workload identity settings page: static files built into its package, no table, no key.
    const settingsPage = serviceFunction('SettingsPage', 'settings-page', {
      description: 'GET /settings/workload-identity: the settings page and its assets',
      timeout: Duration.seconds(5),
      environment: { PAGE_ASSETS_DIR: PAGE_ASSETS_DIR },
      afterBundling: (outputDir) => [buildSettingsPageCommand(path.join(outputDir, PAGE_ASSETS_DIR))],
    });

    const api = new Api(this, 'Api', {
      stageName,
      functions: { catalog, tokenExchange, jwks, management, inference, settingsPage },
    });

    // SPEC 2.13: issued tokens name this API as their issuer and audience; the functions that
    // take them as bearer credentials check both, and that retired signing keys have outlived
    // the longest token (SPEC 8).
    const apiBaseUrl =
      settings.apiBaseUrl || `https://${api.restApi.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${stageName}${API_BASE_PATH}`;
    tokenExchange.addEnvironment('API_BASE_URL', apiBaseUrl);
    for (const verifier of [catalog, management, inference]) {
      verifier.addEnvironment('API_BASE_URL', apiBaseUrl);
      verifier.addEnvironment('ACCESS_TOKEN_MAX_LIFETIME_SECONDS', String(settings.accessTokenMaxLifetimeSeconds));
    }
    // SPEC 8: JWKS publishes a retired key until the longest token it may have signed expires;
    // its discovery documents (RFC 8414, RFC 9728) name the same issuer the tokens carry.
    jwks.addEnvironment('ACCESS_TOKEN_MAX_LIFETIME_SECONDS', String(settings.accessTokenMaxLifetimeSeconds));
    jwks.addEnvironment('API_BASE_URL', apiBaseUrl);

    const firewall = new Firewall(this, 'Firewall', {
      stage: api.deploymentStage,
      stageName,
      tokenEndpointPath: tokenEndpointPath(),
      tokenRateLimit: settings.wafTokenRateLimit,
      generalRateLimit: settings.wafGeneralRateLimit,
    });

    new ServiceAlarms(this, 'Alarms', {
      stage: api.deploymentStage,
      // Every function of the stack, so a new one is watched without another line here.
      functions: Object.fromEntries(
        this.node.children.filter((child): child is ServiceFunction => child instanceof ServiceFunction).map((fn) => [fn.node.id, fn]),
      ),
      webAclMetricName: firewall.metricName,
      reservedConcurrency: settings.inferenceReservedConcurrency === undefined ? {} : { Inference: settings.inferenceReservedConcurrency },
      customResourceFunctions: [registration.frameworkFunction],
      topic: settings.alarmTopicArn ? sns.Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn) : undefined,
    });

    new CfnOutput(this, 'ApiUrl', {
      value: api.restApi.urlForPath(API_BASE_PATH),
      description: 'Base URL of the API, e.g. https://<id>.execute-api.<region>.amazonaws.com/v1/api/v1',
    });
    new CfnOutput(this, 'SettingsPageUrl', {
      value: api.restApi.urlForPath(settingsPagePath()),
      description: 'The Workload identity settings page (sign in with a management key)',
    });
    for (const { schema, table } of tables.all) {
      new CfnOutput(this, `${schema.id[0]!.toUpperCase()}${schema.id.slice(1)}TableName`, {
        value: table.tableName,
        description: `${schema.envVar} for the functions and the operator CLI`,
      });
    }
    new CfnOutput(this, 'SigningKeyId', { value: signingKey.keyId });
    new CfnOutput(this, 'SigningKeyArn', { value: signingKey.keyArn });
    new CfnOutput(this, 'ProviderCredentialsSecretArn', {
      value: providerCredentials.secret.secretArn,
      description: 'Secret holding the inference providers\' API keys: {"<provider or *>": "<key>"}',
    });
    new CfnOutput(this, 'WebAclArn', { value: firewall.webAclArn });
  }
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
