import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { createKmsSigningKeyLike } from '../lambdas/aws/kms-signer';
import { LOCAL_KEY_REF_PREFIX } from '../lambdas/wiring/signer-for-record';
import { DynamoSigningKeyStore } from '../lambdas/aws/dynamo-signing-key-store';
import { createLocalSigningKey } from '../local/signing-keys';
import { AccountsService } from '../lambdas/accounts/accounts-service';
import { ALLOW_LOOPBACK_ISSUERS_ENV } from '../lambdas/config';
import { FederationService } from '../lambdas/federation/federation-service';
import { DynamoFederationStore } from '../lambdas/aws/dynamo-federation-store';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { DynamoCatalogStore } from '../lambdas/aws/dynamo-catalog-store';
import { CopiesAudit } from '../lambdas/aws/dynamo-copies-audit';
import { DynamoOpenCompletions, LOCAL_OPEN_SHARDS } from '../lambdas/aws/dynamo-open-completions';
import { DynamoUsageFold } from '../lambdas/aws/dynamo-usage-fold';
import { randomId, systemClock } from '../lambdas/clock';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretsManagerCredentials } from '../lambdas/aws/secrets-manager-credentials';
import { fileCredentials } from '../lambdas/inference/provider-credentials';
import { NO_CREDENTIALS, type ProviderCredentials } from '../lambdas/inference/upstream';
import { upstreamOptions } from '../lambdas/wiring/upstream-options';
import type { UpstreamTarget } from '../lambdas/providers/targets';
import { SETTINGS } from '../lambdas/settings';
import { rollUpUsage } from '../lambdas/usage/rollup';
import { createDocumentClient, createDynamoDbClient } from '../lambdas/aws/dynamo-client';
import { TABLE_SCHEMAS } from '../lambdas/aws/table-schemas';
import { localDynamoDbClient } from '../local/embedded-dynamodb';
import { PROVIDER_CREDENTIALS_FILE, RUNTIME_FILE } from '../local/files';
import type { GlobalFlags } from './command';
import { localDataDir } from '../local/environment';
import { OperationError, UsageError } from './errors';
import type { ConnectedServices } from './run';

/** The failure when no local service runs for the data folder; the reason follows in parentheses. */
export const LOCAL_NOT_RUNNING = 'the local service is not running: start it with npm start';

/** How long the local DynamoDB may take to answer the first request. */
const LOCAL_PROBE_TIMEOUT_MS = 3000;

const KEYS = TABLE_SCHEMAS.keys;
const MODELS = TABLE_SCHEMAS.models;
const POLICIES = TABLE_SCHEMAS.policies;
const USAGE = TABLE_SCHEMAS.usage;

/**
 * The target the flags select: a deployed stack with `--aws`, or when its table variables
 * are set and no local data folder is named; otherwise the local runtime, whose data folder is
 * `--data-dir`, else `MODELGATE_DATA_DIR` as every command reads it (local/environment.ts).
 */
export async function connectTarget(flags: GlobalFlags, env: NodeJS.ProcessEnv = process.env): Promise<ConnectedServices> {
  if (flags.aws && flags.dataDir !== undefined) throw new UsageError('--aws and --data-dir exclude each other');
  const namedLocal = flags.dataDir !== undefined || Boolean(env.MODELGATE_DATA_DIR);
  const useAws = flags.aws || (!namedLocal && (env[KEYS.envVar] !== undefined || env[MODELS.envVar] !== undefined));
  return useAws ? connectAws(env) : connectLocal(flags.dataDir ?? localDataDir(env));
}

/** A deployed stack: default credential chain, table names from the environment. */
export function connectAws(env: NodeJS.ProcessEnv): ConnectedServices {
  const missing = [KEYS.envVar, MODELS.envVar].filter((name) => !env[name]);
  if (missing.length > 0) {
    throw new UsageError(
      `a deployed stack needs ${KEYS.envVar} and ${MODELS.envVar} (the stack outputs KeysTableName and ModelsTableName); missing: ${missing.join(', ')}`,
    );
  }
  const kms = new KMSClient({});
  const secretArn = env.PROVIDER_CREDENTIALS_SECRET_ARN;
  const credentials = secretArn ? secretsManagerCredentials(new SecretsManagerClient({}), secretArn, systemClock) : NO_CREDENTIALS;
  const upstreams = env.INFERENCE_UPSTREAMS ? upstreamsService(env.INFERENCE_UPSTREAMS, credentials) : undefined;
  // A deployed service never trusts loopback issuers.
  return withUpstreams(upstreams, services(createDynamoDbClient({}), { keys: env[KEYS.envVar]!, models: env[MODELS.envVar]!, policies: env[POLICIES.envVar] || undefined, usage: env[USAGE.envVar] || undefined }, false, {
    createKey: async (active) => {
      if (!active || active.keyRef.startsWith(LOCAL_KEY_REF_PREFIX)) {
        throw new OperationError('the deployed stack has no active KMS signing key to rotate from: deploy it first');
      }
      const { keyArn, kid, publicJwk } = await createKmsSigningKeyLike(kms, active.keyRef, 'Signs modelgate access tokens (ES256), rotated');
      return { kid, keyRef: keyArn, publicJwk };
    },
    close: () => kms.destroy(),
  }));
}

