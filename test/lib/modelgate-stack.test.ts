import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../lambdas/signing/registration-properties';
import { SIGNING_KEY_PARTITION } from '../../lambdas/aws/table-schemas';
import { tracingEnabled } from '../../lambdas/observability/tracing';
import { ModelgateStack } from '../../lib/modelgate-stack';
import { FUNCTION_CONSTRUCT_IDS } from '../../local/function-principals';
import { FUNCTION_REQUIREMENTS } from '../support/function-requirements';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { API_BASE_PATH, PAGES_BASE_PATH, ROUTES, resourcePath, servedMethods } from '../../lambdas/routes';
import { ALL_TABLES, TABLE_SCHEMAS, type TableId } from '../../lambdas/aws/table-schemas';
import { readSettingsFromContext } from '../../lib/settings';
import { environmentVariableOf, type FunctionValueName } from '../../lambdas/config';
import { SETTINGS } from '../../lambdas/settings';
import {
  cdkJsonContext,
  functionActions,
  functionLogicalId,
  functionStatements,
  logicalIdOf,
  newestNodeRuntime,
  normalizedTemplate,
  resourcesOfType,
  roleLogicalIdOf,
  rolesAllowed,
  synthModelgate,
} from './template-helpers';

/** Construct id prefix of each function, as the stack names them. */
const FUNCTION_PREFIX = FUNCTION_CONSTRUCT_IDS;

const tableLogicalId = (template: Template, id: TableId): string =>
  logicalIdOf(template, 'AWS::DynamoDB::Table', `Tables${id[0]!.toUpperCase()}${id.slice(1)}Table`);

const DYNAMODB_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

const settings = readSettingsFromContext(new App({ context: cdkJsonContext() }).node);
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
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.hasResource('AWS::KMS::Key', {
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', EnableKeyRotation: false },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/Modelgate/access-token-signing' });
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

