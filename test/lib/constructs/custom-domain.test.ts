import type { Template } from 'aws-cdk-lib/assertions';
import { SettingsError } from '../../../lib/settings';
import { resourcesOfType, synthModelgate } from '../template-helpers';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const ENV = { account: '123456789012', region: 'eu-central-1' };
const ZONE = { 'modelgate:hostedZoneId': 'Z0123456789ABCDEFGHIJ', 'modelgate:hostedZoneName': 'example.com' };
/** As `cdk deploy -c key=value` passes them: strings. */
const DOMAIN = { ...NO_BUNDLING, 'modelgate:domainName': 'api.example.com', ...ZONE, 'modelgate:regionalHostnames': '{"eu":"eu.api.example.com"}' };
const HOSTNAMES = ['api.example.com', 'eu.api.example.com'];
const TOKEN_FUNCTIONS = ['Catalog', 'TokenExchange', 'Jwks', 'Management', 'Inference'];

const onlyOf = (template: Template, type: string) => {
  const found = Object.entries(resourcesOfType(template, type));
  if (found.length !== 1) throw new Error(`expected one ${type}, found ${found.length}`);
  return found[0]!;
};
const refOf = (template: Template, type: string) => ({ Ref: onlyOf(template, type)[0] });

/** The domain name resource serving `hostname`, and its logical id. */
function domainNameOf(template: Template, hostname: string): [string, Record<string, any>] {
  const [id, resource] = Object.entries(resourcesOfType(template, 'AWS::ApiGateway::DomainName')).find(([, r]) => r.Properties?.DomainName === hostname)!;
  return [id, resource.Properties!];
}

const environmentOf = (template: Template, constructId: string): Record<string, unknown> =>
  Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).find(([id]) => new RegExp(`^${constructId}[0-9A-F]{8}$`).test(id))![1].Properties!.Environment.Variables;

describe('a custom domain in a hosted zone (modelgate:domainName, modelgate:hostedZoneId, modelgate:hostedZoneName)', () => {
  let template: Template;
  let outputs: Record<string, { Value: unknown }>;
  beforeAll(() => {
    ({ template } = synthModelgate(DOMAIN, ENV));
    outputs = template.toJSON().Outputs;
  }, 120_000);

  it('has one DNS-validated certificate for the domain and every regional hostname, validated in the zone', () => {
    const [, certificate] = onlyOf(template, 'AWS::CertificateManager::Certificate');
    expect(certificate.Properties).toEqual({
      DomainName: 'api.example.com',
      SubjectAlternativeNames: ['eu.api.example.com'],
      ValidationMethod: 'DNS',
      DomainValidationOptions: HOSTNAMES.map((DomainName) => ({ DomainName, HostedZoneId: 'Z0123456789ABCDEFGHIJ' })),
      Tags: [{ Key: 'Name', Value: expect.any(String) }],
    });
  });

  it('serves each hostname from a regional API Gateway domain name with TLS 1.2 or stricter, over IPv4 and IPv6, with that certificate', () => {
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::DomainName'))).toHaveLength(2);
    for (const hostname of HOSTNAMES) {
      expect([hostname, domainNameOf(template, hostname)[1]]).toEqual([
        hostname,
        {
          DomainName: hostname,
          EndpointConfiguration: { Types: ['REGIONAL'], IpAddressType: 'dualstack' },
          RegionalCertificateArn: refOf(template, 'AWS::CertificateManager::Certificate'),
          SecurityPolicy: 'TLS_1_2',
        },
      ]);
    }
  });

  it("maps the API's one stage at the root of every hostname", () => {
    const mappings = Object.values(resourcesOfType(template, 'AWS::ApiGateway::BasePathMapping')).map((m) => m.Properties);
    expect(mappings).toHaveLength(2);
    for (const hostname of HOSTNAMES) {
      expect(mappings).toContainEqual({
        DomainName: { Ref: domainNameOf(template, hostname)[0] },
        RestApiId: refOf(template, 'AWS::ApiGateway::RestApi'),
        Stage: refOf(template, 'AWS::ApiGateway::Stage'),
      });
    }
  });

  it('points an A and an AAAA alias record of each hostname in the zone at its domain name', () => {
    const records = Object.values(resourcesOfType(template, 'AWS::Route53::RecordSet')).map((r) => r.Properties);
    expect(records).toHaveLength(4);
    for (const hostname of HOSTNAMES) {
      const [domainId] = domainNameOf(template, hostname);
      for (const Type of ['A', 'AAAA']) {
        expect(records).toContainEqual({
          Name: `${hostname}.`,
          Type,
          HostedZoneId: 'Z0123456789ABCDEFGHIJ',
          AliasTarget: { DNSName: { 'Fn::GetAtt': [domainId, 'RegionalDomainName'] }, HostedZoneId: { 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] } },
        });
      }
    }
  });

  it('names https://<domainName>/api/v1 as the issuer and API base URL of every function that issues, verifies or describes access tokens, and as the outputs', () => {
    for (const fn of TOKEN_FUNCTIONS) expect([fn, environmentOf(template, fn).API_BASE_URL]).toEqual([fn, 'https://api.example.com/api/v1']);
    expect(outputs.ApiUrl!.Value).toBe('https://api.example.com/api/v1');
    expect(outputs.SettingsPageUrl!.Value).toBe('https://api.example.com/settings/workload-identity');
  });

  it('puts every hostname behind the web ACL: it guards the stage all of them map, and limits the token endpoint at the path their root mapping gives', () => {
    const [, association] = onlyOf(template, 'AWS::WAFv2::WebACLAssociation');
    expect(JSON.stringify(association.Properties!.ResourceArn)).toContain(JSON.stringify(refOf(template, 'AWS::ApiGateway::Stage')));
    const [, webAcl] = onlyOf(template, 'AWS::WAFv2::WebACL');
    const tokenRule = (webAcl.Properties!.Rules as { Name: string; Statement: any }[]).find((rule) => rule.Name === 'TokenEndpointRateLimit')!;
    const paths = tokenRule.Statement.RateBasedStatement.ScopeDownStatement.OrStatement.Statements.map((s: any) => s.ByteMatchStatement.SearchString);
    expect(paths).toContain('/api/v1/oauth/token');
  });

  it('leaves the issuer to modelgate:apiBaseUrl when it is set', () => {
    const { template: overridden } = synthModelgate({ ...DOMAIN, 'modelgate:apiBaseUrl': 'https://gateway.example.com/api/v1' }, ENV);
    for (const fn of TOKEN_FUNCTIONS) expect([fn, environmentOf(overridden, fn).API_BASE_URL]).toEqual([fn, 'https://gateway.example.com/api/v1']);
    expect(overridden.toJSON().Outputs.ApiUrl.Value).toBe('https://gateway.example.com/api/v1');
  });
});

