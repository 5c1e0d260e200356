import { CfnResource as CdkCfnResource, type Environment } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { DEFAULT_INSTANCE_NAME, INSTANCE_CONTEXT_KEY, SettingsError } from '../../lib/settings';
import { synthModelgate, synthUserApp, validated } from './template-helpers';

/**
 * The stack a user deploys is the one the CLI builds: `cdk synth` and `cdk deploy` always
 * resolve an environment (a default region when none is configured; the account with
 * credentials), and then partition, region and account are literals in the template. An
 * acknowledgement or a name written against the environment-agnostic form passes the other
 * suites and fails the user's first command, so every environment the CLI may resolve is
 * synthesized here, with cdk-nag and CDK's own CloudFormation validation (`validated`): an
 * unacknowledged finding throws.
 *
 * Bundling is skipped: it does not depend on the environment, and the stack suite and the bundle
 * suite synthesize with it.
 */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

const ENVIRONMENTS: readonly { name: string; env?: Environment; partition?: string }[] = [
  { name: 'environment-agnostic' },
  { name: 'aws, us-east-1', env: { account: '123456789012', region: 'us-east-1' }, partition: 'aws' },
  { name: 'aws, eu-central-1', env: { account: '123456789012', region: 'eu-central-1' }, partition: 'aws' },
  { name: 'aws-cn, cn-north-1', env: { account: '123456789012', region: 'cn-north-1' }, partition: 'aws-cn' },
  { name: 'aws-us-gov, us-gov-west-1', env: { account: '123456789012', region: 'us-gov-west-1' }, partition: 'aws-us-gov' },
];

/**
 * What is synthesized in each environment: the CLI's stack as cdk.json configures it, the same
 * with a custom domain in a hosted zone (certificate, domain names, mappings, alias records), and
 * an instance embedded in a stack of its user's.
 */
const VARIANTS: readonly { variant: string; synth: (env: Environment | undefined) => Template }[] = [
  { variant: 'the CLI stack', synth: (env) => synthModelgate(NO_BUNDLING, env).template },
  {
    variant: 'the CLI stack with a custom domain',
    synth: (env) =>
      synthModelgate(
        { ...NO_BUNDLING, 'modelgate:domainName': 'api.example.com', 'modelgate:hostedZoneId': 'Z0123456789ABCDEFGHIJ', 'modelgate:hostedZoneName': 'example.com' },
        env,
      ).template,
  },
  { variant: 'an instance in a stack of its user', synth: (env) => synthUserApp([{ instance: 'Embedded', exchangeRateLimit: 30 }], { env }).template },
];

describe.each(VARIANTS)('$variant', ({ synth }) => {
  describe.each(ENVIRONMENTS)('synthesized for $name', ({ env, partition }) => {
    let template: Template;
    beforeAll(() => {
      // Throws on any cdk-nag finding that is neither fixed nor acknowledged in this environment,
      // and, where the CLI resolved one, on anything CloudFormation's validation for its region
      // faults (no deploy is environment-agnostic).
      template = env ? validated(() => synth(env)) : synth(env);
    }, 120_000);

    it('is a template CloudFormation accepts: every reference resolves, every limit holds', () => {
      expect(templateProblems(template.toJSON() as CfnTemplate)).toEqual([]);
    });

    it('names its own partition and region in every ARN it spells out, and no other', () => {
      const json = JSON.stringify(template.toJSON());
      const partitions = new Set([...json.matchAll(/arn:(aws[a-z-]*):/g)].map((m) => m[1]));
      // AWS managed policies and service principals are spelled by CDK for the stack's partition.
      if (partition) expect([...partitions]).toEqual([partition]);
      else expect([...partitions]).toEqual([]);
      if (env?.region) {
        const regions = new Set([...json.matchAll(/arn:aws[a-z-]*:[a-z0-9-]+:([a-z0-9-]*):/g)].map((m) => m[1]).filter(Boolean));
        expect([...regions]).toEqual([env.region]);
      }
    });
  });
});

it("fails the synth on a template CloudFormation's validation faults, as the variants above are synthesized", () => {
  const faulty = () => synthUserApp([], { before: (stack) => new CdkCfnResource(stack, 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } }) });
  expect(() => validated(faulty)).toThrow(/VisibilityTimeout: 'soon' is not of type 'integer'/);
  // The rest of the run synthesizes without it (jest.config.js).
  expect(faulty).not.toThrow();
});