describe('functions', () => {
  it('run on the newest Node.js runtime aws-cdk-lib offers; the custom resource framework on 22 or newer', () => {
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');
    expect(Object.keys(functions).length).toBe(Object.keys(FUNCTION_PREFIX).length + 1);
    for (const prefix of Object.values(FUNCTION_PREFIX)) {
      expect([prefix, functions[functionLogicalId(template, prefix)]!.Properties?.Runtime]).toEqual([prefix, newestNodeRuntime()]);
    }
    for (const fn of Object.values(functions)) {
      const match = /^nodejs(\d+)\.x$/.exec(String(fn.Properties?.Runtime));
      expect(Number(match?.[1])).toBeGreaterThanOrEqual(22);
    }
  });

  it('grants each function exactly the tables its entry declares, and fails no cold start for want of one', () => {
    for (const { construct, requirements } of Object.values(FUNCTION_REQUIREMENTS)) {
      const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, construct)]!;
      const variables = Object.keys(fn.Properties?.Environment?.Variables ?? {});
      const passed = ALL_TABLES.filter((t) => variables.includes(t.envVar)).map((t) => t.id);
      const granted = ALL_TABLES.filter((t) =>
        functionStatements(template, construct).some(
          (s) => s.Action.some((a) => a.startsWith('dynamodb:')) && JSON.stringify(s.Resource).includes(tableLogicalId(template, t.id)),
        ),
      ).map((t) => t.id);
      const declared = ALL_TABLES.filter((t) => (requirements.tables as readonly string[]).includes(t.id)).map((t) => t.id);
      expect({ construct, passed, granted }).toEqual({ construct, passed: declared, granted: declared });
    }
  });

  it('passes each function the variable of every setting its entry declares, and of no other, so no cold start fails for want of one', () => {
    const settingVariables = [
      ...Object.values(SETTINGS).flatMap((row) => ('env' in row ? [row.env] : [])),
      ...(['pageAssetsDir', 'providerCredentialsSecretArn'] as const).map(environmentVariableOf),
    ];
    for (const { construct, requirements } of Object.values(FUNCTION_REQUIREMENTS)) {
      const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, construct)]!;
      const passed = Object.keys(fn.Properties?.Environment?.Variables ?? {}).filter((name) => settingVariables.includes(name));
      const declared = ['STAGE', 'LOG_LEVEL', ...(('settings' in requirements ? requirements.settings : []) as readonly FunctionValueName[]).map(environmentVariableOf)];
      expect({ construct, passed: passed.sort() }).toEqual({ construct, passed: declared.sort() });
    }
  });

  it('lets each function write logs to its own log group only, and attaches no AWS managed policy', () => {
    for (const prefix of Object.values(FUNCTION_PREFIX)) {
      const logs = functionStatements(template, prefix).filter((s) => s.Action.some((a) => a.startsWith('logs:')));
      expect([prefix, logs]).toEqual([
        prefix,
        [
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: [{ 'Fn::GetAtt': [logicalIdOf(template, 'AWS::Logs::LogGroup', `${prefix}Logs`), 'Arn'] }],
          },
        ],
      ]);
      const role = resourcesOfType(template, 'AWS::IAM::Role')[roleLogicalIdOf(template, prefix)]!;
      expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    }
  });

  it.each(Object.entries(FUNCTION_PREFIX))('%s is an arm64 ESM bundle with source maps and STAGE', (_id, prefix) => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      LoggingConfig: { LogGroup: { Ref: Match.stringLikeRegexp(`^${prefix}Logs`) } },
      Environment: {
        Variables: Match.objectLike({ NODE_OPTIONS: '--enable-source-maps', STAGE: settings.stageName }),
      },
    });
    expect(functionLogicalId(template, prefix)).toMatch(new RegExp(`^${prefix}`));
  });

  it('traces every function in Lambda: active X-Ray tracing, and an environment under which the tracer loads', () => {
    for (const prefix of Object.values(FUNCTION_PREFIX)) {
      const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, prefix)]!;
      const variables = Object.fromEntries(
        Object.entries(fn.Properties?.Environment?.Variables ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
      // AWS_EXECUTION_ENV is the one variable the runtime adds that the rule reads.
      const env = { ...variables, AWS_EXECUTION_ENV: `AWS_Lambda_${fn.Properties?.Runtime}` };
      expect([prefix, fn.Properties?.TracingConfig, tracingEnabled(env)]).toEqual([prefix, { Mode: 'Active' }, true]);
    }
  });

  it('gives the catalog function 512 MB, the usage rollup 1,024 MB and the others 256 MB', () => {
    const memory = Object.fromEntries(
      Object.entries(FUNCTION_PREFIX).map(([id, prefix]) => [
        id,
        resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, prefix)]!.Properties?.MemorySize,
      ]),
    );
    expect(memory).toEqual({
      catalog: 512,
      tokenExchange: 256,
      jwks: 256,
      management: 256,
      inference: 256,
      settingsPage: 256,
      signingKeyRegistrar: 256,
      usageRollup: 1024,
    });
  });

  it('passes each function exactly the tables it is granted, plus its settings', () => {
    const table = (id: TableId) => ({ [TABLE_SCHEMAS[id].envVar]: { Ref: tableLogicalId(template, id) } });
    // Tracing on: with active X-Ray tracing, the functions load the tracer in Lambda unless this says `false`.
    const base = { NODE_OPTIONS: '--enable-source-maps', STAGE: settings.stageName, LOG_LEVEL: settings.logLevel, POWERTOOLS_TRACE_ENABLED: 'true' };
    const apiBaseUrl = {
      'Fn::Join': [
        '',
        [
          'https://',
          { Ref: logicalIdOf(template, 'AWS::ApiGateway::RestApi', 'ApiRestApi') },
          '.execute-api.',
          { Ref: 'AWS::Region' },
          '.',
          { Ref: 'AWS::URLSuffix' },
          `/${settings.stageName}/api/v1`,
        ],
      ],
    };
    // The functions that take access tokens as bearer credentials verify their issuer and audience.
    const verifiesTokens = { API_BASE_URL: apiBaseUrl, ACCESS_TOKEN_MAX_LIFETIME_SECONDS: String(settings.accessTokenMaxLifetimeSeconds) };
    // Every function that checks DPoP proofs knows every hostname the stage serves.
    const servedHostnames = { REGIONAL_HOSTNAMES: JSON.stringify(settings.regionalHostnames) };
    // Every function answering under the API base path names the origins that may read its answers.
    const servesApi = { CORS_ALLOWED_ORIGINS: settings.corsAllowedOrigins.join(',') };
    const expected: Record<keyof typeof FUNCTION_PREFIX, Record<string, unknown>> = {
      catalog: {
        ...base,
        ...table('models'),
        ...table('keys'),
        ...table('usage'),
        // DPoP proof replay records only (asserted below).
        ...table('rateCounters'),
        CATALOG_CACHE_SECONDS: String(settings.catalogCacheSeconds),
        CATALOG_RELOAD_SPREAD_SECONDS: String(settings.catalogReloadSpreadSeconds),
        PUBLIC_CATALOG: '0',
        ...verifiesTokens,
        ...servedHostnames,
        ...servesApi,
      },
      tokenExchange: {
        ...base,
        ...table('policies'),
        ...table('keys'),
        ...table('rateCounters'),
        ACCESS_TOKEN_MAX_LIFETIME_SECONDS: String(settings.accessTokenMaxLifetimeSeconds),
        EXCHANGE_RATE_LIMIT: String(settings.exchangeRateLimit),
        EXCHANGE_RATE_WINDOW_SECONDS: String(settings.exchangeRateWindowSeconds),
        API_BASE_URL: apiBaseUrl,
        ...servedHostnames,
        ...servesApi,
      },
      // Publishes the keys, and the discovery documents naming the tokens' issuer.
      jwks: {
        ...base,
        ...table('keys'),
        ACCESS_TOKEN_MAX_LIFETIME_SECONDS: String(settings.accessTokenMaxLifetimeSeconds),
        API_BASE_URL: apiBaseUrl,
        ...servesApi,
      },
      management: {
        ...base,
        ...table('keys'),
        ...table('policies'),
        ...table('usage'),
        ...table('rateCounters'),
        ...verifiesTokens,
        ...servedHostnames,
        EXCHANGE_RATE_LIMIT: String(settings.exchangeRateLimit),
        EXCHANGE_RATE_WINDOW_SECONDS: String(settings.exchangeRateWindowSeconds),
        ...servesApi,
      },
      inference: {
        ...base,
        ...table('keys'),
        ...table('models'),
        ...table('usage'),
        ...table('rateCounters'),
        INFERENCE_UPSTREAMS: JSON.stringify(settings.inferenceUpstreams),
        UPSTREAM_TIMEOUT_SECONDS: String(settings.upstreamTimeoutSeconds),
        CATALOG_CACHE_SECONDS: String(settings.catalogCacheSeconds),
        CATALOG_RELOAD_SPREAD_SECONDS: String(settings.catalogReloadSpreadSeconds),
        PROVIDER_CREDENTIALS_SECRET_ARN: { Ref: logicalIdOf(template, 'AWS::SecretsManager::Secret', 'ProviderCredentialsSecret') },
        ...verifiesTokens,
        // Completions are routed within the region of the hostname called (docs/reference.md#listing-rules rule 4).
        ...servedHostnames,
        ...servesApi,
      },
      settingsPage: { ...base, PAGE_ASSETS_DIR: 'settings-page' },
      signingKeyRegistrar: { ...base, ...table('keys') },
      usageRollup: { ...base, ...table('keys'), ...table('usage') },
    };
    for (const [id, prefix] of Object.entries(FUNCTION_PREFIX)) {
      const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, prefix)]!;
      expect([id, fn.Properties?.Environment?.Variables]).toEqual([id, expected[id as keyof typeof FUNCTION_PREFIX]]);
    }
  });

  it('lets the catalog function read, and write nothing but DPoP proof replay records', () => {
    const actions = functionActions(template, FUNCTION_PREFIX.catalog);
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    const writes = functionStatements(template, FUNCTION_PREFIX.catalog).filter((s) => DYNAMODB_WRITES.some((w) => s.Action.includes(w)));
    expect(writes).toEqual([
      expect.objectContaining({
        Action: ['dynamodb:PutItem'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DPOP#*'] } },
        Resource: [{ 'Fn::GetAtt': [tableLogicalId(template, 'rateCounters'), 'Arn'] }],
      }),
    ]);
    expect(actions.filter((a) => a.includes('*') && a !== 'xray:*')).toEqual([]);
  });

  it('lets the inference function write DPoP proof replay records and nothing else of the rate-counters table', () => {
    const onCounters = functionStatements(template, FUNCTION_PREFIX.inference).filter((s) => JSON.stringify(s.Resource).includes(tableLogicalId(template, 'rateCounters')));
    expect(onCounters).toEqual([expect.objectContaining({ Action: ['dynamodb:PutItem'], Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['DPOP#*'] } } })]);
  });

  it('lets the JWKS function read the signing-key records only (dynamodb:LeadingKeys)', () => {
    // Its role's own policy and any policy naming it alike.
    const dynamo = functionStatements(template, FUNCTION_PREFIX.jwks).filter((s) => s.Action.some((a) => a.startsWith('dynamodb:')));
    expect(dynamo.length).toBeGreaterThan(0);
    for (const statement of dynamo) {
      expect(statement.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [SIGNING_KEY_PARTITION] } });
      // Scan carries no leading key, so the condition could not hold it back.
      expect([statement.Action].flat()).not.toContain('dynamodb:Scan');
    }
  });

  it('lets the JWKS function read the keys table only, and write nothing', () => {
    const statements = functionStatements(template, FUNCTION_PREFIX.jwks).filter((s) =>
      s.Action.some((a) => a.startsWith('dynamodb:')),
    );
    const keysTable = tableLogicalId(template, 'keys');
    for (const statement of statements) {
      for (const write of DYNAMODB_WRITES) expect(statement.Action).not.toContain(write);
      expect(JSON.stringify(statement.Resource)).toContain(keysTable);
      for (const other of ALL_TABLES.filter((t) => t.id !== 'keys')) {
        expect(JSON.stringify(statement.Resource)).not.toContain(tableLogicalId(template, other.id));
      }
    }
  });

  it('packages the built settings page with its function, which may use nothing but its logs and traces', () => {
    const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, FUNCTION_PREFIX.settingsPage)]!;
    const assetHash = String(fn.Properties?.Code?.S3Key).replace(/\.zip$/, '');
    const packaged = join(synthesized.app.outdir, `asset.${assetHash}`, 'settings-page');
    expect(readdirSync(packaged).sort()).toEqual(['workload-identity.css', 'workload-identity.html', 'workload-identity.js']);
    expect(readFileSync(join(packaged, 'workload-identity.html'), 'utf8')).toContain('src="workload-identity/assets/workload-identity.js"');
    expect(functionActions(template, FUNCTION_PREFIX.settingsPage).filter((a) => !/^(logs|xray):/.test(a))).toEqual([]);
  });

  it('lets only token exchange, management, inference (usage counters) and the registrar write, each to its own tables', () => {
    const writesOf = (prefix: string): string[] =>
      functionStatements(template, prefix)
        .filter((s) => s.Action.includes('dynamodb:PutItem'))
        .flatMap((s) => s.Resource)
        .map((r) => JSON.stringify(r))
        .flatMap((r) => ALL_TABLES.filter((t) => r.includes(tableLogicalId(template, t.id))).map((t) => t.id))
        .filter((id, i, all) => all.indexOf(id) === i);
    expect(Object.fromEntries(Object.entries(FUNCTION_PREFIX).map(([id, prefix]) => [id, writesOf(prefix)]))).toEqual({
      catalog: ['rateCounters'],
      tokenExchange: ['rateCounters', 'policies'],
      jwks: [],
      management: ['keys', 'policies', 'rateCounters'],
      inference: ['usage', 'rateCounters'],
      settingsPage: [],
      signingKeyRegistrar: ['keys'],
      usageRollup: ['usage'],
    });
  });

  it('runs the usage rollup every hour, retried when it fails', () => {
    const rollup = functionLogicalId(template, FUNCTION_PREFIX.usageRollup);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [rollup, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 2 } })],
    });
    template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', FunctionName: { 'Fn::GetAtt': [rollup, 'Arn'] }, Principal: 'events.amazonaws.com' });
  });
  it('lets the token exchange write only event and jti items of the policies table, never an issuer or policy', () => {
    const policiesTable = tableLogicalId(template, 'policies');
    const onPolicies = functionStatements(template, FUNCTION_PREFIX.tokenExchange).filter(
      (s) => JSON.stringify(s.Resource).includes(policiesTable) && DYNAMODB_WRITES.some((w) => s.Action.includes(w)),
    );
    expect(onPolicies).toEqual([
      expect.objectContaining({
        Action: ['dynamodb:DeleteItem', 'dynamodb:PutItem'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVENT#*', 'JTI#*'] } },
      }),
    ]);
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
  }, 60_000);
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
  }, 60_000);

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
  }, 60_000);
});

