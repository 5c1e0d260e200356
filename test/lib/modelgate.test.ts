import { App, Stack, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Modelgate, ModelgateStack, SettingsError, type ModelgateProps } from '../../lib';
import { readSettingsFromContext } from '../../lib/settings';
import { PAGES_BASE_PATH, ROUTES, resourcePath } from '../../lambdas/routes';
import { cdkJsonContext, functionLogicalId, resourcesOfType, synthUserApp, type UserApp } from './template-helpers';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const ENV = { account: '123456789012', region: 'eu-west-1' };
const EMBEDDED: ModelgateProps = { instance: 'Embedded', exchangeRateLimit: 30 };
const userApp = (instances: ModelgateProps[], options: Parameters<typeof synthUserApp>[1] = {}) => synthUserApp(instances, { env: ENV, ...options });

/** A template's JSON with every logical id's 8-hex suffix, and the given construct id prefix, dropped. */
const withoutIds = (value: unknown, prefix = '') =>
  JSON.parse(JSON.stringify(value).replace(new RegExp(`"${prefix}([A-Za-z0-9]+?)[0-9A-F]{8}"`, 'g'), '"$1"'));

describe('Modelgate inside a stack of its user', () => {
  let embedded: UserApp;
  beforeAll(() => {
    embedded = userApp([EMBEDDED]);
  }, 120_000);

  it("synthesizes with cdk-nag's AwsSolutions pack and no finding, with the CLI's feature flags and with none set", () => {
    expect(new AwsSolutionsChecks(embedded.app).validateScope(embedded.app).violations.map((v) => v.ruleName)).toEqual([]);
    // An app that sets no flag at all gets aws-cdk-lib's defaults; the synth fails on a finding.
    expect(() => userApp([EMBEDDED], { context: {} })).not.toThrow();
  });

  it('names every physical name after its instance, none after the stack it sits in', () => {
    const json = JSON.stringify(embedded.template.toJSON());
    embedded.template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/Embedded/access-token-signing' });
    embedded.template.hasResourceProperties('AWS::KMS::Key', { Tags: [{ Key: 'modelgate:access-token-signing', Value: 'Embedded' }] });
    embedded.template.hasResourceProperties('AWS::ApiGateway::RestApi', { Name: 'Embedded' });
    embedded.template.hasResourceProperties('AWS::WAFv2::WebACL', { VisibilityConfig: { MetricName: 'Embedded-web-acl' } });
    const logGroups = Object.values(resourcesOfType(embedded.template, 'AWS::Logs::LogGroup')).map((group) => group.Properties?.LogGroupName).filter(Boolean);
    expect(logGroups.length).toBe(9);
    for (const name of logGroups) expect(name).toMatch(/^\/modelgate\/Embedded\//);
    for (const alarm of Object.values(resourcesOfType(embedded.template, 'AWS::CloudWatch::Alarm'))) expect(alarm.Properties?.AlarmName).toMatch(/^Embedded-/);
    expect(json).not.toMatch(/Platform[-/]/);
  });

  it('gives the functions what the CLI stack gives them for the same settings as context: the props are the settings', () => {
    const app = new App({ context: { ...cdkJsonContext(), ...NO_BUNDLING, 'modelgate:exchangeRateLimit': '30' } });
    const cli = Template.fromStack(new ModelgateStack(app, 'Embedded', { ...readSettingsFromContext(app.node), env: ENV }));
    const environmentOf = (template: Template, prefix: string, fn: string) =>
      resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, `${prefix}${fn}`)]!.Properties?.Environment?.Variables;
    for (const fn of ['Catalog', 'TokenExchange', 'Jwks', 'Management', 'Inference', 'SettingsPage', 'SigningKeyRegistrar', 'UsageRollup']) {
      // The stack's settings are cdk.json's; the instance's are the defaults but for exchangeRateLimit.
      const expected = withoutIds(environmentOf(cli, '', fn));
      if (expected.REGIONAL_HOSTNAMES) expected.REGIONAL_HOSTNAMES = '{}';
      expect([fn, withoutIds(environmentOf(embedded.template, 'Gateway', fn), 'Gateway')]).toEqual([fn, expected]);
    }
    expect(environmentOf(embedded.template, 'Gateway', 'TokenExchange').EXCHANGE_RATE_LIMIT).toBe('30');
  });

  it('exposes what a user wires to: the API URL, the REST API, the web ACL, the tables, the signing key alias', () => {
    const [gateway] = embedded.gateways;
    const { stack, template } = embedded;
    const restApiId = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::RestApi'))[0]!;
    expect(stack.resolve(gateway!.restApi.restApiId)).toEqual({ Ref: restApiId });
    expect(stack.resolve(gateway!.apiUrl)).toEqual({
      'Fn::Join': ['', ['https://', { Ref: restApiId }, '.execute-api.eu-west-1.', { Ref: 'AWS::URLSuffix' }, '/', { Ref: expect.stringMatching(/^GatewayApiRestApiDeploymentStagev1/) }, '/api/v1']],
    });
    expect(stack.resolve(gateway!.webAcl.attrArn)).toEqual({ 'Fn::GetAtt': [Object.keys(resourcesOfType(template, 'AWS::WAFv2::WebACL'))[0], 'Arn'] });
    const tables = Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table')).sort();
    expect(Object.values(gateway!.tables).map((table) => stack.resolve(table.tableName).Ref).sort()).toEqual(tables);
    expect(Object.keys(gateway!.tables).sort()).toEqual(['keys', 'models', 'policies', 'rateCounters', 'responses', 'usage']);
    const alias = stack.resolve(gateway!.signingKeyAlias.aliasName) as { Ref: string };
    expect(resourcesOfType(template, 'AWS::KMS::Alias')[alias.Ref]!.Properties).toMatchObject({ AliasName: 'alias/Embedded/access-token-signing' });
    expect(stack.resolve(gateway!.signingKeyAlias.aliasTargetKey.keyArn)).toEqual({ 'Fn::GetAtt': [Object.entries(resourcesOfType(template, 'AWS::KMS::Key')).find(([, key]) => key.Properties?.KeyUsage === 'SIGN_VERIFY')![0], 'Arn'] });
  });
});

