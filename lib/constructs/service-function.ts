import * as path from 'node:path';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, type BundlingOptions, type ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { LogLevel as FunctionLogLevel } from '../../lambdas/config';
import { DEFAULT_FUNCTION_MEMORY_MB } from '../function-memory';
import { instanceName } from './instance';
import type { SchemaTable } from './tables';

const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/**
 * The Lambda entry of a function: `lambdas/functions/<name>/entry.ts`, beside its handler
 * factory (`handler.ts`) and the dependencies both composition roots build (`dependencies.ts`).
 */
export function functionEntry(name: string): string {
  return path.join(PROJECT_ROOT, 'lambdas', 'functions', name, 'entry.ts');
}

/**
 * esbuild emits ESM, where `require` does not exist; CommonJS dependencies bundled into
 * the output still call it, so the bundle defines one first.
 */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/** What {@link ServiceFunction.bindTable} grants on a table: reads only, or reads and item writes. */
export type TableAccessMode = 'read' | 'readWrite';

/**
 * Tracing, stated in every function's environment beside its active X-Ray tracing: the
 * functions load the X-Ray tracer when they run in Lambda and this is not `false`
 * (`lambdas/observability/tracing.ts`). Exported so the bundle test runs with it.
 */
export const TRACING_ENVIRONMENT = { POWERTOOLS_TRACE_ENABLED: 'true' } as const;

/** The runtime of every function: the newest Node.js runtime aws-cdk-lib offers. */
export const SERVICE_RUNTIME = lambda.Runtime.NODEJS_24_X;

/**
 * How every function is bundled. Exported so the bundle test builds the artifact that ships
 * with exactly these options.
 */
export const SERVICE_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node24',
  minify: true,
  sourceMap: true,
  // Stack traces need the mappings, not a copy of the sources in the package.
  sourcesContent: false,
  // Prefer the ESM build of dual packages (jose, the AWS SDK helpers).
  mainFields: ['module', 'main'],
  banner: CREATE_REQUIRE_BANNER,
  // The Lambda runtime provides the AWS SDK v3; bundling it would only add cold-start time.
  externalModules: ['@aws-sdk/*'],
  // Bundle size tables for six functions drown the synth output; warnings still show.
  logLevel: LogLevel.WARNING,
} as const satisfies BundlingOptions;

/** The code, purpose, stage and sizing of a {@link ServiceFunction}. */
export interface ServiceFunctionProps {
  /** Entry file exporting `handler`, e.g. `functionEntry('catalog')`. */
  readonly entry: string;
  /** What the function is for; shown in the console. */
  readonly description: string;
  /** API Gateway stage name, passed as `STAGE`. */
  readonly stageName: string;
  /**
   * Level of the function's logger, passed as `LOG_LEVEL`.
   * @default 'INFO'
   */
  readonly logLevel?: FunctionLogLevel;
  /**
   * Memory in MB. CPU scales with it, so cold starts of larger bundles shrink too.
   * @default DEFAULT_FUNCTION_MEMORY_MB (256)
   */
  readonly memorySize?: number;
  /**
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
  /**
   * Concurrent executions reserved for the function, and its cap.
   * @default none: the function draws from the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Extra environment variables. Table names are added by {@link ServiceFunction.bindTable}.
   * @default {}
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * How long the function's own log group keeps events.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Shell commands run after esbuild, given the package folder: files the function reads
   * besides its code (the settings page's built assets).
   * @default none
   */
  readonly afterBundling?: (outputDir: string) => string[];
}

/**
 * `/modelgate/<instance>/<name>`: log groups of two instances in one account never collide,
 * and an operator finds an instance's logs under one prefix. Only for groups that go with the
 * stack: a retained group with a fixed name would block creating the instance again.
 */
export function instanceLogGroupName(scope: Construct, name: string): string {
  return `/modelgate/${instanceName(scope)}/${name}`;
}

function packageFiles(afterBundling: (outputDir: string) => string[]): ICommandHooks {
  return { beforeBundling: () => [], beforeInstall: () => [], afterBundling: (_inputDir, outputDir) => afterBundling(outputDir) };
}

/** Reads a function may do on a table: items and queries, never streams or table changes. */
const TABLE_READS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:ConditionCheckItem', 'dynamodb:DescribeTable'];
const TABLE_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
/**
 * The reads that name a partition key, the only ones `dynamodb:LeadingKeys` can limit: a
 * Scan carries no leading key, so `ForAllValues` over its empty set would let it read all.
 */
const KEYED_READS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'];

/** Narrows the grant {@link ServiceFunction.bindTable} makes. */
export interface BindTableOptions {
  /**
   * Restricts every granted action to items whose partition key is one of these values
   * (`dynamodb:LeadingKeys`), e.g. the JWKS function reads only `SIGNING_KEY` records.
   * Only actions that name a key are granted then: no Scan, no DescribeTable.
   * @default every item of the table
   */
  readonly partitionKeys?: readonly string[];
}

/**
 * Active tracing's two X-Ray actions, in a policy of their own, so the one wildcard they need is
 * acknowledged there and nowhere else: one policy for every function built in `scope` (an
 * instance), attached to each one's role. One rather than one per function: a stack holds at
 * most 500 resources, and two instances in one stack come close.
 */
function tracingPolicy(scope: Construct): iam.Policy {
  const existing = scope.node.tryFindChild('TracingPolicy');
  if (existing instanceof iam.Policy) return existing;
  const tracing = new iam.Policy(scope, 'TracingPolicy', {
    statements: [new iam.PolicyStatement({ actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] })],
  });
  Validations.of(tracing).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'X-Ray PutTraceSegments and PutTelemetryRecords support no resource-level permissions; this policy holds only them',
  });
  return tracing;
}