describe('two instances in one account and region', () => {
  const env = { account: '123456789012', region: 'eu-central-1' };
  let staging: Template;
  let production: Template;
  beforeAll(() => {
    staging = synthModelgate({ ...NO_BUNDLING, [INSTANCE_CONTEXT_KEY]: 'Staging' }, env).template;
    production = synthModelgate({ ...NO_BUNDLING, [INSTANCE_CONTEXT_KEY]: 'Production' }, env).template;
  }, 120_000);

  it('are two stacks, named by modelgate:instance, the default being Modelgate', () => {
    expect(synthModelgate(NO_BUNDLING, env).stack.stackName).toBe(DEFAULT_INSTANCE_NAME);
    expect(synthModelgate({ ...NO_BUNDLING, [INSTANCE_CONTEXT_KEY]: 'Staging' }, env).stack.stackName).toBe('Staging');
  });

  it('share no physical name: alias, signing tag, log groups, alarms, web ACL metric, API name', () => {
    const stagingNames = physicalNames(staging.toJSON() as CfnTemplate);
    const productionNames = physicalNames(production.toJSON() as CfnTemplate);
    // Every kind of name the stack sets is there, so a new kind is compared too.
    expect(Object.keys(stagingNames).sort()).toEqual([
      'AWS::ApiGateway::RestApi Name',
      'AWS::CloudWatch::Alarm AlarmName',
      'AWS::KMS::Alias AliasName',
      'AWS::KMS::Key Tags',
      'AWS::Logs::LogGroup LogGroupName',
      'AWS::WAFv2::WebACL VisibilityConfig.MetricName',
    ]);
    for (const [kind, names] of Object.entries(stagingNames)) {
      const shared = names.filter((name) => productionNames[kind]?.includes(name));
      expect([kind, shared]).toEqual([kind, []]);
    }
    expect(stagingNames['AWS::KMS::Alias AliasName']).toEqual(['alias/Staging/access-token-signing']);
    expect(stagingNames['AWS::KMS::Key Tags']).toEqual(['modelgate:access-token-signing=Staging']);
    for (const name of stagingNames['AWS::Logs::LogGroup LogGroupName']!) expect(name).toMatch(/^\/modelgate\/Staging\//);
    for (const name of stagingNames['AWS::CloudWatch::Alarm AlarmName']!) expect(name).toMatch(/^Staging-/);
  });

  it("keep API Gateway's account-wide CloudWatch role when either is deleted", () => {
    // AWS::ApiGateway::Account is one setting per account and region: each instance points it at
    // its own role on deploy. Retaining role and setting on deletion means deleting one instance
    // never leaves the other's access logs pointing at a deleted role.
    for (const template of [staging, production]) {
      const json = template.toJSON() as CfnTemplate;
      const accounts = Object.values(json.Resources).filter((r) => r.Type === 'AWS::ApiGateway::Account');
      expect(accounts).toHaveLength(1);
      expect(accounts[0]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
      const roleId = (accounts[0]!.Properties!.CloudWatchRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(json.Resources[roleId]).toMatchObject({ Type: 'AWS::IAM::Role', DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    }
  });

  it('refuses an instance name CloudFormation or the names built from it would not take', () => {
    for (const bad of ['1staging', 'staging_1', 'a'.repeat(65), 'staging-', 'prod/eu']) {
      expect(() => synthModelgate({ ...NO_BUNDLING, [INSTANCE_CONTEXT_KEY]: bad }, env)).toThrow(SettingsError);
    }
    expect(() => synthModelgate({ ...NO_BUNDLING, [INSTANCE_CONTEXT_KEY]: 'prod/eu' }, env)).toThrow(
      'modelgate:instance must be a letter, then up to 63 letters, digits or "-" (not ending in "-"), got "prod/eu"',
    );
  });
});

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Condition?: string;
}
interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, unknown>;
  Parameters?: Record<string, unknown>;
  Conditions?: Record<string, unknown>;
  Mappings?: Record<string, unknown>;
  Rules?: Record<string, unknown>;
}

/** The physical names a template sets, by resource type and property, as literal strings. */
function physicalNames(template: CfnTemplate): Record<string, string[]> {
  const names: Record<string, string[]> = {};
  const add = (kind: string, value: unknown) => {
    if (typeof value === 'string') (names[kind] ??= []).push(value);
  };
  for (const resource of Object.values(template.Resources)) {
    const p = resource.Properties ?? {};
    for (const property of ['AliasName', 'LogGroupName', 'AlarmName', 'TableName', 'FunctionName', 'RoleName', 'Name', 'TopicName']) {
      if (resource.Type === 'AWS::WAFv2::WebACL' && property === 'Name') continue;
      add(`${resource.Type} ${property}`, p[property]);
    }
    if (resource.Type === 'AWS::WAFv2::WebACL') add(`${resource.Type} VisibilityConfig.MetricName`, (p.VisibilityConfig as { MetricName?: string }).MetricName);
    if (resource.Type === 'AWS::KMS::Key') {
      for (const tag of (p.Tags ?? []) as { Key: string; Value: unknown }[]) add(`${resource.Type} Tags`, `${tag.Key}=${String(tag.Value)}`);
    }
  }
  return names;
}

const PSEUDO_PARAMETERS = new Set([
  'AWS::AccountId',
  'AWS::NotificationARNs',
  'AWS::NoValue',
  'AWS::Partition',
  'AWS::Region',
  'AWS::StackId',
  'AWS::StackName',
  'AWS::URLSuffix',
]);

/**
 * What CloudFormation would refuse in a template before creating anything: a `Ref`, `Fn::GetAtt`,
 * `DependsOn` or `Condition` naming nothing, a token CDK left unresolved, a logical id it does not
 * take, and its documented quotas (1 MB body, 500 resources, 200 outputs and parameters).
 */
function templateProblems(template: CfnTemplate): string[] {
  const problems: string[] = [];
  const resources = template.Resources;
  const parameters = template.Parameters ?? {};
  const conditions = template.Conditions ?? {};
  const body = JSON.stringify(template);
  if (body.length > 1_000_000) problems.push(`template body is ${body.length} bytes, over 1 MB`);
  if (Object.keys(resources).length > 500) problems.push(`${Object.keys(resources).length} resources, over 500`);
  if (Object.keys(template.Outputs ?? {}).length > 200) problems.push('over 200 outputs');
  if (Object.keys(parameters).length > 200) problems.push('over 200 parameters');
  if (/\$\{Token\[/.test(body)) problems.push('an unresolved CDK token');
  for (const id of [...Object.keys(resources), ...Object.keys(template.Outputs ?? {})]) {
    if (!/^[A-Za-z0-9]{1,255}$/.test(id)) problems.push(`logical id ${id} is not 1 to 255 letters and digits`);
  }
  const visit = (where: string, node: unknown): void => {
    if (Array.isArray(node)) return node.forEach((item) => visit(where, item));
    if (!node || typeof node !== 'object') return;
    const entries = Object.entries(node as Record<string, unknown>);
    for (const [key, value] of entries) {
      if (key === 'Ref' && typeof value === 'string' && !resources[value] && !(value in parameters) && !PSEUDO_PARAMETERS.has(value)) {
        problems.push(`${where}: Ref ${value} names nothing`);
      }
      if (key === 'Fn::GetAtt') {
        const target = Array.isArray(value) ? value[0] : String(value).split('.')[0];
        if (typeof target === 'string' && !resources[target]) problems.push(`${where}: Fn::GetAtt ${target} names no resource`);
      }
      if (key === 'Fn::Sub' && typeof (Array.isArray(value) ? value[0] : value) === 'string') {
        const text = (Array.isArray(value) ? value[0] : value) as string;
        const variables = Array.isArray(value) ? Object.keys((value[1] ?? {}) as object) : [];
        for (const [, name] of text.matchAll(/\$\{([^!}][^}]*)\}/g)) {
          const base = name!.split('.')[0]!;
          if (!variables.includes(name!) && !resources[base] && !(base in parameters) && !PSEUDO_PARAMETERS.has(name!)) {
            problems.push(`${where}: Fn::Sub \${${name}} names nothing`);
          }
        }
      }
      visit(where, value);
    }
  };
  for (const [id, resource] of Object.entries(resources)) {
    if (!/^(AWS::[A-Za-z0-9]+::[A-Za-z0-9]+|Custom::[A-Za-z0-9_@-]{1,60})$/.test(resource.Type)) problems.push(`${id}: type ${resource.Type}`);
    for (const dependency of ([] as string[]).concat(resource.DependsOn ?? [])) {
      if (!resources[dependency]) problems.push(`${id}: DependsOn ${dependency} names no resource`);
    }
    if (resource.Condition && !(resource.Condition in conditions)) problems.push(`${id}: Condition ${resource.Condition} names nothing`);
    visit(id, resource.Properties);
  }
  for (const [id, output] of Object.entries(template.Outputs ?? {})) visit(`output ${id}`, output);
  return problems;
}