describe("an instance's browser access (CORS) and public catalog, from its props", () => {
  const origin = 'https://app.example.com';
  let open: UserApp;
  beforeAll(() => {
    open = userApp([{ instance: 'Open', corsAllowedOrigins: [origin], publicCatalog: true }]);
  }, 120_000);
  const environmentOf = (fn: string) =>
    resourcesOfType(open.template, 'AWS::Lambda::Function')[functionLogicalId(open.template, `Gateway${fn}`)]!.Properties?.Environment?.Variables as Record<string, string>;
  const methods = () => Object.values(resourcesOfType(open.template, 'AWS::ApiGateway::Method')).map((method) => method.Properties!);

  it('names the allowed origin to every function serving the API, and opens the catalog to the catalog function', () => {
    for (const fn of ['Catalog', 'TokenExchange', 'Jwks', 'Management', 'Inference']) expect([fn, environmentOf(fn).CORS_ALLOWED_ORIGINS]).toEqual([fn, origin]);
    expect(environmentOf('SettingsPage').CORS_ALLOWED_ORIGINS).toBeUndefined();
    expect(environmentOf('Catalog').PUBLIC_CATALOG).toBe('1');
  });

  it('answers the preflight of every API resource of the instance in API Gateway, naming the origin, with HEAD beside every GET', () => {
    const apiResources = new Set(ROUTES.filter((route) => route.base !== PAGES_BASE_PATH).map(resourcePath));
    const preflights = methods().filter((method) => method.HttpMethod === 'OPTIONS');
    expect(preflights).toHaveLength(apiResources.size);
    for (const preflight of preflights) {
      expect(preflight.Integration.Type).toBe('MOCK');
      expect(preflight.Integration.IntegrationResponses[0].ResponseParameters['method.response.header.Access-Control-Allow-Origin']).toBe(`'${origin}'`);
    }
    expect(methods().filter((method) => method.HttpMethod === 'HEAD')).toHaveLength(methods().filter((method) => method.HttpMethod === 'GET').length);
  });

  it("has the gateway's own answers name the caller's origin, and the firewall's blocks the one allowed", () => {
    const responses = Object.values(resourcesOfType(open.template, 'AWS::ApiGateway::GatewayResponse')).map((response) => response.Properties!);
    expect(responses.map((response) => response.ResponseType).sort()).toEqual(['DEFAULT_4XX', 'DEFAULT_5XX', 'MISSING_AUTHENTICATION_TOKEN']);
    for (const response of responses) expect(response.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe('method.request.header.Origin');
    const [acl] = Object.values(resourcesOfType(open.template, 'AWS::WAFv2::WebACL'));
    for (const rule of acl!.Properties!.Rules) {
      expect(rule.Action.Block.CustomResponse.ResponseHeaders).toContainEqual({ Name: 'Access-Control-Allow-Origin', Value: origin });
    }
  });
});

describe('Modelgate props, checked as the context is', () => {
  const build = (props: ModelgateProps) => () => new Modelgate(new Stack(new App({ context: NO_BUNDLING }), 'Platform', { env: ENV }), 'Gateway', props);

  it.each<[ModelgateProps, string]>([
    [{ upstreamTimeoutSeconds: 301 }, 'modelgate:upstreamTimeoutSeconds must be an integer from 1 to 300, got 301'],
    [{ exchangeRateLimit: 0 }, 'modelgate:exchangeRateLimit must be an integer from 1 to 1000000, got 0'],
    [{ instance: 'staging_1' }, 'modelgate:instance must be a letter, then up to 63 letters, digits or "-" (not ending in "-"), got "staging_1"'],
    [{ domainName: 'api.example.com' }, 'modelgate:domainName needs a hosted zone'],
    [{ domainName: 'https://api.example.com' }, 'modelgate:domainName must be a hostname, got "https://api.example.com"'],
    [{ inferenceReservedConcurrency: 100_001 }, 'modelgate:inferenceReservedConcurrency must be an integer from 1 to 100000, got 100001'],
    [{ corsAllowedOrigins: ['https://app.example.com/'] }, 'modelgate:corsAllowedOrigins must be "*" or origins such as https://app.example.com (scheme, host and port only), got "https://app.example.com/"'],
    [{ publicCatalog: 'yes' as unknown as boolean }, 'modelgate:publicCatalog must be true or false (1 or 0), got "yes"'],
  ])('refuses %j', (props, message) => {
    expect(build(props)).toThrow(SettingsError);
    expect(build(props)).toThrow(message);
  });

  it('reserves the inference function\'s concurrency, and alarms near the reservation, from inferenceReservedConcurrency', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Platform', { env: ENV });
    new Modelgate(stack, 'Gateway', { ...EMBEDDED, inferenceReservedConcurrency: 50 });
    const template = Template.fromStack(stack);
    const reserved = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).filter(([, fn]) => fn.Properties?.ReservedConcurrentExecutions !== undefined);
    expect(reserved.map(([id, fn]) => [id, fn.Properties?.ReservedConcurrentExecutions])).toEqual([[functionLogicalId(template, 'GatewayInference'), 50]]);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Embedded-InferenceNearReservedConcurrency',
      MetricName: 'ConcurrentExecutions',
      Threshold: 40,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: functionLogicalId(template, 'GatewayInference') } }],
    });
  }, 120_000);

  it('reads the instance name from the stack when none is given', () => {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Platform', { env: ENV });
    expect(new Modelgate(stack, 'Gateway').instance).toBe('Platform');
  });
});