/**
 * A function's execution role whose every grant (its log group, its tables, a key, a secret)
 * lands in the role's own inline policy rather than in a policy resource beside it: the same IAM
 * (an `AWS::IAM::Policy` is an inline role policy too, under the same size limit), one resource
 * fewer per function, so two instances still fit CloudFormation's 500 resources in one stack.
 * The function, which depends on its role, is created with its permissions in place.
 */
class ExecutionRole extends iam.Role {
  private readonly inlineGrants: iam.PolicyDocument;

  constructor(scope: Construct, id: string, props: Omit<iam.RoleProps, 'inlinePolicies'>) {
    const grants = new iam.PolicyDocument();
    super(scope, id, { ...props, inlinePolicies: { grants } });
    this.inlineGrants = grants;
  }

  override addToPrincipalPolicy(statement: iam.PolicyStatement): iam.AddToPrincipalPolicyResult {
    // Signing stays a policy of its own: the signing key's policy names the signing role,
    // and a role whose own policy named the key would make the two depend on each other.
    if (statement.actions.includes('kms:Sign')) return super.addToPrincipalPolicy(statement);
    this.inlineGrants.addStatements(statement);
    return { statementAdded: true, policyDependable: this };
  }
}

/**
 * A modelgate Lambda function: the newest Node.js runtime on arm64, minified ESM with source
 * maps, X-Ray tracing, and a log group of its own with bounded retention. Its role starts empty
 * (no AWS managed policy), may write only its own log group, and gets a table only through
 * {@link bindTable}, which sets the table-name variable and the grant in one call: a function
 * never knows a table it cannot use, nor uses one it was not told about
 * (docs/deploying.md#least-privilege).
 * @example
 * const catalog = new ServiceFunction(this, 'Catalog', { entry: functionEntry('catalog'), description: 'Per-caller model catalog', stageName: 'v1' });
 * catalog.bindTable(tables.get('models'), 'read');
 */
export class ServiceFunction extends NodejsFunction {
  /** The function's own log group; its role may write there and nowhere else. */
  readonly functionLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    // Created here rather than by Lambda on first invocation, so retention is bounded,
    // the group goes away with the stack, and the role can be limited to it.
    const functionLogs = new logs.LogGroup(scope, `${id}Logs`, {
      logGroupName: instanceLogGroupName(scope, id),
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new ExecutionRole(scope, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}: its own log group, its tables, nothing else`,
    });
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: SERVICE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULT_FUNCTION_MEMORY_MB,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      role,
      logGroup: functionLogs,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      environment: {
        ...props.environment,
        // Stack traces point at the TypeScript sources rather than the minified bundle.
        NODE_OPTIONS: '--enable-source-maps',
        STAGE: props.stageName,
        LOG_LEVEL: props.logLevel ?? 'INFO',
        ...TRACING_ENVIRONMENT,
      },
      bundling: {
        ...SERVICE_BUNDLING,
        mainFields: [...SERVICE_BUNDLING.mainFields],
        externalModules: [...SERVICE_BUNDLING.externalModules],
        ...(props.afterBundling ? { commandHooks: packageFiles(props.afterBundling) } : {}),
      },
    });
    this.functionLogs = functionLogs;
    // logs:CreateLogStream and logs:PutLogEvents on this function's log group only.
    functionLogs.grantWrite(role);

    (this.node.defaultChild as lambda.CfnFunction).tracingConfig = { mode: lambda.Tracing.ACTIVE };
    tracingPolicy(scope).attachToRole(role);
  }

  /**
   * Gives the function a table: its physical name in the schema's environment variable
   * (e.g. `KEYS_TABLE`) and the matching IAM grant, on the table and the indexes its schema
   * names (no wildcard).
   *
   * @param accessMode `read` grants only reads (GetItem, Query, Scan, BatchGetItem, ...);
   *   `readWrite` adds PutItem, UpdateItem, DeleteItem and BatchWriteItem.
   */
  bindTable(binding: SchemaTable, accessMode: TableAccessMode, options: BindTableOptions = {}): this {
    this.addEnvironment(binding.schema.envVar, binding.table.tableName);
    const tableArn = binding.table.tableArn;
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: [...(options.partitionKeys ? KEYED_READS : TABLE_READS), ...(accessMode === 'readWrite' ? TABLE_WRITES : [])],
        resources: [tableArn, ...binding.schema.globalIndexes.map((index) => `${tableArn}/index/${index.indexName}`)],
        conditions: options.partitionKeys
          ? { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...options.partitionKeys] } }
          : undefined,
      }),
    );
    // A table of callers' content is encrypted with the deployment's own key: reads decrypt, writes encrypt too; no wildcard action.
    const key = binding.table.encryptionKey;
    if (key) key.grant(this, 'kms:Decrypt', 'kms:DescribeKey', ...(accessMode === 'readWrite' ? ['kms:Encrypt', 'kms:GenerateDataKey'] : []));
    return this;
  }

  /**
   * Gives the function a table for `actions` on the items whose partition key starts with one of
   * `keyPrefixes` only (`dynamodb:LeadingKeys`), e.g. the proof replay records (`DPOP#`) in the
   * rate-counters table: its name in the schema's environment variable, and that grant alone.
   */
  bindTableItems(binding: SchemaTable, actions: readonly string[], keyPrefixes: readonly string[]): this {
    this.addEnvironment(binding.schema.envVar, binding.table.tableName);
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: [...actions],
        resources: [binding.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': keyPrefixes.map((prefix) => `${prefix}*`) } },
      }),
    );
    return this;
  }
}
