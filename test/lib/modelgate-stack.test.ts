import { App, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../lambdas/signing/registration-properties';
import { ALL_TABLES, TABLE_SCHEMAS } from '../../lambdas/aws/table-schemas';
import { API_BASE_PATH } from '../../lambdas/routes';
import { ModelgateStack } from '../../lib/modelgate-stack';
import { readSettingsFromContext } from '../../lib/settings';
import { FUNCTION_PREFIX, tableLogicalId } from './default-stack';
import { cdkJsonContext, functionActions, functionLogicalId, functionStatements, logicalIdOf, normalizedTemplate, resourcesOfType, roleLogicalIdOf, rolesAllowed, synthModelgate } from './template-helpers';

let template: Template;
let synthesized: ReturnType<typeof synthModelgate>;

beforeAll(() => {
  synthesized = synthModelgate();
  ({ template } = synthesized);
});

describe('snapshot', () => {
  it('matches the committed template, asset hashes aside', () => {
    expect(normalizedTemplate(template)).toMatchSnapshot();
  });

  it('holds no absolute path, so it matches in a clone at another path', () => {
    const json = JSON.stringify(normalizedTemplate(template));
    expect(json).not.toContain(process.cwd());
    expect(json).not.toMatch(/"\/(work|home|tmp|Users)\//);
  });
});

describe('signing key', () => {
  it('is one ECC_NIST_P256 SIGN_VERIFY key, retained on deletion, never rotated by KMS', () => {
    // The other key encrypts the kept responses' table (its own test below).
    expect(Object.values(template.findResources('AWS::KMS::Key', { Properties: { KeyUsage: 'SIGN_VERIFY' } }))).toHaveLength(1);
    template.hasResource('AWS::KMS::Key', {
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', EnableKeyRotation: false },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/Modelgate/access-token-signing' });
  });

  it("encrypts the kept responses with the deployment's own rotated key, which only the inference function may use, through DynamoDB", () => {
    const [keyId, ...others] = Object.keys(template.findResources('AWS::KMS::Key', { Properties: { EnableKeyRotation: true } }));
    expect(others).toEqual([]);
    template.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } } });
    expect([...rolesAllowed(template, 'kms:Decrypt'), ...rolesAllowed(template, 'kms:Encrypt')]).toEqual(Array(2).fill(roleLogicalIdOf(template, FUNCTION_PREFIX.inference)));
    const granted = functionStatements(template, FUNCTION_PREFIX.inference).filter((statement) => JSON.stringify(statement.Resource).includes(`"${keyId}"`));
    expect(granted.flatMap((statement) => statement.Action).sort()).toEqual(['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey']);
  });

  it("lets only the token exchange function sign: with this key, and with rotated keys carrying the stack's signing tag", () => {
    const tokenExchangeRole = roleLogicalIdOf(template, FUNCTION_PREFIX.tokenExchange);
    expect(rolesAllowed(template, 'kms:Sign')).toEqual([tokenExchangeRole]);
    const keyId = logicalIdOf(template, 'AWS::KMS::Key', 'SigningKey');
    const signing = functionStatements(template, FUNCTION_PREFIX.tokenExchange).filter((s) => s.Action.includes('kms:Sign'));
    expect(signing).toHaveLength(2);
    expect(signing).toEqual(expect.arrayContaining([
      { Effect: 'Allow', Action: ['kms:Sign'], Resource: [{ 'Fn::GetAtt': [keyId, 'Arn'] }] },
      {
        Effect: 'Allow',
        Action: ['kms:Sign'],
        Resource: [
          { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':kms:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':key/*']] },
        ],
        Condition: { StringEquals: { 'aws:ResourceTag/modelgate:access-token-signing': 'Modelgate' } },
      },
    ]));
    template.hasResourceProperties('AWS::KMS::Key', { Tags: [{ Key: 'modelgate:access-token-signing', Value: 'Modelgate' }] });
  });

  it('denies kms:Sign in the key policy to every principal but the token exchange role; the account root administers', () => {
    const key = resourcesOfType(template, 'AWS::KMS::Key')[logicalIdOf(template, 'AWS::KMS::Key', 'SigningKey')]!;
    const statements = key.Properties?.KeyPolicy.Statement as Record<string, any>[];
    expect(statements).toHaveLength(2);
    expect(statements[0]).toMatchObject({ Effect: 'Allow', Action: 'kms:*', Resource: '*' });
    expect(JSON.stringify(statements[0]!.Principal)).toContain(':root');
    expect(statements[1]).toEqual({
      Sid: 'OnlyTheTokenExchangeSigns',
      Effect: 'Deny',
      Action: 'kms:Sign',
      Principal: { AWS: '*' },
      Resource: '*',
      Condition: { ArnNotEquals: { 'aws:PrincipalArn': { 'Fn::GetAtt': [roleLogicalIdOf(template, FUNCTION_PREFIX.tokenExchange), 'Arn'] } } },
    });
  });

  it('lets only the registrar read the public key', () => {
    expect(rolesAllowed(template, 'kms:GetPublicKey')).toEqual([
      roleLogicalIdOf(template, FUNCTION_PREFIX.signingKeyRegistrar),
    ]);
  });

  it('gives the JWKS function no KMS action at all', () => {
    expect(functionActions(template, FUNCTION_PREFIX.jwks).filter((a) => a.toLowerCase().startsWith('kms:'))).toEqual([]);
    expect(functionActions(template, FUNCTION_PREFIX.jwks)).not.toContain('*');
  });

  it('registers the public key through a custom resource keyed on the key ARN', () => {
    const keyId = logicalIdOf(template, 'AWS::KMS::Key', 'SigningKey');
    template.hasResource('Custom::SigningKeyRegistration', {
      Properties: {
        ServiceToken: { 'Fn::GetAtt': [Match.stringLikeRegexp('^SigningKeyRegistrationProvider'), 'Arn'] },
        // The name the registrar reads (test/lambdas/functions/signing-key-registrar/handler.test.ts runs it with these properties).
        [SIGNING_KEY_REGISTRATION_PROPERTIES.signingKeyArn]: { 'Fn::GetAtt': [keyId, 'Arn'] },
      },
      DependsOn: Match.arrayWith([functionLogicalId(template, FUNCTION_PREFIX.signingKeyRegistrar)]),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          USER_ON_EVENT_FUNCTION_ARN: {
            'Fn::GetAtt': [functionLogicalId(template, FUNCTION_PREFIX.signingKeyRegistrar), 'Arn'],
          },
        }),
      },
    });
  });
});

describe('provider credentials', () => {
  it('live in one retained secret that only the inference function may read', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    const secretId = logicalIdOf(template, 'AWS::SecretsManager::Secret', 'ProviderCredentialsSecret');
    template.hasResource('AWS::SecretsManager::Secret', { Properties: { SecretString: '{}' }, DeletionPolicy: 'Retain' });
    expect(rolesAllowed(template, 'secretsmanager:GetSecretValue')).toEqual([roleLogicalIdOf(template, FUNCTION_PREFIX.inference)]);
    const reads = functionStatements(template, FUNCTION_PREFIX.inference).filter((s) => s.Action.includes('secretsmanager:GetSecretValue'));
    expect(reads).toEqual([
      { Effect: 'Allow', Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'], Resource: [{ Ref: secretId }] },
    ]);
  });
});

describe('tables', () => {
  it('creates exactly the tables of the schema module, on demand', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', ALL_TABLES.length);
    for (const table of Object.values(resourcesOfType(template, 'AWS::DynamoDB::Table'))) {
      expect(table.Properties?.BillingMode).toBe('PAY_PER_REQUEST');
    }
  });

  it.each(ALL_TABLES.map((schema) => [schema.id, schema] as const))('%s has the schema keys and indexes', (id, schema) => {
    const table = resourcesOfType(template, 'AWS::DynamoDB::Table')[tableLogicalId(template, id)]!;
    expect(table.Properties?.KeySchema).toEqual([
      { AttributeName: schema.partitionKey, KeyType: 'HASH' },
      ...(schema.sortKey ? [{ AttributeName: schema.sortKey, KeyType: 'RANGE' }] : []),
    ]);
    for (const definition of table.Properties?.AttributeDefinitions as { AttributeType: string }[]) {
      expect(definition.AttributeType).toBe('S');
    }
    expect((table.Properties?.GlobalSecondaryIndexes ?? []).map((i: { IndexName: string }) => i.IndexName)).toEqual(
      schema.globalIndexes.map((i) => i.indexName),
    );
  });

  it('expires rate counters on the expiresAt attribute and deletes them with the stack', () => {
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({
        KeySchema: [{ AttributeName: TABLE_SCHEMAS.rateCounters.partitionKey, KeyType: 'HASH' }],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: Match.absent(),
      }),
      DeletionPolicy: 'Delete',
    });
    const rateCounters = resourcesOfType(template, 'AWS::DynamoDB::Table')[tableLogicalId(template, 'rateCounters')]!;
    expect(rateCounters.Properties?.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
  });

  it.each(['models', 'policies', 'keys'] as const)('%s has point-in-time recovery and is retained', (id) => {
    const table = template.toJSON().Resources[tableLogicalId(template, id)];
    expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no finding that is neither fixed nor acknowledged (the synth above would have failed)', () => {
    const report = new AwsSolutionsChecks(synthesized.app).validateScope(synthesized.app);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
  });

  it('acknowledges exactly these findings, each with a written reason next to its resource', () => {
    const acknowledged: [string, string][] = [];
    for (const construct of synthesized.stack.node.findAll()) {
      for (const entry of construct.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)) {
        for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
          expect(reason.length).toBeGreaterThan(40);
          acknowledged.push([construct.node.path.replace(`${synthesized.stack.gateway.node.path}/`, ''), id.replace(/^annotation::/i, '')]);
        }
      }
    }
    expect(acknowledged.sort()).toEqual(
      [
        ['TracingPolicy', 'AwsSolutions-IAM5[Resource::*]'],
        ['Api/RestApi', 'AwsSolutions-APIG2'],
        ['Api/RestApi', 'AwsSolutions-APIG4'],
        ['Api/RestApi', 'AwsSolutions-COG4'],
        ['Api/RestApi/CloudWatchRole', 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]'],
        ['Api/RestApi/DeploymentStage.v1', 'AwsSolutions-APIG6'],
        ['SigningKeyRegistration/Provider', 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]'],
        ['SigningKeyRegistration/Provider', `AwsSolutions-IAM5[Resource::<${functionLogicalId(template, FUNCTION_PREFIX.signingKeyRegistrar)}.Arn>:*]`],
        ['Tables/RateCountersTable', 'AwsSolutions-DDB3'],
        ['Tables/ResponsesTable', 'AwsSolutions-DDB3'],
        ['ProviderCredentials/Secret', 'AwsSolutions-SMG4'],
        ['TokenExchangeRole/DefaultPolicy', 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]'],
      ].sort(),
    );
  });

  it('fails the synth on a finding nobody acknowledged', () => {
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const stack = new ModelgateStack(app, 'Modelgate', readSettingsFromContext(app.node));
    new iam.Role(stack, 'Unreviewed', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('AdministratorAccess')],
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).toThrow(/AwsSolutions-IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy\/AdministratorAccess\]/);
  }, 120_000);
});

describe('alarms', () => {
  const alarms = () => Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
  const byMetric = (metricName: string) => alarms().filter((a) => a.Properties?.MetricName === metricName);

  it('watches the API 5XX rate: above 1% of requests for two 5-minute periods', () => {
    expect(byMetric('5XXError').map((a) => a.Properties)).toEqual([
      expect.objectContaining({
        Namespace: 'AWS/ApiGateway',
        Statistic: 'Average',
        Period: 300,
        Threshold: 0.01,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
        TreatMissingData: 'notBreaching',
        Dimensions: expect.arrayContaining([expect.objectContaining({ Name: 'Stage', Value: expect.anything() })]),
      }),
    ]);
  });

  it('alarms on the errors and throttles of every function, at the first of either: its own alarm, or one it shares', () => {
    const faults = alarms().filter((a) => (a.Properties?.Metrics as Record<string, any>[] | undefined)?.some((m) => /FILL\(errors\d*, 0\) \+ FILL\(throttles\d*, 0\)/.test(m.Expression ?? '')));
    const watching = (fn: string) => faults.filter((a) => JSON.stringify(a.Properties?.Metrics).includes(`"${fn}"`));
    // The registrar runs at deploy time only: its errors alone, on the light functions' alarm.
    const registrar = functionLogicalId(template, FUNCTION_PREFIX.signingKeyRegistrar);
    const [deployAlarm] = watching(registrar);
    expect(deployAlarm?.Properties?.AlarmName).toBe('Modelgate-OtherFunctionsFaults');
    for (const prefix of Object.values(FUNCTION_PREFIX).filter((p) => p !== FUNCTION_PREFIX.signingKeyRegistrar)) {
      const fn = functionLogicalId(template, prefix);
      const [alarm, ...more] = watching(fn);
      expect([prefix, more.length, alarm?.Properties]).toEqual([prefix, 0, expect.objectContaining({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', EvaluationPeriods: 1, TreatMissingData: 'notBreaching' })]);
      // Its errors and its throttles, each summed over 5 minutes, both in the alarm's sum.
      const metrics = (alarm!.Properties?.Metrics as Record<string, any>[]).filter((m) => m.MetricStat && JSON.stringify(m.MetricStat.Metric.Dimensions).includes(`"${fn}"`));
      expect(metrics.map((m) => [m.MetricStat.Metric.MetricName, m.MetricStat.Period, m.MetricStat.Stat]).sort()).toEqual([
        ['Errors', 300, 'Sum'],
        ['Throttles', 300, 'Sum'],
      ]);
      const sum = (alarm!.Properties?.Metrics as Record<string, any>[]).find((m) => m.Expression)!.Expression as string;
      for (const metric of metrics) expect(sum).toContain(`FILL(${metric.Id}, 0)`);
    }
    // Inference has an alarm of its own; the token exchange and management share one, the light ones another.
    expect(faults.map((a) => a.Properties?.AlarmName).sort()).toEqual(['Modelgate-InferenceFaults', 'Modelgate-OtherFunctionsFaults', 'Modelgate-TokenExchangeAndManagementFaults']);
  });

  it('alarms when the usage rollup has not run for 3 hours, missing data included', () => {
    const rollup = functionLogicalId(template, FUNCTION_PREFIX.usageRollup);
    expect(byMetric('Invocations').map((a) => a.Properties)).toEqual([
      expect.objectContaining({
        AlarmName: 'Modelgate-UsageRollupStopped',
        Namespace: 'AWS/Lambda',
        Statistic: 'Sum',
        Period: 3600,
        Threshold: 1,
        ComparisonOperator: 'LessThanThreshold',
        EvaluationPeriods: 3,
        TreatMissingData: 'breaching',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: rollup } }],
      }),
    ]);
  });

  it('alarms on a spike of requests the firewall blocked, above the learned band', () => {
    const spike = alarms().filter((a) => a.Properties?.ThresholdMetricId !== undefined);
    expect(spike).toHaveLength(1);
    const metrics = spike[0]!.Properties?.Metrics as Record<string, any>[];
    expect(spike[0]!.Properties?.ComparisonOperator).toBe('GreaterThanUpperThreshold');
    expect(metrics.find((m) => m.MetricStat)?.MetricStat.Metric).toMatchObject({
      Namespace: 'AWS/WAFV2',
      MetricName: 'BlockedRequests',
      Dimensions: expect.arrayContaining([
        { Name: 'WebACL', Value: 'Modelgate-web-acl' },
        { Name: 'Rule', Value: 'ALL' },
      ]),
    });
    expect(resourcesOfType(template, 'AWS::WAFv2::WebACL')[Object.keys(resourcesOfType(template, 'AWS::WAFv2::WebACL'))[0]!]!.Properties?.VisibilityConfig.MetricName).toBe('Modelgate-web-acl');
  });

  it('alarms on a failure of the custom resource framework function', () => {
    const framework = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).find((id) => id.startsWith('SigningKeyRegistrationProviderframeworkonEvent'))!;
    const watching = alarms().filter((a) => JSON.stringify(a.Properties?.Metrics ?? a.Properties?.Dimensions).includes(`"${framework}"`));
    expect(watching.map((a) => a.Properties?.AlarmName)).toEqual(['Modelgate-OtherFunctionsFaults']);
  });

  it('reserves no concurrency by default; with inferenceReservedConcurrency, caps the inference function alone and alarms near the cap', () => {
    const reservations = (t: Template) =>
      Object.entries(t.findResources('AWS::Lambda::Function'))
        .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
        .map(([id, fn]) => [id.replace(/[0-9A-F]{8}$/, ''), fn.Properties.ReservedConcurrentExecutions]);
    expect(reservations(template)).toEqual([]);
    expect(byMetric('ConcurrentExecutions')).toEqual([]);

    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], 'modelgate:inferenceReservedConcurrency': '400' } });
    const bulkhead = Template.fromStack(new ModelgateStack(app, 'Modelgate', readSettingsFromContext(app.node)));
    expect(reservations(bulkhead)).toEqual([['Inference', 400]]);
    const near = Object.values(bulkhead.findResources('AWS::CloudWatch::Alarm')).filter((a) => a.Properties.MetricName === 'ConcurrentExecutions');
    expect(near.map((a) => a.Properties)).toEqual([
      expect.objectContaining({
        AlarmName: 'Modelgate-InferenceNearReservedConcurrency',
        Namespace: 'AWS/Lambda',
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 320,
        EvaluationPeriods: 5,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionLogicalId(bulkhead, 'Inference') } }],
      }),
    ]);
  }, 120_000);

  it('notifies nobody by default, and the configured SNS topic on ALARM and OK', () => {
    for (const alarm of alarms()) expect(alarm.Properties?.AlarmActions).toBeUndefined();
    const topicArn = 'arn:aws:sns:eu-west-1:111122223333:modelgate-alarms';
    const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], 'modelgate:alarmTopicArn': topicArn } });
    const withTopic = Template.fromStack(new ModelgateStack(app, 'Modelgate', readSettingsFromContext(app.node)));
    const configured = Object.values(withTopic.findResources('AWS::CloudWatch::Alarm'));
    expect(configured.length).toBe(alarms().length);
    for (const alarm of configured) {
      expect(alarm.Properties.AlarmActions).toEqual([topicArn]);
      expect(alarm.Properties.OKActions).toEqual([topicArn]);
    }
  }, 120_000);
});

describe('outputs', () => {
  it('names the API URL, every table, the signing key and the web ACL', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining([
        'ApiUrl',
        'ModelsTableName',
        'PoliciesTableName',
        'KeysTableName',
        'RateCountersTableName',
        'SigningKeyId',
        'SigningKeyArn',
        'ProviderCredentialsSecretArn',
        'WebAclArn',
      ]),
    );
    expect(outputs.ProviderCredentialsSecretArn!.Value).toEqual({ Ref: logicalIdOf(template, 'AWS::SecretsManager::Secret', 'ProviderCredentialsSecret') });
    for (const id of ALL_TABLES.map((t) => t.id)) {
      const name = `${id[0]!.toUpperCase()}${id.slice(1)}TableName`;
      expect(outputs[name]!.Value).toEqual({ Ref: tableLogicalId(template, id) });
    }
    expect(JSON.stringify(outputs.ApiUrl!.Value)).toContain(`${API_BASE_PATH}"`);
    expect(JSON.stringify(outputs.SettingsPageUrl!.Value)).toContain('/settings/workload-identity"');
  });
});
