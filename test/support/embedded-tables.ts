import { AccountsService } from '../../lambdas/accounts/accounts-service';
import { DynamoAccountStore } from '../../lambdas/aws/dynamo-account-store';
import { createDocumentClient } from '../../lambdas/aws/dynamo-client';
import { TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import type { EmbeddedDynamoDb } from '../../local/embedded-dynamodb';
import { createTables } from '../../local/tables';
import { startTestDynamoDb } from './dynamodb-local';
import { FixedClock } from './fixed-clock';

/** A running test DynamoDB with the service's tables and a document client over it. */
export type EmbeddedTables = EmbeddedDynamoDb & { documentClient: ReturnType<typeof createDocumentClient> };

/** The test DynamoDB (./dynamodb-local.ts) with the service's tables, for store adapter tests. */
export async function startEmbeddedTables(): Promise<EmbeddedTables> {
  const dynamo = await startTestDynamoDb();
  await createTables(dynamo.client);
  return { ...dynamo, documentClient: createDocumentClient(dynamo.client) };
}

/** What {@link useAccountStoreTables} gives a test file. */
export interface AccountStoreTables {
  /** Set before the tests run. */
  tables: EmbeddedTables;
  /** Over the keys table; set before the tests run. */
  store: DynamoAccountStore;
  /** Over `store`, with `clock` and ids `id-1`, `id-2`, ...; set before the tests run. */
  service: AccountsService;
  clock: FixedClock;
}

/**
 * A {@link DynamoAccountStore} and an {@link AccountsService} over {@link startEmbeddedTables},
 * started before the tests of the enclosing `describe` and stopped after them.
 */
export function useAccountStoreTables(): AccountStoreTables {
  const fixture = { clock: new FixedClock() } as AccountStoreTables;
  let counter = 0;
  beforeAll(async () => {
    fixture.tables = await startEmbeddedTables();
    fixture.store = new DynamoAccountStore(fixture.tables.documentClient, TABLE_SCHEMAS.keys.localName);
    fixture.service = new AccountsService({ store: fixture.store, clock: fixture.clock, newId: () => `id-${++counter}` });
  });
  afterAll(async () => {
    await fixture.tables.stop();
  });
  return fixture;
}
