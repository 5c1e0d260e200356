import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { ALLOW_LOOPBACK_ISSUERS_ENV } from '../lambdas/config';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../lambdas/store/dynamo-account-store';
import { DynamoCatalogStore } from '../lambdas/store/dynamo-catalog-store';
import { createDocumentClient } from '../lambdas/store/dynamo-client';
import { DynamoSigningKeyStore } from '../lambdas/store/dynamo-signing-key-store';
import { ALL_TABLES, TABLE_SCHEMAS } from '../lambdas/store/table-schemas';
import { API_BASE_PATH, type FunctionId } from '../lambdas/routes';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { LOCAL_AWS_ENV, startEmbeddedDynamoDb } from './embedded-dynamodb';
import { writeFileAtomically } from './files';
import { createLocalApiServer, type LambdaHandler } from './http-server';
import { ensureDemoOrganization, seedCatalog, type DemoCredentials } from './seed';
import { createTables } from './tables';

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
  /** Token exchanges per source address per minute. @default MODELGATE_EXCHANGE_LIMIT, else 60 */
  exchangeLimit?: number;
  /**
   * Accept loopback issuer and JWKS hosts, so a development identity provider on this machine
   * can be configured. @default true, unless MODELGATE_ALLOW_LOOPBACK_ISSUERS is "0"
   */
  allowLoopbackIssuers?: boolean;
}

export interface LocalRuntime {
  baseUrl: string;
  demo: DemoCredentials;
  dynamoEndpoint: string;
  stop(): Promise<void>;
}

/** Where a running local runtime says its embedded DynamoDB is, for the operator CLI. */
export const RUNTIME_FILE = 'runtime.json';

/**
 * The local composition root: the embedded DynamoDB with the stack's tables, a local
 * ES256 signer, and the same handler exports behind an HTTP server. The handlers read
 * their configuration from the environment, as in Lambda, so it is set before they load
 * (one runtime per process).
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const dataDir = resolve(options.dataDir ?? '.local');
  mkdirSync(dataDir, { recursive: true });
  const dynamo = await startEmbeddedDynamoDb(options.persist === false ? {} : { path: join(dataDir, 'dynamodb') });
  try {
    await createTables(dynamo.client);
    Object.assign(process.env, {
      ...LOCAL_AWS_ENV,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      ...Object.fromEntries(ALL_TABLES.map((table) => [table.envVar, table.localName])),
      REGIONAL_HOSTNAMES: JSON.stringify(options.regionalHostnames ?? { eu: 'eu.localhost' }),
      CATALOG_CACHE_SECONDS: String(options.catalogCacheSeconds ?? 2),
      LOCAL_SIGNING_KEY_PATH: join(dataDir, 'signing-key.pem'),
      INFERENCE_UPSTREAM: 'echo',
      [ALLOW_LOOPBACK_ISSUERS_ENV]: (options.allowLoopbackIssuers ?? process.env[ALLOW_LOOPBACK_ISSUERS_ENV] !== '0') ? '1' : '0',
      STAGE: 'local',
      EXCHANGE_RATE_LIMIT: String(options.exchangeLimit ?? (process.env.MODELGATE_EXCHANGE_LIMIT || 60)),
      EXCHANGE_RATE_WINDOW_SECONDS: '60',
    });

    const documentClient = createDocumentClient(dynamo.client);
    const accounts = new DynamoAccountStore(documentClient, TABLE_SCHEMAS.keys.localName);
    await seedCatalog(new DynamoCatalogStore(documentClient, TABLE_SCHEMAS.models.localName));
    await registerLocalSigningKey(documentClient, process.env.LOCAL_SIGNING_KEY_PATH!);

    // The handlers load once the port, and so the API base URL (the `iss` of issued
    // tokens), is known; nothing is served before demo.json says the service is ready.
    const handlers = {} as Record<FunctionId, LambdaHandler>;
    const server = createLocalApiServer(handlers);
    await new Promise<void>((resolvePromise, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8787, options.host ?? '127.0.0.1', () => resolvePromise());
    });
    const { port } = server.address() as AddressInfo;
    const baseUrl = `http://${options.host ?? '127.0.0.1'}:${port}${API_BASE_PATH}`;
    process.env.API_BASE_URL = baseUrl;
    try {
      Object.assign(handlers, await loadHandlers());
    } catch (error) {
      server.close();
      throw error;
    }
    // demo.json is written last: its presence means the service is ready to serve.
    const demo = await ensureDemoOrganization(new AccountsService({ store: accounts }), accounts, join(dataDir, 'demo.json'), baseUrl);
    writeFileAtomically(join(dataDir, RUNTIME_FILE), `${JSON.stringify({ dynamoEndpoint: dynamo.endpoint, baseUrl, pid: process.pid }, null, 2)}\n`);

    return {
      baseUrl,
      demo,
      dynamoEndpoint: dynamo.endpoint,
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
        await dynamo.stop();
      },
    };
  } catch (error) {
    await dynamo.stop();
    throw error;
  }
}

async function registerLocalSigningKey(documentClient: ReturnType<typeof createDocumentClient>, path: string): Promise<void> {
  const signer = await LocalSigner.fromFile(path);
  const store = new DynamoSigningKeyStore(documentClient, TABLE_SCHEMAS.keys.localName);
  if ((await store.list()).some((record) => record.kid === signer.kid)) return;
  await store.put({
    kid: signer.kid,
    keyRef: 'local:signing-key.pem',
    publicJwk: signer.publicJwk,
    status: 'active',
    createdAt: new Date().toISOString(),
    retiredAt: null,
  });
}

/** The same handler exports the Lambda functions run, loaded after the environment is set. */
async function loadHandlers(): Promise<Record<FunctionId, LambdaHandler>> {
  const [catalog, tokenExchange, jwks, management, inference] = await Promise.all([
    import('../lambdas/functions/catalog'),
    import('../lambdas/functions/token-exchange'),
    import('../lambdas/functions/jwks'),
    import('../lambdas/functions/management'),
    import('../lambdas/functions/inference'),
  ]);
  return {
    catalog: catalog.handler as LambdaHandler,
    tokenExchange: tokenExchange.handler as LambdaHandler,
    jwks: jwks.handler as LambdaHandler,
    management: management.handler as LambdaHandler,
    inference: inference.handler as LambdaHandler,
  };
}