describe('two instances in one stack', () => {
  let two: UserApp;
  beforeAll(() => {
    two = userApp([EMBEDDED, { instance: 'Second' }]);
  }, 120_000);

  it('refuses a second instance of the same name in one account and region', () => {
    expect(() => userApp([EMBEDDED, { instance: 'Embedded' }])).toThrow(
      new SettingsError('Two modelgate instances are named Embedded (Platform/Gateway and Platform/Gateway2); their physical names would collide: give each its own instance name'),
    );
  });

  it("share API Gateway's account-level CloudWatch role setting: one, retained, which both stages wait for", () => {
    const accounts = resourcesOfType(two.template, 'AWS::ApiGateway::Account');
    expect(Object.keys(accounts)).toHaveLength(1);
    const [accountId] = Object.keys(accounts);
    expect(two.template.toJSON().Resources[accountId!]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    const stages = resourcesOfType(two.template, 'AWS::ApiGateway::Stage');
    expect(Object.keys(stages)).toHaveLength(2);
    for (const stage of Object.values(stages)) expect(stage.DependsOn).toContain(accountId);
  });

  it('keep their own names apart', () => {
    const aliases = Object.values(resourcesOfType(two.template, 'AWS::KMS::Alias')).map((alias) => alias.Properties?.AliasName);
    expect(aliases.sort()).toEqual(['alias/Embedded/access-token-signing', 'alias/Second/access-token-signing']);
  });
});

describe("beside a REST API of the user's own", () => {
  const theirs = (stack: Stack) => {
    const api = new apigateway.RestApi(stack, 'TheirApi', { cloudWatchRole: true, deployOptions: { loggingLevel: apigateway.MethodLoggingLevel.OFF } });
    api.root.addMethod('GET', new apigateway.MockIntegration());
    // The user's own findings are theirs to settle; here they are acknowledged so the instance's alone count.
    Validations.of(api).acknowledge(
      ...['AwsSolutions-APIG1', 'AwsSolutions-APIG2', 'AwsSolutions-APIG3', 'AwsSolutions-APIG4', 'AwsSolutions-APIG6', 'AwsSolutions-COG4'].map((id) => ({ id, reason: 'The user API of this test is not under review here; only the instance beside it is' })),
    );
    Validations.of(api.node.findChild('CloudWatchRole')).acknowledge({ id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]', reason: 'The user API of this test is not under review here; only the instance beside it is' });
  };

  it('keeps both account settings and both roles when either is deleted, so neither API loses its logging role', () => {
    const { template } = userApp([EMBEDDED], { before: theirs });
    const json = template.toJSON();
    const accounts = Object.entries(resourcesOfType(template, 'AWS::ApiGateway::Account'));
    expect(accounts).toHaveLength(2);
    for (const [id, account] of accounts) {
      expect(json.Resources[id]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
      const roleId = (account.Properties!.CloudWatchRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(json.Resources[roleId]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    }
  });

  it('makes no role nor account setting of its own with cloudWatchRole false', () => {
    const { template } = userApp([{ ...EMBEDDED, cloudWatchRole: false }], { before: theirs });
    const accounts = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Account'));
    expect(accounts).toHaveLength(1);
    expect(JSON.stringify(accounts[0]!.Properties)).toMatch(/TheirApiCloudWatchRole/);
  });
});