describe('a custom domain with an existing certificate (modelgate:certificateArn)', () => {
  const certificateArn = 'arn:aws:acm:eu-central-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
  let template: Template;
  beforeAll(() => {
    ({ template } = synthModelgate({ ...NO_BUNDLING, 'modelgate:domainName': 'api.example.com', 'modelgate:certificateArn': certificateArn, 'modelgate:regionalHostnames': '{"eu":"eu.api.example.com"}' }, ENV));
  }, 120_000);

  it('serves every hostname with that certificate, and makes neither a certificate nor DNS records', () => {
    expect(Object.keys(resourcesOfType(template, 'AWS::CertificateManager::Certificate'))).toEqual([]);
    expect(Object.keys(resourcesOfType(template, 'AWS::Route53::RecordSet'))).toEqual([]);
    for (const hostname of HOSTNAMES) expect(domainNameOf(template, hostname)[1].RegionalCertificateArn).toBe(certificateArn);
    expect(Object.keys(resourcesOfType(template, 'AWS::ApiGateway::BasePathMapping'))).toHaveLength(2);
    expect(environmentOf(template, 'TokenExchange').API_BASE_URL).toBe('https://api.example.com/api/v1');
  });

  it("outputs the regional domain name each hostname's DNS records must point at", () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs.DnsTargetApiExampleCom!.Value).toEqual({ 'Fn::GetAtt': [domainNameOf(template, 'api.example.com')[0], 'RegionalDomainName'] });
    expect(outputs.DnsTargetEuApiExampleCom!.Value).toEqual({ 'Fn::GetAtt': [domainNameOf(template, 'eu.api.example.com')[0], 'RegionalDomainName'] });
  });
});

describe('without a custom domain', () => {
  it('makes no certificate, domain name, mapping or record, and the issuer stays the stage URL', () => {
    const { template } = synthModelgate(NO_BUNDLING, ENV);
    for (const type of ['AWS::CertificateManager::Certificate', 'AWS::ApiGateway::DomainName', 'AWS::ApiGateway::BasePathMapping', 'AWS::Route53::RecordSet']) {
      expect([type, Object.keys(resourcesOfType(template, type))]).toEqual([type, []]);
    }
    expect(JSON.stringify(environmentOf(template, 'TokenExchange').API_BASE_URL)).toContain('.execute-api.');
  });
});

describe('custom domain settings, refused before anything is built', () => {
  it.each<[Record<string, unknown>, string]>([
    [{ 'modelgate:domainName': 'api.example.com' }, 'modelgate:domainName needs a hosted zone'],
    [{ ...ZONE }, 'modelgate:domainName must be set for a hosted zone or a certificate to be used'],
    [{ 'modelgate:domainName': 'api.example.com', 'modelgate:hostedZoneId': 'Z0123456789ABCDEFGHIJ' }, 'modelgate:hostedZoneId and modelgate:hostedZoneName go together: give both or neither'],
    [{ ...DOMAIN, 'modelgate:hostedZoneId': 'not a zone' }, 'modelgate:hostedZoneId must be a Route 53 hosted zone id, got "not a zone"'],
    [{ ...DOMAIN, 'modelgate:domainName': 'api.example.com/v1' }, 'modelgate:domainName must be a hostname, got "api.example.com/v1"'],
    [{ 'modelgate:domainName': 'api.example.com', 'modelgate:certificateArn': 'arn:aws:iam::123456789012:server-certificate/x' }, 'modelgate:certificateArn must be the ARN of an ACM certificate'],
    [{ ...DOMAIN, 'modelgate:regionalHostnames': { eu: 'eu.api.example.org' } }, 'The hosted zone example.com cannot hold eu.api.example.org: every hostname the API serves must be in it'],
  ])('refuses %j', (context, message) => {
    expect(() => synthModelgate({ ...NO_BUNDLING, ...context }, ENV)).toThrow(SettingsError);
    expect(() => synthModelgate({ ...NO_BUNDLING, ...context }, ENV)).toThrow(message);
  });
});
