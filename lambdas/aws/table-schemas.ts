/**
 * The DynamoDB tables, described once. The CDK stack creates them from these schemas and
 * the local runtime creates the same tables in the embedded DynamoDB.
 *
 * Every key attribute is a string. Items use generic `pk`/`sk` keys, one item per fact.
 */
export type TableId = 'models' | 'policies' | 'keys' | 'rateCounters' | 'usage' | 'responses';

/** A global secondary index: its name and key attributes. */
export interface GlobalIndexSchema {
  readonly indexName: string;
  readonly partitionKey: string;
  readonly sortKey: string;
}

/** One table as the stack and the local runtime create it. */
export interface TableSchema {
  readonly id: TableId;
  /** Environment variable that carries the physical table name to the functions. */
  readonly envVar: string;
  /** Name of the table in the local runtime. */
  readonly localName: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly globalIndexes: readonly GlobalIndexSchema[];
  /** Epoch-seconds attribute after which DynamoDB may delete the item. */
  readonly timeToLiveAttribute?: string;
  /** Configuration and secrets: point-in-time recovery and retained on stack deletion. */
  readonly holdsConfiguration: boolean;
  /** Callers' content (prompts and answers): encrypted at rest with the deployment's own KMS key, which it can audit and revoke. */
  readonly holdsContent?: boolean;
  /** Why a table that is not configuration has no point-in-time recovery. */
  readonly noRecoveryReason?: string;
}

/** The secondary index (`gsi1pk` / `gsi1sk`) of the keys, policies and usage tables: items listed by organization. */
export const BY_ORGANIZATION_INDEX = 'byOrganization';

/** The partition-key prefix of seen DPoP proofs in the rate-counters table (lambdas/aws/dynamo-proof-replay-store.ts). */
export const PROOF_REPLAY_PREFIX = 'DPOP#';

/**
 * Partition key of the signing-key records in the keys table: one item collection, so IAM
 * can limit the JWKS function to it (`dynamodb:LeadingKeys`).
 */
export const SIGNING_KEY_PARTITION = 'SIGNING_KEY';

const byOrganization: GlobalIndexSchema = {
  indexName: BY_ORGANIZATION_INDEX,
  partitionKey: 'gsi1pk',
  sortKey: 'gsi1sk',
};

/** Every table's schema, by id. */
export const TABLE_SCHEMAS: Readonly<Record<TableId, TableSchema>> = {
  models: {
    id: 'models',
    envVar: 'MODELS_TABLE',
    localName: 'modelgate-models',
    partitionKey: 'pk',
    sortKey: 'sk',
    globalIndexes: [],
    holdsConfiguration: true,
  },
  policies: {
    id: 'policies',
    envVar: 'POLICIES_TABLE',
    localName: 'modelgate-policies',
    partitionKey: 'pk',
    sortKey: 'sk',
    globalIndexes: [byOrganization],
    // Exchange events (kept 30 days) and seen subject-token `jti` values expire; issuers and
    // policies carry no `expiresAt` and stay.
    timeToLiveAttribute: 'expiresAt',
    holdsConfiguration: true,
  },
  keys: {
    id: 'keys',
    envVar: 'KEYS_TABLE',
    localName: 'modelgate-keys',
    partitionKey: 'pk',
    sortKey: 'sk',
    globalIndexes: [byOrganization],
    holdsConfiguration: true,
  },
  rateCounters: {
    id: 'rateCounters',
    envVar: 'RATE_COUNTERS_TABLE',
    localName: 'modelgate-rate-counters',
    partitionKey: 'pk',
    globalIndexes: [],
    timeToLiveAttribute: 'expiresAt',
    holdsConfiguration: false,
  },
  // Usage counters (docs/reference.md#keys-and-credentials): per key, day, model and endpoint, indexed by organization and date.
  usage: {
    id: 'usage',
    envVar: 'USAGE_TABLE',
    localName: 'modelgate-usage',
    partitionKey: 'pk',
    sortKey: 'sk',
    globalIndexes: [byOrganization],
    // Spending limits' spend items expire once folded (dynamo-ledgers.ts); usage and
    // the limits' ledgers carry no `expiresAt` and stay.
    timeToLiveAttribute: 'expiresAt',
    // What callers were charged: kept like configuration.
    holdsConfiguration: true,
  },
  // Kept responses (lambdas/aws/dynamo-response-store.ts): one item each, expiring.
  responses: {
    id: 'responses',
    envVar: 'RESPONSES_TABLE',
    localName: 'modelgate-responses',
    partitionKey: 'pk',
    globalIndexes: [],
    timeToLiveAttribute: 'expiresAt',
    holdsConfiguration: false,
    holdsContent: true,
    noRecoveryReason: 'holds conversations callers may delete and that expire; a restore would bring deleted ones back',
  },
};

/** Every table's schema, in one list. */
export const ALL_TABLES: readonly TableSchema[] = Object.values(TABLE_SCHEMAS);