describe('API', () => {
  const resources = () => resourcesOfType(template, 'AWS::ApiGateway::Resource');

  /** The path of an API Gateway resource, walking ParentId up to the root. */
  const pathOf = (resourceId: string): string => {
    const parts: string[] = [];
    let current: unknown = { Ref: resourceId };
    while ((current as { Ref?: string }).Ref) {
      const resource = resources()[(current as { Ref: string }).Ref]!;
      parts.unshift(resource.Properties?.PathPart);
      current = resource.Properties?.ParentId;
    }
    expect(current).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^ApiRestApi/), 'RootResourceId'] });
    return `/${parts.join('/')}`;
  };

  /** The methods that reach a function: every method but the preflights' mocks. */
  const proxyMethods = () => Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter((m) => m.Properties?.Integration?.Type !== 'MOCK');

  it('has exactly one method per route, and HEAD beside each GET, each a Lambda proxy to the route function', () => {
    const methods = proxyMethods().map((m) => ({
      method: m.Properties?.HttpMethod,
      path: pathOf(m.Properties?.ResourceId.Ref),
      type: m.Properties?.Integration?.Type,
      target: JSON.stringify(m.Properties?.Integration?.Uri),
    }));
    const expected = ROUTES.flatMap((route) =>
      servedMethods([route.method]).map((method) => ({
        method,
        path: resourcePath(route),
        type: 'AWS_PROXY',
        target: expect.stringContaining(JSON.stringify({ 'Fn::GetAtt': [functionLogicalId(template, FUNCTION_PREFIX[route.function]), 'Arn'] })),
      })),
    );
    const byKey = (a: { method: string; path: string }, b: { method: string; path: string }) =>
      `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`);
    expect(methods.sort(byKey)).toEqual(expected.sort(byKey));
  });

  it('has no authorizer, so no allow decision is cached: every function authenticates each request (docs/reference.md#scopes-and-access rule 6)', () => {
    template.resourceCountIs('AWS::ApiGateway::Authorizer', 0);
    for (const method of Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))) {
      expect(method.Properties?.AuthorizationType ?? 'NONE').toBe('NONE');
    }
  });

  it('streams the responses of the inference routes only, with a 5-minute integration timeout', () => {
    const methods = proxyMethods();
    const inferenceArn = JSON.stringify({ 'Fn::GetAtt': [functionLogicalId(template, FUNCTION_PREFIX.inference), 'Arn'] });
    expect(methods.length).toBe(servedMethods(ROUTES.map((route) => route.method)).length);
    for (const method of methods) {
      const integration = method.Properties?.Integration;
      const uri = JSON.stringify(integration?.Uri);
      if (uri.includes(inferenceArn)) {
        expect(integration).toMatchObject({ ResponseTransferMode: 'STREAM', TimeoutInMillis: 300_000 });
        expect(uri).toContain('/response-streaming-invocations');
      } else {
        expect(integration?.ResponseTransferMode).toBeUndefined();
      }
    }
  });

  it('deploys one regional stage with JSON access logs, tracing and no execution logs', () => {
    template.resourceCountIs('AWS::ApiGateway::Stage', 1);
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
    const stage = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Stage'))[0]!;
    expect(stage.Properties?.StageName).toBe(settings.stageName);
    expect(stage.Properties?.TracingEnabled).toBe(true);
    expect(stage.Properties?.MethodSettings).toEqual([
      expect.objectContaining({ LoggingLevel: 'OFF', DataTraceEnabled: false, MetricsEnabled: true }),
    ]);
    const accessLog = stage.Properties?.AccessLogSetting;
    expect(JSON.stringify(accessLog.DestinationArn)).toContain(logicalIdOf(template, 'AWS::Logs::LogGroup', 'ApiAccessLogs'));
    expect(JSON.parse(accessLog.Format)).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      method: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
    });
  });

  it('lets API Gateway invoke each function through one permission, for this API only', () => {
    const permissions = Object.values(resourcesOfType(template, 'AWS::Lambda::Permission')).filter(
      (p) => p.Properties?.Principal === 'apigateway.amazonaws.com',
    );
    const routed = [...new Set(ROUTES.map((route) => route.function))];
    expect(permissions.map((p) => p.Properties?.FunctionName['Fn::GetAtt'][0]).sort()).toEqual(
      routed.map((fn) => functionLogicalId(template, FUNCTION_PREFIX[fn])).sort(),
    );
    const restApi = logicalIdOf(template, 'AWS::ApiGateway::RestApi', 'ApiRestApi');
    for (const permission of permissions) {
      expect(permission.Properties).toMatchObject({ Action: 'lambda:InvokeFunction' });
      expect(JSON.stringify(permission.Properties?.SourceArn)).toBe(
        JSON.stringify({
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':execute-api:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':', { Ref: restApi }, '/*/*/*']],
        }),
      );
    }
  });

  it("keeps every function's resource-based policy far below Lambda's 20 KB limit", () => {
    // Lambda keeps one statement per permission; its size is the JSON Lambda stores, with the
    // literals a deployment gives the intrinsics (the longest plausible ones: a 64-character
    // function name, a 24-character partition and region, CloudFormation's generated Sid).
    const LIMIT_BYTES = 20 * 1024;
    const sizes = policySizes(template);
    // The functions API Gateway invokes, and the usage rollup, which its schedule invokes.
    expect(Object.keys(sizes).sort()).toEqual([...new Set([...ROUTES.map((route) => FUNCTION_PREFIX[route.function]), FUNCTION_PREFIX.usageRollup])].sort());
    for (const [fn, bytes] of Object.entries(sizes)) {
      // Room for growth: a tenth of the limit, whatever the number of routes a function serves.
      expect([fn, bytes < LIMIT_BYTES / 10]).toEqual([fn, true]);
    }
  });

  it('answers unknown paths with 404 in the service error shape', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
      StatusCode: '404',
      ResponseTemplates: { 'application/json': '{"error":{"code":404,"message":"Not found"}}' },
    });
  });

  it("names the allowed origin on API Gateway's own answers, its default 4XX and 5XX included", () => {
    const responses = Object.values(resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse'));
    expect(responses.map((response) => response.Properties?.ResponseType).sort()).toEqual(['DEFAULT_4XX', 'DEFAULT_5XX', 'MISSING_AUTHENTICATION_TOKEN']);
    for (const response of responses) {
      expect(response.Properties?.ResponseParameters).toEqual({
        'gatewayresponse.header.Access-Control-Allow-Origin': "'*'",
        'gatewayresponse.header.Access-Control-Expose-Headers': "'X-Request-Id, X-Generation-Id, Retry-After, WWW-Authenticate, DPoP-Nonce'",
      });
    }
  });

  it('answers the preflight of every API resource in API Gateway (a mock integration), none of the settings page', () => {
    const preflights = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter((m) => m.Properties?.HttpMethod === 'OPTIONS');
    const apiResources = new Set(ROUTES.filter((route) => route.base !== PAGES_BASE_PATH).map((route) => resourcePath(route)));
    expect(preflights.map((m) => pathOf(m.Properties?.ResourceId.Ref)).sort()).toEqual([...apiResources].sort());
    for (const preflight of preflights) {
      expect(preflight.Properties?.Integration).toMatchObject({ Type: 'MOCK' });
      expect(preflight.Properties?.AuthorizationType).toBe('NONE');
    }
  });
});

