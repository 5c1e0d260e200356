import { join } from 'node:path';
import { LOCAL_OPEN_SHARDS } from '../lambdas/aws/dynamo-open-completions';
import { LOCAL_SPEND_SHARDS } from '../lambdas/aws/dynamo-ledgers';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomId, systemClock, type Clock } from '../lambdas/clock';
import type { Settings } from '../lambdas/settings';
import { createIssuerKeySource } from '../lambdas/federation/issuer-keys';
import { createCatalogHandler } from '../lambdas/functions/catalog/handler';
import { createInferenceHandler } from '../lambdas/functions/inference/handler';
import { createJwksHandler } from '../lambdas/functions/jwks/handler';
import { createManagementHandler } from '../lambdas/functions/management/handler';
import { createSettingsPageHandler } from '../lambdas/functions/settings-page/handler';
import { createTokenExchangeHandler } from '../lambdas/functions/token-exchange/handler';
import { fileCredentials } from '../lambdas/inference/provider-credentials';
import { createTelemetry, SERVICE_NAME, type Telemetry } from '../lambdas/observability/telemetry';
import type { FunctionId } from '../lambdas/routes';
import { signerForRecord } from '../lambdas/wiring/signer-for-record';
import { createDocumentClient, createDynamoDbClient } from '../lambdas/aws/dynamo-client';
import type { TableId } from '../lambdas/aws/table-schemas';
import { catalogDependencies } from '../lambdas/functions/catalog/dependencies';
import type { FunctionContext } from '../lambdas/wiring/context';
import { inferenceDependencies } from '../lambdas/functions/inference/dependencies';
import { jwksDependencies } from '../lambdas/functions/jwks/dependencies';
import { managementDependencies } from '../lambdas/functions/management/dependencies';
import { tokenExchangeDependencies } from '../lambdas/functions/token-exchange/dependencies';
import type { Signer, SigningKeyRecord } from '../lambdas/signing/signer';
import { buildSettingsPage } from '../web/build';
import { observeClientCalls, observeSigner, type AwsCallObserver } from './aws-calls';
import { ensureDevCertificateAuthority } from './dev-ca';
import { LOCAL_AWS_ENV } from './embedded-dynamodb';
import { functionCredentials, type StackFunctionId } from './function-principals';
import type { FunctionHandler } from './http-server';
import { ReadableLogger } from './readable-logger';
import { LOCAL_TABLES } from './runtime-data';
import type { LocalRuntimeOptions, LocalSettingName } from './runtime-options';

import { PROVIDER_CREDENTIALS_FILE } from './files';

export { PROVIDER_CREDENTIALS_FILE };

/**
 * Each function's context, as its Lambda entry builds it: its own DynamoDB client, signed with
 * its own access key id (and observed when asked), and its telemetry on the runtime's logger.
 * The clients are added to `clients`, which the runtime destroys when it stops.
 */
export function functionContexts(
  endpoint: string,
  logLevel: Settings['logLevel'],
  options: Pick<LocalRuntimeOptions, 'log' | 'random' | 'observeAwsCalls' | 'awsCallRecording'> & { clock: Clock; writersSince: Date },
  clients: DynamoDBClient[],
) {
  const logger = new ReadableLogger({ serviceName: SERVICE_NAME, logLevel }, options.log);
  const telemetryOf = (functionName: StackFunctionId) => createTelemetry({ functionName, logLevel, localLogger: logger });
  const contextOf = <T extends TableId>(fn: StackFunctionId): FunctionContext<T> => {
    const client = createDynamoDbClient({ endpoint, region: LOCAL_AWS_ENV.AWS_REGION, credentials: functionCredentials(fn) });
    if (options.observeAwsCalls) observeClientCalls(client, fn, 'DynamoDB', options.observeAwsCalls, options.awsCallRecording);
    clients.push(client);
    const { clock, writersSince, random } = options;
    return { documentClient: createDocumentClient(client), tables: LOCAL_TABLES, clock, telemetry: telemetryOf(fn), writersSince, random, openShards: LOCAL_OPEN_SHARDS, spendShards: LOCAL_SPEND_SHARDS, ledgerBranches: 0 };
  };
  return { contextOf, telemetryOf };
}

/** Every function's handler, wired as its Lambda entry wires it, over the local clients and settings. */
export async function buildHandlers(
  contextOf: <T extends TableId>(fn: StackFunctionId) => FunctionContext<T>,
  telemetryOf: (fn: StackFunctionId) => Telemetry,
  settings: Pick<Settings, LocalSettingName | 'apiBaseUrl'>,
  dataDir: string,
  options: LocalRuntimeOptions,
): Promise<Record<FunctionId, FunctionHandler>> {
  const clock = options.clock ?? systemClock;
  // Locally the popularity figures are read as often as the catalog: a rollup shows in the sorts within seconds.
  const catalog = { ...settings, usageFiguresSeconds: settings.catalogCacheSeconds };
  const allowLoopbackIssuers = options.allowLoopbackIssuers ?? true;
  // Identity providers on this machine present certificates from the development CA.
  const devCa = ensureDevCertificateAuthority(dataDir);
  const issuerKeys = () => createIssuerKeySource({ clock, allowLoopback: allowLoopbackIssuers, extraCaPems: [devCa.certPem] });
  return {
    catalog: createCatalogHandler(catalogDependencies(contextOf('catalog'), catalog)),
    tokenExchange: createTokenExchangeHandler(
      tokenExchangeDependencies(contextOf('tokenExchange'), {
        ...settings,
        issuerKeys: issuerKeys(),
        signerForRecord: observedSigners(signerForRecord({ localKeyDir: dataDir }), options.observeAwsCalls),
        newId: randomId,
      }),
    ),
    jwks: createJwksHandler(jwksDependencies(contextOf('jwks'), settings)),
    // One per-address budget for the token endpoint and the policy tester (docs/reference.md#oauth-errors, docs/reference.md#limits).
    management: createManagementHandler(managementDependencies(contextOf('management'), { ...settings, allowLoopbackIssuers, issuerKeys: issuerKeys() })),
    inference: createInferenceHandler(
      inferenceDependencies(contextOf('inference'), {
        ...catalog,
        credentials: fileCredentials(join(dataDir, PROVIDER_CREDENTIALS_FILE), clock),
        newId: randomId,
        // Bedrock signs with the SDK's default credentials chain, in the configured or the shell's region.
        providers: { region: process.env.AWS_REGION, bedrock: options.bedrock },
      }),
    ),
    // Built from the page's sources at start, with the same build the stack's bundling step runs.
    settingsPage: createSettingsPageHandler({ assets: await buildSettingsPage(), telemetry: telemetryOf('settingsPage') }),
  };
}

/** The local signer stands in for KMS: its signatures are reported as the `Sign` calls they are in AWS. */
function observedSigners(
  signerOf: (record: SigningKeyRecord) => Promise<Signer>,
  observe: AwsCallObserver | undefined,
): (record: SigningKeyRecord) => Promise<Signer> {
  if (!observe) return signerOf;
  return async (record) => observeSigner(await signerOf(record), 'tokenExchange', observe);
}
