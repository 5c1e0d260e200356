import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { ALL_TABLES, SIGNING_KEY_PARTITION, TABLE_SCHEMAS, type TableId } from '../../lambdas/aws/table-schemas';
import { environmentVariableOf, type FunctionValueName } from '../../lambdas/config';
import { tracingEnabled } from '../../lambdas/observability/tracing';
import { SETTINGS } from '../../lambdas/settings';
import { FUNCTION_REQUIREMENTS } from '../support/function-requirements';
import { FUNCTION_PREFIX, settings, tableLogicalId } from './default-stack';
import { functionActions, functionLogicalId, functionStatements, logicalIdOf, newestNodeRuntime, resourcesOfType, roleLogicalIdOf, synthModelgate } from './template-helpers';

const DYNAMODB_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

let template: Template;
let synthesized: ReturnType<typeof synthModelgate>;

beforeAll(() => {
  synthesized = synthModelgate();
  ({ template } = synthesized);
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
        ...table('responses'),
        INFERENCE_UPSTREAMS: JSON.stringify(settings.inferenceUpstreams),
        UPSTREAM_TIMEOUT_SECONDS: String(settings.upstreamTimeoutSeconds),
        RESPONSE_RETENTION_DAYS: String(settings.responseRetentionDays),
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
      inference: ['responses', 'usage', 'rateCounters'],
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
