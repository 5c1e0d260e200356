import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { ALL_TABLES, type TableId, type TableSchema } from '../../lambdas/aws/table-schemas';

/** A deployed table with the schema it was built from (which names its env var). */
export interface SchemaTable {
  readonly schema: TableSchema;
  readonly table: dynamodb.ITable;
}

/**
 * The DynamoDB tables, built from the same schema module the local runtime uses, so
 * keys, indexes and TTL cannot drift between the two.
 */
export class Tables extends Construct {
  private readonly byId: Readonly<Record<TableId, SchemaTable>>;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const byId: Partial<Record<TableId, SchemaTable>> = {};
    for (const schema of ALL_TABLES) {
      byId[schema.id] = { schema, table: buildTable(this, schema) };
    }
    this.byId = byId as Record<TableId, SchemaTable>;
  }

  /** The table with the given schema id. */
  get(id: TableId): SchemaTable {
    return this.byId[id];
  }

  /** Every table, in schema order. */
  get all(): readonly SchemaTable[] {
    return ALL_TABLES.map((schema) => this.byId[schema.id]);
  }
}

function buildTable(scope: Construct, schema: TableSchema): dynamodb.Table {
  // Construct ids are PascalCase schema ids (ModelsTable, RateCountersTable); physical
  // names are left to CloudFormation so two stages can share an account.
  const id = `${schema.id[0]!.toUpperCase()}${schema.id.slice(1)}Table`;
  const table = new dynamodb.Table(scope, id, {
    partitionKey: { name: schema.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: schema.sortKey ? { name: schema.sortKey, type: dynamodb.AttributeType.STRING } : undefined,
    // Traffic is spiky and small; on-demand costs nothing at rest.
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: schema.timeToLiveAttribute,
    // Configuration and secrets (organizations, keys, policies, catalog) must survive a
    // bad write and a stack deletion; rate counters are disposable.
    pointInTimeRecoverySpecification: schema.holdsConfiguration ? { pointInTimeRecoveryEnabled: true } : undefined,
    removalPolicy: schema.holdsConfiguration ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    ...(schema.holdsContent ? { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: contentKey(scope, id) } : {}),
  });
  if (!schema.holdsConfiguration) {
    Validations.of(table).acknowledge({
      id: 'AwsSolutions-DDB3',
      reason: `${schema.id} ${schema.noRecoveryReason ?? 'holds nothing worth restoring'}`,
    });
  }
  for (const index of schema.globalIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
    });
  }
  return table;
}

/** The key a table of callers' content is encrypted with: the deployment's own, rotated yearly, destroyed with the table. */
function contentKey(scope: Construct, tableId: string): kms.Key {
  return new kms.Key(scope, `${tableId}Key`, {
    description: `Encrypts ${tableId} at rest`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.DESTROY,
  });
}