describe('firewall', () => {
  const webAcl = () => Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACL'))[0]!;
  const rule = (name: string) =>
    (webAcl().Properties?.Rules as { Name: string; [key: string]: any }[]).find((r) => r.Name === name)!;

  it('is one regional web ACL that allows by default, with two rate-based rules', () => {
    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    expect(webAcl().Properties).toMatchObject({ Scope: 'REGIONAL', DefaultAction: { Allow: {} } });
    const rules = webAcl().Properties?.Rules as { Name: string; Statement: Record<string, unknown> }[];
    expect(rules.map((r) => [r.Name, Object.keys(r.Statement)])).toEqual([
      ['TokenEndpointRateLimit', ['RateBasedStatement']],
      ['GeneralRateLimit', ['RateBasedStatement']],
    ]);
  });

  it('limits token requests per address to the configured rate, on both URL forms of the endpoint', () => {
    const tokenRule = rule('TokenEndpointRateLimit');
    expect(tokenRule.Statement.RateBasedStatement).toMatchObject({
      Limit: settings.wafTokenRateLimit,
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 300,
    });
    const prefixes = tokenRule.Statement.RateBasedStatement.ScopeDownStatement.OrStatement.Statements.map(
      (s: any) => [s.ByteMatchStatement.PositionalConstraint, s.ByteMatchStatement.FieldToMatch, s.ByteMatchStatement.SearchString],
    );
    expect(prefixes).toEqual([
      ['STARTS_WITH', { UriPath: {} }, '/api/v1/oauth/token'],
      ['STARTS_WITH', { UriPath: {} }, `/${settings.stageName}/api/v1/oauth/token`],
    ]);
  });

  it('answers blocked token requests with an OAuth 429 that is not cached', () => {
    expect(rule('TokenEndpointRateLimit').Action).toEqual({
      Block: {
        CustomResponse: {
          ResponseCode: 429,
          CustomResponseBodyKey: 'oauth-rate-limited',
          ResponseHeaders: [
            { Name: 'Retry-After', Value: '60' },
            { Name: 'Cache-Control', Value: 'no-store' },
            // A page may read the block and when to retry (lambdas/http/cors.ts).
            { Name: 'Access-Control-Allow-Origin', Value: '*' },
            { Name: 'Access-Control-Expose-Headers', Value: 'X-Request-Id, X-Generation-Id, Retry-After, WWW-Authenticate, DPoP-Nonce' },
          ],
        },
      },
    });
    const body = webAcl().Properties?.CustomResponseBodies['oauth-rate-limited'];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({
      error: 'invalid_request',
      error_description: 'Too many token requests from this address; retry later',
    });
  });

  it('limits all requests per address to the general rate', () => {
    const general = rule('GeneralRateLimit');
    expect(general.Statement.RateBasedStatement).toEqual({
      Limit: settings.wafGeneralRateLimit,
      AggregateKeyType: 'IP',
      EvaluationWindowSec: 300,
    });
    expect(general.Action.Block.CustomResponse.ResponseCode).toBe(429);
    expect(JSON.parse(webAcl().Properties?.CustomResponseBodies['rate-limited'].Content)).toEqual({
      error: { code: 429, message: 'Rate limit exceeded; retry later' },
    });
  });

  it('is associated with the API stage, after the stage exists', () => {
    const stageId = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::Stage'))[0]!;
    const webAclId = Object.keys(resourcesOfType(template, 'AWS::WAFv2::WebACL'))[0]!;
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    const association = Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACLAssociation'))[0]!;
    expect(association.Properties?.WebACLArn).toEqual({ 'Fn::GetAtt': [webAclId, 'Arn'] });
    const [, parts] = association.Properties?.ResourceArn['Fn::Join'] as [string, unknown[]];
    expect(parts).toEqual(expect.arrayContaining([{ Ref: stageId }]));
    expect(parts.filter((p) => typeof p === 'string').join('')).toMatch(/:apigateway:.*::\/restapis\/.*\/stages\/$/);
    expect(association.DependsOn).toEqual(expect.arrayContaining([stageId]));
  });
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

/** Bytes of each function's resource-based policy as Lambda would store it, by function prefix. */
function policySizes(template: Template): Record<string, number> {
  const literal = (value: unknown): string => {
    if (typeof value === 'string') return value;
    const fn = value as Record<string, any>;
    if (fn['Fn::Join']) return (fn['Fn::Join'][1] as unknown[]).map(literal).join(fn['Fn::Join'][0]);
    if (fn.Ref === 'AWS::Partition') return 'aws-us-gov';
    if (fn.Ref === 'AWS::Region' || fn.Ref === 'AWS::URLSuffix') return 'ap-southeast-5-longest-x';
    if (fn.Ref === 'AWS::AccountId') return '123456789012';
    if (fn.Ref) return 'a'.repeat(10);
    if (fn['Fn::GetAtt']) return `arn:aws-us-gov:lambda:ap-southeast-5-longest-x:123456789012:function:${'f'.repeat(64)}`;
    throw new Error(`unexpected intrinsic ${JSON.stringify(value)}`);
  };
  const sizes: Record<string, number> = {};
  const prefixes = Object.values(FUNCTION_PREFIX);
  for (const [logicalId, permission] of Object.entries(resourcesOfType(template, 'AWS::Lambda::Permission'))) {
    const target = permission.Properties?.FunctionName['Fn::GetAtt'][0] as string;
    const prefix = prefixes.find((p) => target === functionLogicalId(template, p)) ?? target;
    const statement = {
      // CloudFormation's Sid: `<stack>-<logical id, up to 255>-<13 random>`.
      Sid: `Modelgate-${logicalId}-ABCDEFGHIJKLM`,
      Effect: 'Allow',
      Principal: { Service: permission.Properties?.Principal },
      Action: permission.Properties?.Action,
      Resource: literal(permission.Properties?.FunctionName),
      Condition: { ArnLike: { 'AWS:SourceArn': literal(permission.Properties?.SourceArn) } },
    };
    sizes[prefix] = (sizes[prefix] ?? JSON.stringify({ Version: '2012-10-17', Id: 'default', Statement: [] }).length) + JSON.stringify(statement).length + 1;
  }
  return sizes;
}
