import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../lambdas/clock';
import { DynamoAccountStore } from '../lambdas/aws/dynamo-account-store';
import { DynamoCatalogStore } from '../lambdas/aws/dynamo-catalog-store';
import { createDocumentClient } from '../lambdas/aws/dynamo-client';
import { DynamoSigningKeyStore } from '../lambdas/aws/dynamo-signing-key-store';
import { TABLE_SCHEMAS, type TableId } from '../lambdas/aws/table-schemas';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { registerDeployedSigningKey } from '../lambdas/signing/signing-key-registry';
import { LOCAL_KEY_REF_PREFIX } from '../lambdas/wiring/signer-for-record';
import type { EmbeddedDynamoDb } from './embedded-dynamodb';
import { reconcileIndexes } from './reconcile-indexes';
import type { InterposedDynamoDb } from './runtime-options';
import { seedCatalog } from './seed';
import { LOCAL_SIGNING_KEY_FILE } from './signing-keys';
import { createTables } from './tables';

/** The local tables by id, named as the schema module names them locally. */
export const LOCAL_TABLES = Object.freeze(
  Object.fromEntries(Object.values(TABLE_SCHEMAS).map((schema) => [schema.id, schema.localName])) as Record<TableId, string>,
);

/**
 * What a deployment and an operator do before a service serves, on the operator's client: the
 * tables, repairs after an unclean stop, the catalog seed and the signing key's registration.
 * Returns the operator's account store, which creates the demo organization once the service serves.
 */
export async function prepareData(dynamo: EmbeddedDynamoDb, dataDir: string, persisted: boolean, clock: Clock, warn: (line: string) => void): Promise<DynamoAccountStore> {
  const operator = createDocumentClient(dynamo.client);
  await createTables(dynamo.client);
  if (persisted) await reconcileAfterUncleanStop(dynamo.client, warn);
  await seedCatalog(new DynamoCatalogStore(operator, LOCAL_TABLES.models));
  // The same registration path as the deploy-time registrar: a new local key becomes the
  // active signing key (a replaced key file retires the previous one), and a restart keeps a
  // key rotated in since (`signing-key rotate`) active.
  const signer = await LocalSigner.fromFile(join(dataDir, LOCAL_SIGNING_KEY_FILE));
  await registerDeployedSigningKey(
    new DynamoSigningKeyStore(operator, LOCAL_TABLES.keys),
    { kid: signer.kid, keyRef: `${LOCAL_KEY_REF_PREFIX}${LOCAL_SIGNING_KEY_FILE}`, publicJwk: signer.publicJwk },
    'created',
    clock,
  );
  return new DynamoAccountStore(operator, LOCAL_TABLES.keys);
}

/** Data kept from an earlier run may come from a process that was killed mid-write. */
async function reconcileAfterUncleanStop(client: Parameters<typeof reconcileIndexes>[0], warn: (line: string) => void): Promise<void> {
  const { restored, removed } = await reconcileIndexes(client);
  if (restored + removed > 0) {
    warn(`local data: repaired the listing index after an unclean stop (${restored} entries restored, ${removed} without their item removed)`);
  }
}

/** Stops the embedded DynamoDB, what stands in front of it, and the functions' clients of it. */
export async function stopDynamoDb(dynamo: EmbeddedDynamoDb, functionClients: readonly DynamoDBClient[], interposed: InterposedDynamoDb | undefined): Promise<void> {
  for (const client of functionClients) client.destroy();
  await interposed?.stop();
  await dynamo.stop();
}
