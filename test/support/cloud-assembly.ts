import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { PATH_METADATA_ENABLE_CONTEXT } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildModelgateApp } from '../../lib/app';
import { Modelgate, type ModelgateProps } from '../../lib/modelgate';
import { FEATURE_FLAGS, cdkJsonContext } from '../lib/template-helpers';

/** The account and region the bundle suite synthesizes for, as the CLI resolves them. */
export const SYNTH_ENV = { account: '123456789012', region: 'us-east-1' } as const;

export type TemplateValue = unknown;

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
  readonly DependsOn?: string[];
}

export interface StackTemplate {
  readonly Resources: Record<string, TemplateResource>;
  readonly Outputs?: Record<string, { Value: TemplateValue }>;
}

/** A function of the template with the folder its `Code` names in the cloud assembly. */
export interface TemplateFunction {
  readonly logicalId: string;
  /** The construct id the instance gave it (`Catalog`): its construct path below the instance. */
  readonly constructId: string;
  readonly properties: Record<string, any>;
  /** The function package: the asset folder whose zip `Code.S3Key` names. */
  readonly codeDir: string;
}

export interface StackAssembly {
  readonly outdir: string;
  readonly stackName: string;
  readonly template: StackTemplate;
  readonly functions: readonly TemplateFunction[];
}

/**
 * Synthesizes the app the one way it is built (lib/app.ts), with cdk.json's context and
 * `context` over it, for the suite's account and region, into `outdir`: every function
 * bundled by esbuild as `cdk deploy` would bundle it, and construct paths in the template's
 * metadata as the CLI writes them (the IAM gate finds functions and tables by them). Returns
 * the stack as the assembly holds it.
 */
export function synthesizeModelgate(outdir: string, context: Record<string, unknown>): StackAssembly {
  const { app, stack } = buildModelgateApp({
    context: { ...cdkJsonContext(), [PATH_METADATA_ENABLE_CONTEXT]: true, ...context },
    env: SYNTH_ENV,
    outdir,
  });
  app.synth();
  return readStackAssembly(outdir, stack.stackName);
}

/** A resource's construct path, which the template's metadata holds when aws:cdk:enable-path-metadata is set. */
export const constructPathOf = (resource: unknown): string | undefined => (resource as { Metadata?: Record<string, string> }).Metadata?.['aws:cdk:path'];

/**
 * The construct path of the one modelgate instance a template holds, e.g. `Modelgate/Default`
 * (the CLI's stack) or `Platform/Gateway` (an instance in a stack of one's own): every instance
 * has its keys table at `<instance>/Tables/KeysTable`.
 */
export function onlyInstancePath(template: StackTemplate): string {
  const instances = Object.values(template.Resources)
    .map((resource) => /^(.+)\/Tables\/KeysTable\/Resource$/.exec(constructPathOf(resource) ?? '')?.[1])
    .filter((path): path is string => path !== undefined);
  if (instances.length !== 1) throw new Error(`the template holds ${instances.length} modelgate instances (${instances.join(', ')}): name the one to evaluate`);
  return instances[0]!;
}

/**
 * Synthesizes a CDK app of one's own holding one instance, as a user's app builds it: a stack
 * `Platform` for the suite's account and region with `new Modelgate(stack, 'Gateway', props)`,
 * cdk.json's feature flags but none of its modelgate settings, every function bundled, construct
 * paths in the metadata, cdk-nag's AwsSolutions pack on. Returns the stack as the assembly holds it.
 */
export function synthesizeEmbeddedModelgate(outdir: string, props: ModelgateProps): StackAssembly {
  const app = new App({ context: { ...FEATURE_FLAGS, [PATH_METADATA_ENABLE_CONTEXT]: true }, outdir });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stack = new Stack(app, 'Platform', { env: SYNTH_ENV });
  new Modelgate(stack, 'Gateway', props);
  app.synth();
  return readStackAssembly(outdir, stack.stackName);
}

/** The stack's template and function packages, from the cloud assembly alone. */
export function readStackAssembly(outdir: string, stackName: string): StackAssembly {
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
  };
  const artifact = manifest.artifacts[stackName];
  if (artifact?.type !== 'aws:cloudformation:stack') throw new Error(`the cloud assembly in ${outdir} has no stack ${stackName}`);
  const template = JSON.parse(readFileSync(join(outdir, artifact.properties!.templateFile!), 'utf8')) as StackTemplate;
  const assets = JSON.parse(readFileSync(join(outdir, `${stackName}.assets.json`), 'utf8')) as {
    files: Record<string, { source: { path: string; packaging?: string }; destinations: Record<string, { objectKey: string }> }>;
  };
  // `Code.S3Key` is the object key the asset is published under; the asset manifest names its folder.
  const folderOfObjectKey = new Map<string, string>();
  for (const asset of Object.values(assets.files)) {
    for (const destination of Object.values(asset.destinations)) folderOfObjectKey.set(destination.objectKey, join(outdir, asset.source.path));
  }
  // A function's construct id is its path below the instance: `Catalog` wherever the instance sits.
  const instance = `${onlyInstancePath(template)}/`;
  const functions = Object.entries(template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
    .map(([logicalId, resource]) => {
      const key = resource.Properties?.Code?.S3Key as string | undefined;
      const codeDir = key === undefined ? undefined : folderOfObjectKey.get(key);
      if (!codeDir) throw new Error(`${logicalId}: Code.S3Key ${String(key)} names no asset of the cloud assembly`);
      const path = constructPathOf(resource) ?? '';
      const constructId = path.startsWith(instance) ? path.slice(instance.length).replace(/\/Resource$/, '') : logicalId.replace(/[0-9A-F]{8}$/, '');
      return { logicalId, constructId, properties: resource.Properties!, codeDir };
    });
  return { outdir, stackName, template, functions };
}