const withUpstreams = (upstreams: ConnectedServices['upstreams'], connected: ConnectedServices): ConnectedServices => ({ ...connected, upstreams });

/**
 * The upstreams of `inferenceUpstreams` (its JSON or its object), read as the inference function
 * reads its environment, with the keys and clients it calls them with.
 */
function upstreamsService(raw: unknown, credentials: ProviderCredentials): NonNullable<ConnectedServices['upstreams']> {
  let targets: Readonly<Record<string, UpstreamTarget>>;
  try {
    targets = SETTINGS.inferenceUpstreams.kind.read(raw);
  } catch (error) {
    throw new UsageError(`INFERENCE_UPSTREAMS ${(error as Error).message}`);
  }
  const settings = { inferenceUpstreams: targets, upstreamTimeoutSeconds: PROBE_TIMEOUT_SECONDS };
  return { targets, credentials, options: () => upstreamOptions(settings, { clock: systemClock, newId: randomId, credentials, providers: { region: process.env.AWS_REGION } }) };
}

/** How long a probe waits for an upstream's first byte. */
const PROBE_TIMEOUT_SECONDS = 30;

/** The local runtime: the embedded DynamoDB that `<dataDir>/runtime.json` names, checked to answer. */
export async function connectLocal(dataDir: string): Promise<ConnectedServices> {
  const file = resolve(dataDir, RUNTIME_FILE);
  let endpoint: unknown;
  let upstreams: unknown;
  try {
    ({ dynamoEndpoint: endpoint, inferenceUpstreams: upstreams } = JSON.parse(readFileSync(file, 'utf8')) as { dynamoEndpoint?: unknown; inferenceUpstreams?: unknown });
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `${file} does not exist` : `${file} is unreadable`;
    throw new OperationError(`${LOCAL_NOT_RUNNING} (${reason})`);
  }
  if (typeof endpoint !== 'string') throw new OperationError(`${LOCAL_NOT_RUNNING} (${file} names no dynamoEndpoint)`);

  const client = localDynamoDbClient(endpoint, { maxAttempts: 1 });
  try {
    await client.send(new DescribeTableCommand({ TableName: KEYS.localName }), {
      abortSignal: AbortSignal.timeout(LOCAL_PROBE_TIMEOUT_MS),
    });
  } catch (error) {
    client.destroy();
    const answered = (error as { name?: string }).name === 'ResourceNotFoundException';
    throw new OperationError(
      answered
        ? `the DynamoDB at ${endpoint} has no ${KEYS.localName} table: is it the modelgate local service?`
        : `${LOCAL_NOT_RUNNING} (nothing answers at ${endpoint}, named in ${file})`,
    );
  }
  // As the local runtime: loopback issuers are accepted unless MODELGATE_ALLOW_LOOPBACK_ISSUERS=0.
  // The rollup reads the open completions' partitions as the local service spreads them.
  const local = services(
    client,
    { keys: KEYS.localName, models: MODELS.localName, policies: POLICIES.localName, usage: USAGE.localName },
    process.env[ALLOW_LOOPBACK_ISSUERS_ENV] !== '0',
    { createKey: () => createLocalSigningKey(resolve(dataDir), new Date()) },
    LOCAL_OPEN_SHARDS,
  );
  // What the running service routes, as it published it; its keys from the file it reads them from.
  const credentials = fileCredentials(join(resolve(dataDir), PROVIDER_CREDENTIALS_FILE), systemClock);
  return { ...local, upstreams: upstreamsService(upstreams ?? {}, credentials) };
}

function services(
  client: DynamoDBClient,
  { keys: keysTable, models: modelsTable, policies: policiesTable, usage: usageTable }: { keys: string; models: string; policies?: string; usage?: string },
  allowLoopbackIssuers: boolean,
  signing: { createKey: NonNullable<ConnectedServices['signingKeys']>['createKey']; close?: () => void },
  openShards?: number,
): ConnectedServices {
  const documentClient = createDocumentClient(client);
  // A change of a limit's amount caps its ledgers where the usage table is known, as management's does.
  const accountStore = new DynamoAccountStore(documentClient, keysTable, usageTable ? { ledgersTable: usageTable } : {});
  return {
    accounts: new AccountsService({ store: accountStore }),
    catalog: new DynamoCatalogStore(documentClient, modelsTable),
    federation: policiesTable
      ? new FederationService({
          store: new DynamoFederationStore(documentClient, policiesTable),
          accounts: accountStore,
          hosts: { allowLoopback: allowLoopbackIssuers },
        })
      : undefined,
    signingKeys: { store: new DynamoSigningKeyStore(documentClient, keysTable), createKey: signing.createKey },
    copies: new CopiesAudit(documentClient, keysTable),
    usage: usageTable
      ? { rollUp: () => rollUpUsage({ organizations: () => accountStore.listOrganizations(), folder: new DynamoUsageFold(documentClient, usageTable), died: new DynamoOpenCompletions(documentClient, usageTable, openShards === undefined ? {} : { shards: openShards }), clock: systemClock }) }
      : undefined,
    close: () => {
      signing.close?.();
      client.destroy();
    },
  };
}
