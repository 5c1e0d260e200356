import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import type { AccessTokenVerifier } from '../lambdas/accounts/authenticate';
import { SigningKeyAccessTokenVerifier } from '../lambdas/oauth/access-token-verifier';
import { CatalogCache } from '../lambdas/catalog/catalog-cache';
import { randomId, systemClock, type Clock } from '../lambdas/clock';
import { ALLOW_LOOPBACK_ISSUERS_ENV, DEVELOPMENT_PROVIDER, parseUpstreams, type LogLevel } from '../lambdas/config';
import { FederationService } from '../lambdas/federation/federation-service';
import { createCatalogHandler } from '../lambdas/handlers/catalog';
import { createInferenceHandler } from '../lambdas/handlers/inference';
import { createJwksHandler } from '../lambdas/handlers/jwks';
import { createManagementHandler } from '../lambdas/handlers/management';
import { createSettingsPageHandler } from '../lambdas/handlers/settings-page';
import { createTokenExchangeHandler } from '../lambdas/handlers/token-exchange';
import { fileCredentials } from '../lambdas/inference/provider-credentials';
import { upstreamOptions } from '../lambdas/inference/upstream-options';
import { catalogLoadRecorder, createTelemetry, SERVICE_NAME, type Telemetry } from '../lambdas/observability/telemetry';
import { API_BASE_PATH, type FunctionId } from '../lambdas/routes';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { registerDeployedSigningKey } from '../lambdas/signing/signing-key-registry';
import { DynamoAccountStore } from '../lambdas/store/dynamo-account-store';
import { DynamoCatalogStore } from '../lambdas/store/dynamo-catalog-store';
import { DynamoUsageStore } from '../lambdas/store/dynamo-usage-store';
import { USAGE_SORT_DAYS } from '../lambdas/usage/usage';
import { DynamoFederationStore } from '../lambdas/store/dynamo-federation-store';
import { createDocumentClient } from '../lambdas/store/dynamo-client';
import { DynamoSigningKeyStore } from '../lambdas/store/dynamo-signing-key-store';
import { TABLE_SCHEMAS } from '../lambdas/store/table-schemas';
import { buildSettingsPage } from '../web/build';
import { LOCAL_AWS_ENV, startEmbeddedDynamoDb, type EmbeddedDynamoDb } from './embedded-dynamodb';
import { functionCredentials, type StackFunctionId } from './function-principals';
import { writeFileAtomically } from './files';
import { reconcileIndexes } from './reconcile-indexes';
import { createLocalApiServer, type ExchangeObserver, type FunctionHandler } from './http-server';
import { ReadableLogger } from './readable-logger';
import { ensureDemoOrganization, seedCatalog, type DemoCredentials } from './seed';
import { createTables } from './tables';
import { ensureDevCertificateAuthority } from './dev-ca';
import { evaluateCondition } from '../lambdas/federation/condition';
import { evaluateExchange } from '../lambdas/federation/evaluate-exchange';
import { createIssuerKeySource } from '../lambdas/federation/issuer-keys';
import { ActiveSigner } from '../lambdas/signing/active-signer';
import { signerForRecord } from '../lambdas/signing/signer-for-record';
import { DynamoExchangeEventStore } from '../lambdas/store/dynamo-exchange-event-store';
import { DynamoJtiStore } from '../lambdas/store/dynamo-jti-store';
import { DynamoRateCounterStore } from '../lambdas/store/dynamo-rate-counter-store';
import { checkExchangeRate } from '../lambdas/oauth/exchange-rate-limit';

