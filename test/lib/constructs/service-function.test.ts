import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { TABLE_SCHEMAS } from '../../../lambdas/store/table-schemas';
import { ServiceFunction } from '../../../lib/constructs/service-function';
import type { SchemaTable } from '../../../lib/constructs/tables';
import { functionActions } from '../template-helpers';

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
  it('defaults to Node.js 22 on arm64, 256 MB, 10 s, tracing, source maps and the stage', () => {
    const { stack } = arrange();
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 256,
      Timeout: 10,
      Handler: 'index.handler',
      TracingConfig: { Mode: 'Active' },
      Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps', STAGE: 'v9' } },
    });
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
});
