import type { IncomingMessage } from 'node:http';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { FunctionId } from '../../../lambdas/routes';
import { Api } from '../../../lib/constructs/api';
import { Firewall } from '../../../lib/constructs/firewall';
import { renderMockTemplate } from '../../support/api-gateway';

const FUNCTIONS: readonly FunctionId[] = ['catalog', 'tokenExchange', 'jwks', 'management', 'inference', 'settingsPage'];

/** The API and firewall constructs alone, for the origins given. */
function synthesize(corsAllowedOrigins: readonly string[]): Template {
  const stack = new Stack(new App(), 'Test');
  const functions = Object.fromEntries(
    FUNCTIONS.map((id) => [id, new lambda.Function(stack, id, { runtime: lambda.Runtime.NODEJS_22_X, handler: 'index.handler', code: lambda.Code.fromInline('exports.handler = async () => ({})') })]),
  ) as unknown as Record<FunctionId, lambda.IFunction>;
  const api = new Api(stack, 'Api', { functions, stageName: 'v1', corsAllowedOrigins, cloudWatchRole: true });
  new Firewall(stack, 'Firewall', { stage: api.deploymentStage, stageName: 'v1', tokenEndpointPath: '/api/v1/oauth/token', tokenRateLimit: 100, generalRateLimit: 2000, corsAllowedOrigins });
  return Template.fromStack(stack);
}

const ofType = (template: Template, type: string) => Object.values(template.findResources(type)) as { Properties: Record<string, any> }[];

/** A request as the mock integration's template sees it: header names as the client spelt them. */
const requestFrom = (headers: Record<string, string>) => ({ rawHeaders: Object.entries(headers).flat() }) as unknown as IncomingMessage;

/** What a preflight from `origin` is told it may do: the static mapping, then the template's override. */
function allowedOrigin(template: Template, origin: string): string {
  const preflight = ofType(template, 'AWS::ApiGateway::Method').find((method) => method.Properties.HttpMethod === 'OPTIONS')!;
  const [response] = preflight.Properties.Integration.IntegrationResponses;
  const mapping = response.ResponseTemplates?.['application/json'] as string | undefined;
  const rendered = mapping === undefined ? undefined : renderMockTemplate(mapping, requestFrom({ origin }));
  return rendered?.headers['Access-Control-Allow-Origin'] ?? response.ResponseParameters['method.response.header.Access-Control-Allow-Origin'].slice(1, -1);
}

describe('CORS with a list of origins (modelgate:corsAllowedOrigins)', () => {
  const origins = ['https://app.example.com', 'https://admin.example.com'];
  const template = synthesize(origins);

  it('answers a preflight from each listed origin with that origin, and any other with another, which its browser refuses', () => {
    expect(allowedOrigin(template, 'https://app.example.com')).toBe('https://app.example.com');
    expect(allowedOrigin(template, 'https://admin.example.com')).toBe('https://admin.example.com');
    expect(allowedOrigin(template, 'https://evil.example.com')).toBe('https://app.example.com');
  });

  it("names the request's origin on API Gateway's own answers, which carry no data, and varies by it", () => {
    for (const response of ofType(template, 'AWS::ApiGateway::GatewayResponse')) {
      expect(response.Properties.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Access-Control-Allow-Origin': 'method.request.header.Origin',
        'gatewayresponse.header.Vary': "'Origin'",
      });
    }
  });

  it('leaves the origin off WAF blocks, whose headers are fixed and cannot name one of several', () => {
    const [acl] = ofType(template, 'AWS::WAFv2::WebACL');
    for (const rule of acl!.Properties.Rules) {
      const names = rule.Action.Block.CustomResponse.ResponseHeaders.map((header: { Name: string }) => header.Name);
      expect(names).not.toContain('Access-Control-Allow-Origin');
    }
  });
});

describe('CORS with one origin', () => {
  it('names it on WAF blocks and preflights alike', () => {
    const template = synthesize(['https://app.example.com']);
    const [acl] = ofType(template, 'AWS::WAFv2::WebACL');
    for (const rule of acl!.Properties.Rules) {
      expect(rule.Action.Block.CustomResponse.ResponseHeaders).toContainEqual({ Name: 'Access-Control-Allow-Origin', Value: 'https://app.example.com' });
    }
    expect(allowedOrigin(template, 'https://app.example.com')).toBe('https://app.example.com');
  });
});