export interface LocalRuntimeOptions {
  /** @default 8787 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Where keys, data and demo.json live. @default '.local' */
  dataDir?: string;
  /** Keep DynamoDB data on disk under dataDir. @default true */
  persist?: boolean;
  /** @default { eu: 'eu.localhost' } */
  regionalHostnames?: Record<string, string>;
  /** @default 2 */
  catalogCacheSeconds?: number;
  /** SPEC 8: retired signing keys stay published this long. @default 900 */
  accessTokenMaxLifetimeSeconds?: number;
  /** @default 'INFO' */
  logLevel?: LogLevel;
  /** Where log lines go. @default standard error */
  log?: (line: string) => void;
  /** @default the system clock */
  clock?: Clock;
  /**
   * Accept loopback issuer and JWKS hosts, so a development identity provider on this machine
   * can be configured. @default true, unless MODELGATE_ALLOW_LOOPBACK_ISSUERS is "0"
   */
  allowLoopbackIssuers?: boolean;
  /** Token exchanges per source address per window. @default MODELGATE_EXCHANGE_LIMIT, else 60 */
  exchangeLimit?: number;
  /** @default 60 */
  exchangeWindowSeconds?: number;
  /**
   * Provider to OpenAI-compatible base URL, as `INFERENCE_UPSTREAMS` in AWS.
   * @default { '*': 'development-echo' } (the built-in development provider)
   */
  inferenceUpstreams?: Record<string, string>;
  /** @default 60 */
  upstreamTimeoutSeconds?: number;
  /** Sees every routed request and its whole answer once sent (the test suites check them against the OpenAPI document). */
  observe?: ExchangeObserver;
  /**
   * Puts a server between the functions and the embedded DynamoDB (the test suites' IAM gate,
   * test/support/iam/): given the embedded server's endpoint, returns the one the functions'
   * clients call, which `dynamoEndpoint` reports. Start-up administration calls the embedded
   * server directly. @default none: the functions call the embedded server
   */
  interposeDynamoDb?: (endpoint: string) => Promise<InterposedDynamoDb>;
}

/** A server in front of the embedded DynamoDB, see {@link LocalRuntimeOptions.interposeDynamoDb}. */
export interface InterposedDynamoDb {
  endpoint: string;
  stop(): Promise<void>;
}

export interface LocalRuntime {
  baseUrl: string;
  /** Where data, keys and the development CA live. */
  dataDir: string;
  demo: DemoCredentials;
  /** Where the functions' DynamoDB clients send requests. */
  dynamoEndpoint: string;
  stop(): Promise<void>;
}

/** Where a running local runtime says its embedded DynamoDB is, for the operator CLI. */
export const RUNTIME_FILE = 'runtime.json';

/** Provider API keys of the local runtime, under the data folder: `{"<provider or *>": "<key>"}`. */
export const PROVIDER_CREDENTIALS_FILE = 'provider-credentials.json';

