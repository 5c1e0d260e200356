import type { Template } from 'aws-cdk-lib/assertions';
import { PAGES_BASE_PATH, ROUTES, resourcePath, servedMethods } from '../../lambdas/routes';
import { FUNCTION_PREFIX, settings } from './default-stack';
import { functionLogicalId, logicalIdOf, resourcesOfType, synthModelgate } from './template-helpers';

let template: Template;

beforeAll(() => {
  // The API and the firewall read no function code: the functions are not bundled here.
  ({ template } = synthModelgate({ 'aws:cdk:bundling-stacks': [] }));
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

  it("serves each route's method, and HEAD beside each GET, on its resource: one ANY where one function serves several methods, else a method each; each a Lambda proxy to the route's function", () => {
    const methods = proxyMethods().map((m) => ({
      method: m.Properties?.HttpMethod as string,
      path: pathOf(m.Properties?.ResourceId.Ref),
      type: m.Properties?.Integration?.Type,
      target: JSON.stringify(m.Properties?.Integration?.Uri),
    }));
    const arnOf = (route: (typeof ROUTES)[number]) => JSON.stringify({ 'Fn::GetAtt': [functionLogicalId(template, FUNCTION_PREFIX[route.function]), 'Arn'] });
    for (const route of ROUTES) {
      for (const method of servedMethods([route.method])) {
        const served = methods.find((m) => m.path === resourcePath(route) && m.method === method) ?? methods.find((m) => m.path === resourcePath(route) && m.method === 'ANY');
        expect([method, resourcePath(route), served?.type, served?.target.includes(arnOf(route))]).toEqual([method, resourcePath(route), 'AWS_PROXY', true]);
      }
    }
    for (const path of new Set(methods.map((m) => m.path))) {
      const routes = ROUTES.filter((route) => resourcePath(route) === path);
      const onPath = methods.filter((m) => m.path === path).map((m) => m.method).sort();
      const meant = servedMethods(routes.map((route) => route.method)).sort();
      // ANY alone where one function serves more than one method; else exactly the routes' methods.
      expect([path, onPath]).toEqual([path, new Set(routes.map((route) => route.function)).size === 1 && meant.length > 1 ? ['ANY'] : meant]);
    }
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
    expect(methods.length).toBeGreaterThan(0);
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
