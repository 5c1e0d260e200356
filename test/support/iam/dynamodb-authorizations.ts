import { ALL_TABLES, type TableSchema } from '../../../lambdas/aws/table-schemas';

/** One thing IAM authorizes for a request: an action on a resource, with the request's condition keys. */
export interface Authorization {
  /** `dynamodb:PutItem`, `kms:Sign`: the IAM action. */
  readonly action: string;
  readonly resource: string;
  /** Condition keys the request sets, beside those of the principal and the resource. */
  readonly context: Readonly<Record<string, string | string[]>>;
}

type AttributeValue = Record<string, unknown>;
type Body = Record<string, any>;

/** The table ARNs the gate evaluates against: the stack's account and region, the local table name. */
export function tableArn(env: { account: string; region: string }, tableName: string): string {
  return `arn:aws:dynamodb:${env.region}:${env.account}:table/${tableName}`;
}

/**
 * What IAM authorizes for one DynamoDB request (`X-Amz-Target: DynamoDB_20120810.<operation>`
 * and its JSON body), as DynamoDB asks it: the operation's action on the table, or on
 * `<table>/index/<name>` for a Query or Scan of an index, one authorization per table of a
 * batch, and `dynamodb:LeadingKeys` set to the partition key values the request names (the
 * item's for GetItem, PutItem, UpdateItem, DeleteItem and each action of a transaction, as the
 * single-item call it is; every item's of a batch, per table; the
 * key condition's equality on the partition key of the table or index queried). A Scan names
 * no partition key, so it sets none. Tables are known by their local names (table-schemas.ts).
 */
export function dynamoDbAuthorizations(
  operation: string,
  body: Body,
  env: { account: string; region: string },
  tables: readonly TableSchema[] = ALL_TABLES,
): Authorization[] {
  const action = `dynamodb:${operation}`;
  const schemaOf = (tableName: string) => tables.find((table) => table.localName === tableName);
  const on = (tableName: string, leadingKeys: string[] | undefined, indexName?: string): Authorization => ({
    action,
    resource: `${tableArn(env, tableName)}${indexName ? `/index/${indexName}` : ''}`,
    context: leadingKeys ? { 'dynamodb:LeadingKeys': [...new Set(leadingKeys)] } : {},
  });
  const partitionValue = (tableName: string, key: Body | undefined): string[] => {
    const schema = schemaOf(tableName);
    const value = schema && key ? scalar(key[schema.partitionKey]) : undefined;
    return value === undefined ? [] : [value];
  };

  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
      return [on(body.TableName, partitionValue(body.TableName, body.Key))];
    case 'PutItem':
      return [on(body.TableName, partitionValue(body.TableName, body.Item))];
    case 'Query': {
      const schema = schemaOf(body.TableName);
      const index = body.IndexName ? schema?.globalIndexes.find((candidate) => candidate.indexName === body.IndexName) : undefined;
      const partitionKey = index?.partitionKey ?? schema?.partitionKey;
      const value = partitionKey === undefined ? undefined : queriedPartition(body, partitionKey);
      return [on(body.TableName, value === undefined ? [] : [value], body.IndexName)];
    }
    case 'Scan':
      return [on(body.TableName, undefined, body.IndexName)];
    case 'BatchGetItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, { Keys?: Body[] }>).map(([tableName, part]) =>
        on(tableName, (part.Keys ?? []).flatMap((key) => partitionValue(tableName, key))),
      );
    case 'BatchWriteItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: Body }; DeleteRequest?: { Key: Body } }[]>).map(
        ([tableName, writes]) => on(tableName, writes.flatMap((write) => partitionValue(tableName, write.PutRequest?.Item ?? write.DeleteRequest?.Key))),
      );
    case 'TransactWriteItems':
    case 'TransactGetItems':
      // IAM authorizes each action of a transaction as the single-item call it is.
      return ((body.TransactItems ?? []) as Record<string, Body>[]).map((member) => {
        const [kind, part] = Object.entries(member)[0] ?? [];
        const tableName = part?.TableName as string;
        return {
          ...on(tableName, partitionValue(tableName, part?.Item ?? part?.Key)),
          action: `dynamodb:${TRANSACTION_ACTIONS[kind ?? ''] ?? kind}`,
        };
      });
    case 'ListTables':
      return [{ action, resource: `arn:aws:dynamodb:${env.region}:${env.account}:table/*`, context: {} }];
    default:
      // DescribeTable, CreateTable and the rest name their table and no item.
      return [on(body.TableName, undefined)];
  }
}

/** The IAM action of each kind of transaction member. */
const TRANSACTION_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

/** The string form of a key attribute value: key attributes are S, N or B. */
function scalar(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const typed = value as AttributeValue;
  for (const type of ['S', 'N', 'B']) if (typeof typed[type] === 'string') return typed[type] as string;
  return undefined;
}

/**
 * The partition key value a Query names: the equality on `partitionKey` in its
 * KeyConditionExpression (names and values through their placeholders), or its legacy
 * KeyConditions `EQ`.
 */
function queriedPartition(body: Body, partitionKey: string): string | undefined {
  if (typeof body.KeyConditionExpression === 'string') {
    const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const values = (body.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
    const nameOf = (token: string) => (token.startsWith('#') ? names[token] : token);
    // The partition key condition is one `name = :value` term of the AND-ed key condition.
    for (const term of body.KeyConditionExpression.split(/\s+AND\s+/i)) {
      const match = /^\s*\(?\s*([:#\w.]+)\s*=\s*([:#\w.]+)\s*\)?\s*$/.exec(term);
      if (!match) continue;
      const [left, right] = [match[1]!, match[2]!];
      if (nameOf(left) === partitionKey && right.startsWith(':')) return scalar(values[right]);
      if (nameOf(right) === partitionKey && left.startsWith(':')) return scalar(values[left]);
    }
    return undefined;
  }
  const condition = (body.KeyConditions ?? {})[partitionKey] as { ComparisonOperator?: string; AttributeValueList?: unknown[] } | undefined;
  return condition?.ComparisonOperator === 'EQ' ? scalar(condition.AttributeValueList?.[0]) : undefined;
}