/**
 * The local composition root, the second one beside the Lambda entries
 * (lambdas/functions/*.ts): the embedded DynamoDB with the stack's tables, a local ES256
 * signer, the development inference provider and readable log lines, handed to the same handler
 * factories (lambdas/handlers/*.ts) the Lambda entries call. Each function gets its own
 * DynamoDB client and stores, as in Lambda, signed with its own access key id
 * (local/function-principals.ts). Nothing is read from or written to `process.env`, so several
 * runtimes can share a process.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const dataDir = resolve(options.dataDir ?? '.local');
  mkdirSync(dataDir, { recursive: true });
  const clock = options.clock ?? systemClock;
  const dynamo = await startEmbeddedDynamoDb(options.persist === false ? {} : { path: join(dataDir, 'dynamodb') });
  // Built once the embedded server is up; stopped with it.
  const functionClients: DynamoDBClient[] = [];
  let interposed: InterposedDynamoDb | undefined;
  try {
    // Administration (tables, the catalog seed, signing-key registration, the demo
    // organization) runs on the operator's client, as a deployment or an operator would.
    const operator = createDocumentClient(dynamo.client);
    await createTables(dynamo.client);
    // Messages for whoever started the service; log lines once it serves go to the logger.
    const warn = options.log ?? ((line: string) => console.warn(line));
    if (options.persist !== false) await reconcileAfterUncleanStop(dynamo.client, warn);

    const operatorAccounts = new DynamoAccountStore(operator, TABLE_SCHEMAS.keys.localName);
    await seedCatalog(new DynamoCatalogStore(operator, TABLE_SCHEMAS.models.localName));
    // The same registration path as the deploy-time registrar: a new local key becomes the
    // active signing key (a replaced key file retires the previous one), and a restart keeps a
    // key rotated in since (`signing-key rotate`) active.
    const signer = await LocalSigner.fromFile(join(dataDir, 'signing-key.pem'));
    await registerDeployedSigningKey(
      new DynamoSigningKeyStore(operator, TABLE_SCHEMAS.keys.localName),
      { kid: signer.kid, keyRef: 'local:signing-key.pem', publicJwk: signer.publicJwk },
      'created',
      clock,
    );

    interposed = options.interposeDynamoDb ? await options.interposeDynamoDb(dynamo.endpoint) : undefined;
    const functionsEndpoint = interposed?.endpoint ?? dynamo.endpoint;
    // Each function has its own client and stores, built as its Lambda entry builds them
    // (lambdas/functions/*.ts), and presents its own credentials: a request names its function.
    const documentClientOf = (fn: StackFunctionId) => {
      const client = new DynamoDBClient({ endpoint: functionsEndpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: functionCredentials(fn) });
      functionClients.push(client);
      return createDocumentClient(client);
    };

    const logLevel = options.logLevel ?? 'INFO';
    const logger = new ReadableLogger({ serviceName: SERVICE_NAME, logLevel }, options.log);
    const telemetry = (functionName: FunctionId): Telemetry => createTelemetry({ functionName, logLevel, localLogger: logger });
    const regionalHostnames = options.regionalHostnames ?? { eu: 'eu.localhost' };
    // A development identity provider on this machine may be configured, unless turned off.
    const allowLoopback = options.allowLoopbackIssuers ?? process.env[ALLOW_LOOPBACK_ISSUERS_ENV] !== '0';
    const catalogCacheSeconds = options.catalogCacheSeconds ?? 2;
    // Identity providers on this machine present certificates from the development CA.
    const devCa = ensureDevCertificateAuthority(dataDir);
    const issuerKeys = () => createIssuerKeySource({ clock, allowLoopback, extraCaPems: [devCa.certPem] });
    const accessTokenMaxLifetimeSeconds = options.accessTokenMaxLifetimeSeconds ?? 900;
    const exchangeLimit = options.exchangeLimit ?? parseExchangeLimit(process.env.MODELGATE_EXCHANGE_LIMIT);
    // One per-address budget for the token endpoint and the policy tester (SPEC 7.2, 8).
    const exchangeRateLimit = { limit: exchangeLimit, windowSeconds: options.exchangeWindowSeconds ?? 60 };
    // Started with the API base URL once the port is bound.
    const verifiers: LateAccessTokenVerifier[] = [];
    const accessTokensOf = (documentClient: DynamoDBDocumentClient): AccessTokenVerifier => {
      const verifier = new LateAccessTokenVerifier(new DynamoSigningKeyStore(documentClient, TABLE_SCHEMAS.keys.localName), clock, accessTokenMaxLifetimeSeconds);
      verifiers.push(verifier);
      return verifier;
    };
    const catalogOf = (documentClient: DynamoDBDocumentClient, fn: FunctionId) => {
      const usage = new DynamoUsageStore(documentClient, TABLE_SCHEMAS.usage.localName);
      return new CatalogCache(new DynamoCatalogStore(documentClient, TABLE_SCHEMAS.models.localName), clock, catalogCacheSeconds, catalogLoadRecorder(telemetry(fn)), {
        recent: (now) => usage.modelUsage(now, USAGE_SORT_DAYS),
        maxAgeSeconds: catalogCacheSeconds,
      });
    };

    const catalogClient = documentClientOf('catalog');
    const jwksClient = documentClientOf('jwks');
    const inferenceClient = documentClientOf('inference');
    const handlers: Record<FunctionId, FunctionHandler> = {
      catalog: createCatalogHandler({
        accounts: new DynamoAccountStore(catalogClient, TABLE_SCHEMAS.keys.localName),
        accessTokens: accessTokensOf(catalogClient),
        catalog: catalogOf(catalogClient, 'catalog'),
        clock,
        regionalHostnames,
        telemetry: telemetry('catalog'),
      }),
      tokenExchange: async () => ({ statusCode: 503, body: JSON.stringify({ error: 'temporarily_unavailable' }) }),
      jwks: createJwksHandler({
        signingKeys: new DynamoSigningKeyStore(jwksClient, TABLE_SCHEMAS.keys.localName),
        clock,
        accessTokenMaxLifetimeSeconds,
        telemetry: telemetry('jwks'),
      }),
      management: managementHandler(documentClientOf('management')),
      inference: createInferenceHandler({
        accounts: new DynamoAccountStore(inferenceClient, TABLE_SCHEMAS.keys.localName),
        accessTokens: accessTokensOf(inferenceClient),
        usage: new DynamoUsageStore(inferenceClient, TABLE_SCHEMAS.usage.localName),
        catalog: catalogOf(inferenceClient, 'inference'),
        clock,
        regionalHostnames,
        upstream: upstreamOptions(
          {
            // Validated as in AWS: a bad base URL fails the start, naming it.
            upstreams: parseUpstreams(JSON.stringify(options.inferenceUpstreams ?? { '*': DEVELOPMENT_PROVIDER })),
            upstreamTimeoutSeconds: options.upstreamTimeoutSeconds ?? 60,
          },
          { clock, newId: randomId, credentials: fileCredentials(join(dataDir, PROVIDER_CREDENTIALS_FILE), clock) },
        ),
        telemetry: telemetry('inference'),
      }),
      // Built from the page's sources at start, with the same build the stack's bundling step runs.
      settingsPage: createSettingsPageHandler({ assets: await buildSettingsPage(), telemetry: telemetry('settingsPage') }),
    };

    function managementHandler(documentClient: DynamoDBDocumentClient): FunctionHandler {
      const accounts = new DynamoAccountStore(documentClient, TABLE_SCHEMAS.keys.localName);
      const federation = new DynamoFederationStore(documentClient, TABLE_SCHEMAS.policies.localName, clock);
      // The policy tester runs the exchange's own decision over the same stores and key source.
      const evaluationDeps = { federation, accounts, issuerKeys: issuerKeys(), clock, evaluateCondition };
      // The token endpoint's own counters and limit: tester calls and exchanges share one budget per address.
      const rateCounters = new DynamoRateCounterStore(documentClient, TABLE_SCHEMAS.rateCounters.localName);
      return createManagementHandler({
        accounts,
        accessTokens: accessTokensOf(documentClient),
        service: new AccountsService({ store: accounts, clock }),
        federation: new FederationService({ store: federation, accounts, hosts: { allowLoopback }, clock }),
        policyTester: { evaluate: (request) => evaluateExchange(evaluationDeps, request), clock, maxLifetimeSeconds: accessTokenMaxLifetimeSeconds },
        exchangeRate: (sourceIp) => checkExchangeRate(rateCounters, sourceIp, clock.now(), exchangeRateLimit),
        usage: new DynamoUsageStore(documentClient, TABLE_SCHEMAS.usage.localName),
        clock,
        exchangeEvents: new DynamoExchangeEventStore(documentClient, TABLE_SCHEMAS.policies.localName),
        telemetry: telemetry('management'),
      });
    }

    // The token endpoint names the API base URL as issuer, known once the port is bound.
    function tokenExchangeHandler(documentClient: DynamoDBDocumentClient, apiBaseUrl: string): FunctionHandler {
      const evaluationDeps = {
        federation: new DynamoFederationStore(documentClient, TABLE_SCHEMAS.policies.localName, clock),
        accounts: new DynamoAccountStore(documentClient, TABLE_SCHEMAS.keys.localName),
        issuerKeys: issuerKeys(),
        clock,
        evaluateCondition,
      };
      // Re-reads the active signing-key record, so `npm run ops -- signing-key rotate` takes
      // effect in the running service within a minute.
      const signers = new ActiveSigner(new DynamoSigningKeyStore(documentClient, TABLE_SCHEMAS.keys.localName), signerForRecord({ localKeyDir: dataDir }), clock);
      return createTokenExchangeHandler({
        config: { issuer: apiBaseUrl, maxLifetimeSeconds: accessTokenMaxLifetimeSeconds, rateLimit: exchangeRateLimit },
        clock,
        newId: randomId,
        rateCounters: new DynamoRateCounterStore(documentClient, TABLE_SCHEMAS.rateCounters.localName),
        evaluate: (request) => evaluateExchange(evaluationDeps, request),
        jtis: new DynamoJtiStore(documentClient, TABLE_SCHEMAS.policies.localName),
        events: new DynamoExchangeEventStore(documentClient, TABLE_SCHEMAS.policies.localName),
        signer: () => signers.signer(),
        telemetry: telemetry('tokenExchange'),
      });
    }

    const server = createLocalApiServer(handlers, 'local', options.observe);
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8787, options.host ?? '127.0.0.1', () => resolvePromise());
    });
    const { port } = server.address() as AddressInfo;
    const baseUrl = `http://${options.host ?? '127.0.0.1'}:${port}${API_BASE_PATH}`;
    handlers.tokenExchange = tokenExchangeHandler(documentClientOf('tokenExchange'), baseUrl);
    for (const verifier of verifiers) verifier.start(baseUrl);
    // demo.json is written last: its presence means the service is ready to serve.
    writeFileAtomically(join(dataDir, RUNTIME_FILE), `${JSON.stringify({ dynamoEndpoint: functionsEndpoint, baseUrl, pid: process.pid }, null, 2)}\n`);
    const demo = await ensureDemoOrganization(new AccountsService({ store: operatorAccounts, clock }), operatorAccounts, join(dataDir, 'demo.json'), baseUrl, warn);

    return {
      baseUrl,
      dataDir,
      demo,
      dynamoEndpoint: functionsEndpoint,
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
        await server.idle();
        await stopDynamoDb(dynamo, functionClients, interposed);
      },
    };
  } catch (error) {
    await stopDynamoDb(dynamo, functionClients, interposed);
    throw error;
  }
}

/** The embedded DynamoDB, what stands in front of it, and the functions' clients of it. */
async function stopDynamoDb(dynamo: EmbeddedDynamoDb, functionClients: readonly DynamoDBClient[], interposed: InterposedDynamoDb | undefined): Promise<void> {
  for (const client of functionClients) client.destroy();
  await interposed?.stop();
  await dynamo.stop();
}

