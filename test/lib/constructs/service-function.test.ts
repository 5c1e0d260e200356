import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { TABLE_SCHEMAS } from '../../../lambdas/aws/table-schemas';
import { ServiceFunction } from '../../../lib/constructs/service-function';
import type { SchemaTable } from '../../../lib/constructs/tables';
import { functionActions, functionStatements, newestNodeRuntime } from '../template-helpers';


const ENTRY = path.join(__dirname, '..', 'fixtures', 'handler.ts');
const WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

function arrange(): { stack: Stack; fn: ServiceFunction; keys: SchemaTable } {
  // Bundling is skipped: these tests pin construct defaults, not bundles.
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test');
  const fn = new ServiceFunction(stack, 'Subject', { entry: ENTRY, description: 'test', stageName: 'v9' });
  const table = new dynamodb.Table(stack, 'Keys', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
  });
  return { stack, fn, keys: { schema: TABLE_SCHEMAS.keys, table } };
}

describe('ServiceFunction', () => {
  it('defaults to the newest Node.js runtime on arm64, 256 MB, 10 s, tracing, source maps and the stage', () => {
    const { stack } = arrange();
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::Function', {
      Runtime: newestNodeRuntime(),
      Architectures: ['arm64'],
      MemorySize: 256,
      Timeout: 10,
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps', STAGE: 'v9', LOG_LEVEL: 'INFO', POWERTOOLS_TRACE_ENABLED: 'true' } },
    });
  });

  it('starts from an empty role: no managed policy, logs to its own group only, X-Ray in a policy of its own', () => {
    const template = Template.fromStack(arrange().stack);
    const roles = Object.values(template.findResources('AWS::IAM::Role'));
    expect(roles).toHaveLength(1);
    expect(roles[0]!.Properties.ManagedPolicyArns).toBeUndefined();
    const statements = functionStatements(template, 'Subject');
    expect(statements.filter((s) => s.Action.some((a) => a.startsWith('logs:')))).toEqual([
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: [{ 'Fn::GetAtt': [expect.stringMatching(/^SubjectLogs/), 'Arn'] }],
      },
    ]);
    expect(statements.filter((s) => s.Resource.includes('*'))).toEqual([
      { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: ['*'] },
    ]);
  });

  it('writes to its own log group with a month of retention', () => {
    const template = Template.fromStack(arrange().stack);
    template.hasResource('AWS::Logs::LogGroup', { Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Delete' });
    template.hasResourceProperties('AWS::Lambda::Function', {
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp('^SubjectLogs') } },
    });
  });

  it('bindTable read sets the env var and grants reads only', () => {
    const { stack, fn, keys } = arrange();
    fn.bindTable(keys, 'read');
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ KEYS_TABLE: { Ref: Match.stringLikeRegexp('^Keys') } }) },
    });
    const actions = functionActions(template, 'Subject');
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    for (const write of WRITES) expect(actions).not.toContain(write);
  });

  it('bindTable readWrite sets the env var and grants reads and writes', () => {
    const { stack, fn, keys } = arrange();
    fn.bindTable(keys, 'readWrite');
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ KEYS_TABLE: { Ref: Match.stringLikeRegexp('^Keys') } }) },
    });
    expect(functionActions(template, 'Subject')).toEqual(expect.arrayContaining(['dynamodb:GetItem', ...WRITES]));
  });

  it('grants the table and the indexes its schema names, never index/*', () => {
    const { stack, fn, keys } = arrange();
    fn.bindTable(keys, 'read');
    const [statement] = functionStatements(Template.fromStack(stack), 'Subject').filter((s) => s.Action.includes('dynamodb:Query'));
    expect(JSON.stringify(statement!.Resource)).toContain('/index/byOrganization');
    expect(JSON.stringify(statement!.Resource)).not.toContain('index/*');
  });

  it("keeps its grants in its role's own policy: no policy resource beside the role (one resource fewer a function)", () => {
    const { stack, fn, keys } = arrange();
    fn.bindTable(keys, 'readWrite');
    const template = Template.fromStack(stack);
    const roleId = Object.keys(template.findResources('AWS::IAM::Role'))[0]!;
    const naming = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId));
    // The shared tracing policy aside.
    expect(naming.map((p) => JSON.stringify(p.Properties.PolicyDocument))).toEqual([expect.stringContaining('xray:PutTraceSegments')]);
    expect(functionStatements(template, 'Subject').some((statement) => statement.Action.includes('dynamodb:PutItem'))).toBe(true);
  });

  it('bindTable with partition keys limits every action to those item collections (dynamodb:LeadingKeys)', () => {
    const { stack, fn, keys } = arrange();
    fn.bindTable(keys, 'read', { partitionKeys: ['SIGNING_KEY'] });
    const dynamo = functionStatements(Template.fromStack(stack), 'Subject').filter((s) => s.Action.some((a) => a.startsWith('dynamodb:')));
    expect(dynamo).toHaveLength(1);
    expect(dynamo[0]!.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['SIGNING_KEY'] } });
    // A Scan has no leading key to check, so it must not be granted at all.
    expect([dynamo[0]!.Action].flat().sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:Query']);
  });
});
