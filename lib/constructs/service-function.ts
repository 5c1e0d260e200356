import * as path from 'node:path';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { LogLevel, NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { LogLevel as FunctionLogLevel } from '../../lambdas/config';
import type { SchemaTable } from './tables';

const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Where the function entry points live: `lambdas/functions/<name>.ts`. */
export const FUNCTIONS_DIR = path.join(PROJECT_ROOT, 'lambdas', 'functions');

/**
 * esbuild emits ESM, where `require` does not exist; CommonJS dependencies bundled into
 * the output still call it, so the bundle defines one first.
 */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

export type TableAccessMode = 'read' | 'readWrite';

/** The runtime of every function. */
export const SERVICE_RUNTIME = lambda.Runtime.NODEJS_22_X;

/**
 * How every function is bundled. Exported so the bundle test builds the artifact that ships
 * with exactly these options.
 */
export const SERVICE_BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node22',
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

export interface ServiceFunctionProps {
  /** Entry file exporting `handler`, e.g. `path.join(FUNCTIONS_DIR, 'catalog.ts')`. */
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
   * @default 256
   */
  readonly memorySize?: number;
  /**
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
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
}

/**
 * A modelgate Lambda function: Node.js 22 on arm64, bundled by esbuild into minified
 * ESM with source maps, X-Ray tracing and a log group with bounded retention.
 *
 * Access to a table is granted with {@link bindTable}, which sets the table-name
 * environment variable and the IAM grant in one call, so a function can never know a
 * table it cannot use, nor use one it was not told about.
 *
 * @example
 * const catalog = new ServiceFunction(this, 'Catalog', {
 *   entry: path.join(FUNCTIONS_DIR, 'catalog.ts'),
 *   description: 'Per-caller model catalog',
 *   stageName: 'v1',
 * });
 * catalog.bindTable(tables.get('models'), 'read');
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: SERVICE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: lambda.Tracing.ACTIVE,
      // Created here rather than by Lambda on first invocation, so retention is bounded
      // and the group goes away with the stack.
      logGroup: new logs.LogGroup(scope, `${id}Logs`, {
        retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      environment: {
        ...props.environment,
        // Stack traces point at the TypeScript sources rather than the minified bundle.
        NODE_OPTIONS: '--enable-source-maps',
        STAGE: props.stageName,
        LOG_LEVEL: props.logLevel ?? 'INFO',
      },
      bundling: { ...SERVICE_BUNDLING, mainFields: [...SERVICE_BUNDLING.mainFields], externalModules: [...SERVICE_BUNDLING.externalModules] },
    });
  }

  /**
   * Gives the function a table: its physical name in the schema's environment variable
   * (e.g. `KEYS_TABLE`) and the matching IAM grant.
   *
   * @param accessMode `read` grants only reads (GetItem, Query, Scan, BatchGetItem, ...);
   *   `readWrite` adds PutItem, UpdateItem, DeleteItem and BatchWriteItem.
   */
  bindTable(binding: SchemaTable, accessMode: TableAccessMode): this {
    this.addEnvironment(binding.schema.envVar, binding.table.tableName);
    if (accessMode === 'readWrite') binding.table.grantReadWriteData(this);
    else binding.table.grantReadData(this);
    return this;
  }
}