/**
 * A function's access-token verifier (SPEC 5 rule 5): access tokens name the API base URL as
 * issuer and audience (SPEC 2.13), known once the port is bound; until then none verifies.
 */
class LateAccessTokenVerifier implements AccessTokenVerifier {
  private verifier: AccessTokenVerifier | undefined;

  constructor(
    private readonly signingKeys: DynamoSigningKeyStore,
    private readonly clock: Clock,
    private readonly maxTokenLifetimeSeconds: number,
  ) {}

  start(issuer: string): void {
    this.verifier = new SigningKeyAccessTokenVerifier({ signingKeys: this.signingKeys, clock: this.clock, issuer, maxTokenLifetimeSeconds: this.maxTokenLifetimeSeconds });
  }

  verify(token: string): ReturnType<AccessTokenVerifier['verify']> {
    return this.verifier ? this.verifier.verify(token) : Promise.reject(new Error('the service is starting'));
  }
}

/** `MODELGATE_EXCHANGE_LIMIT`: token exchanges per address per minute, 60 when unset. */
function parseExchangeLimit(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 60;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 1_000_000) {
    throw new Error(`MODELGATE_EXCHANGE_LIMIT must be an integer from 1 to 1000000, got "${raw}"`);
  }
  return value;
}

/** Data kept from an earlier run may come from a process that was killed mid-write. */
async function reconcileAfterUncleanStop(client: Parameters<typeof reconcileIndexes>[0], warn: (line: string) => void): Promise<void> {
  const { restored, removed } = await reconcileIndexes(client);
  if (restored + removed > 0) {
    warn(`local data: repaired the listing index after an unclean stop (${restored} entries restored, ${removed} without their item removed)`);
  }
}