/** What a resource the test deployment created answers to `Ref` and `Fn::GetAtt`. */
export interface PhysicalResource {
  readonly ref: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/**
 * Evaluates CloudFormation intrinsic functions over the template, as CloudFormation does at
 * deploy time: `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split`, the
 * pseudo parameters. Resources are what the test deployment says it created
 * ({@link TemplateResolver.created}); roles, functions, log groups, API resources and the
 * stage get their AWS-shaped names. Anything else is an error naming it, so a new dependency of
 * a function cannot resolve to a made-up value.
 */
export class TemplateResolver {
  private readonly physical = new Map<string, PhysicalResource>();
  readonly partition = 'aws';
  readonly urlSuffix = 'amazonaws.com';

  constructor(
    private readonly template: StackTemplate,
    readonly stackName: string,
    readonly env: { readonly account: string; readonly region: string } = SYNTH_ENV,
  ) {}

  /** Records what a created resource answers to `Ref` and `Fn::GetAtt`. */
  created(logicalId: string, physical: PhysicalResource): void {
    if (!this.template.Resources[logicalId]) throw new Error(`the template has no resource ${logicalId}`);
    this.physical.set(logicalId, physical);
  }

  resolve(value: TemplateValue): any {
    if (Array.isArray(value)) return value.map((item) => this.resolve(item));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    if (entries.length === 1) {
      const [name, argument] = entries[0]! as [string, any];
      switch (name) {
        case 'Ref':
          return this.ref(argument);
        case 'Fn::GetAtt':
          return this.attribute(...((typeof argument === 'string' ? argument.split('.') : argument) as [string, string]));
        case 'Fn::Join':
          return (this.resolve(argument[1]) as unknown[]).join(argument[0]);
        case 'Fn::Select':
          return (this.resolve(argument[1]) as unknown[])[Number(this.resolve(argument[0]))];
        case 'Fn::Split':
          return String(this.resolve(argument[1])).split(argument[0]);
        case 'Fn::Sub':
          return this.sub(...((typeof argument === 'string' ? [argument, {}] : argument) as [string, Record<string, unknown>]));
        default:
          if (name.startsWith('Fn::')) throw new Error(`unsupported intrinsic ${name}`);
      }
    }
    return Object.fromEntries(entries.map(([key, item]) => [key, this.resolve(item)]));
  }

  private sub(text: string, variables: Record<string, unknown>): string {
    return text.replace(/\$\{([^}!]+)\}/g, (_match, name: string) => {
      if (Object.hasOwn(variables, name)) return String(this.resolve(variables[name]));
      const [id, attribute] = name.split('.') as [string, string | undefined];
      return attribute ? this.attribute(id, attribute) : this.ref(id);
    });
  }

  private ref(logicalId: string): string {
    const pseudo: Record<string, string> = {
      'AWS::Region': this.env.region,
      'AWS::AccountId': this.env.account,
      'AWS::Partition': this.partition,
      'AWS::URLSuffix': this.urlSuffix,
      'AWS::StackName': this.stackName,
      'AWS::StackId': `arn:${this.partition}:cloudformation:${this.env.region}:${this.env.account}:stack/${this.stackName}/00000000-0000-4000-8000-000000000000`,
    };
    if (Object.hasOwn(pseudo, logicalId)) return pseudo[logicalId]!;
    return this.physicalOf(logicalId).ref;
  }

  private attribute(logicalId: string, name: string): string {
    const value = this.physicalOf(logicalId).attributes?.[name];
    if (value === undefined) throw new Error(`cannot resolve Fn::GetAtt ${logicalId}.${name}: the test deployment gives ${logicalId} no such attribute`);
    return value;
  }

  private physicalOf(logicalId: string): PhysicalResource {
    const created = this.physical.get(logicalId);
    if (created) return created;
    const resource = this.template.Resources[logicalId];
    if (!resource) throw new Error(`the template has no resource ${logicalId}`);
    const { account, region } = this.env;
    const arn = (service: string, resourcePart: string, inRegion = true) =>
      `arn:${this.partition}:${service}:${inRegion ? region : ''}:${account}:${resourcePart}`;
    switch (resource.Type) {
      case 'AWS::IAM::Role':
        return { ref: logicalId, attributes: { Arn: arn('iam', `role/${logicalId}`, false) } };
      case 'AWS::Lambda::Function':
        return { ref: logicalId, attributes: { Arn: arn('lambda', `function:${logicalId}`) } };
      case 'AWS::Logs::LogGroup':
        return { ref: logicalId, attributes: { Arn: arn('logs', `log-group:${logicalId}:*`) } };
      case 'AWS::ApiGateway::Resource':
      case 'AWS::ApiGateway::Deployment':
        return { ref: logicalId };
      case 'AWS::ApiGateway::Stage':
        return { ref: resource.Properties!.StageName as string };
      default:
        throw new Error(`cannot resolve ${logicalId} (${resource.Type}): the test deployment did not create it`);
    }
  }
}
