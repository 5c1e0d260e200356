import type { StackTemplate, TemplateResolver } from '../cloud-assembly';
import { mockResponse, type MockResponse } from './gateway-answers';

/** How a method is served: a Lambda proxy integration, or a mock answered from its integration response. */
export type Integration =
  | { readonly type: 'proxy'; readonly functionLogicalId: string; readonly streaming: boolean; readonly timeoutMs: number }
  | { readonly type: 'mock'; readonly response: MockResponse };

/** An `AWS::ApiGateway::Resource` (or the root): its path, its children and its methods' integrations. */
export interface ResourceNode {
  readonly logicalId: string;
  readonly pathPart: string;
  readonly path: string;
  readonly children: ResourceNode[];
  readonly methods: Map<string, Integration>;
}

/** A route the template declares: method, resource path, the function logical id. */
export interface GatewayRoute {
  readonly method: string;
  readonly resourcePath: string;
  readonly functionLogicalId: string;
  readonly streaming: boolean;
}

/** The one REST API of a template with its stage, as the stand-in serves it. */
export interface RestApi {
  readonly apiId: string;
  readonly stageName: string;
  /** The execute-api hostname. */
  readonly hostname: string;
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  /** Each custom domain name's base paths mapping the stage (`''` for the root), by hostname. */
  readonly basePaths: ReadonlyMap<string, readonly string[]>;
  readonly binaryMediaTypes: readonly string[];
  readonly minimumCompressionSize: number | undefined;
  readonly root: ResourceNode;
  readonly routes: readonly GatewayRoute[];
  /** The resolved properties of each gateway response, by response type. */
  readonly gatewayResponses: ReadonlyMap<string, Record<string, any>>;
  /** Whether a permission of the template lets API Gateway invoke the function for this source ARN. */
  mayInvoke(functionLogicalId: string, sourceArn: string): boolean;
}

const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * Reads the template's one REST API: its stage, custom domain names, resource tree, methods and
 * their integrations, the permissions that let API Gateway invoke functions, and its gateway responses.
 */
export function readRestApi(template: StackTemplate, resolver: TemplateResolver): RestApi {
  const restApis = ofType(template, 'AWS::ApiGateway::RestApi');
  if (restApis.length !== 1) throw new Error(`expected one REST API in the template, found ${restApis.length}`);
  const [restApiId, restApi] = restApis[0]!;
  const apiId = resolver.resolve({ Ref: restApiId }) as string;
  const refersToApi = (value: unknown) => (value as { Ref?: string })?.Ref === restApiId;
  const stages = ofType(template, 'AWS::ApiGateway::Stage').filter(([, stage]) => refersToApi(stage.Properties?.RestApiId));
  if (stages.length !== 1) throw new Error(`expected one stage of ${restApiId}, found ${stages.length}`);
  const stageName = stages[0]![1].Properties!.StageName as string;
  const { region, account } = resolver.env;
  const hostname = `${apiId}.execute-api.${region}.${resolver.urlSuffix}`;
  const basePaths = customDomainMappings(template, resolver, restApiId, stages[0]![0]);
  const binaryMediaTypes = (restApi.Properties?.BinaryMediaTypes ?? []) as string[];
  const minimumCompressionSize = restApi.Properties?.MinimumCompressionSize as number | undefined;
  const { root, parentOf } = resourceTree(template, restApiId, refersToApi);
  const routes = readMethods(template, resolver, refersToApi, parentOf);
  const mayInvoke = invokePermissions(template, resolver);
  const gatewayResponses = new Map(
    ofType(template, 'AWS::ApiGateway::GatewayResponse')
      .filter(([, response]) => refersToApi(response.Properties?.RestApiId))
      .map(([, response]) => [response.Properties!.ResponseType as string, resolver.resolve(response.Properties) as Record<string, any>]),
  );
  return { apiId, stageName, hostname, partition: resolver.partition, region, account, basePaths, binaryMediaTypes, minimumCompressionSize, root, routes, gatewayResponses, mayInvoke };
}

function ofType(template: StackTemplate, type: string) {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}

/** The resource tree, from each resource's PathPart and ParentId. */
function resourceTree(template: StackTemplate, restApiId: string, refersToApi: (value: unknown) => boolean) {
  const root: ResourceNode = { logicalId: 'root', pathPart: '', path: '/', children: [], methods: new Map() };
  const nodes = new Map<string, ResourceNode>();
  const nodeOf = (logicalId: string): ResourceNode => {
    const existing = nodes.get(logicalId);
    if (existing) return existing;
    const properties = template.Resources[logicalId]?.Properties;
    if (!properties || template.Resources[logicalId]!.Type !== 'AWS::ApiGateway::Resource') throw new Error(`${logicalId} is not an API resource`);
    const parent = parentOf(properties.ParentId);
    const pathPart = properties.PathPart as string;
    if (/^\{.+\+\}$/.test(pathPart)) throw new Error(`${logicalId}: greedy path parameters are not supported by this stand-in`);
    const node: ResourceNode = { logicalId, pathPart, path: `${parent.path === '/' ? '' : parent.path}/${pathPart}`, children: [], methods: new Map() };
    parent.children.push(node);
    nodes.set(logicalId, node);
    return node;
  };
  const parentOf = (reference: any): ResourceNode => {
    if (Array.isArray(reference?.['Fn::GetAtt']) && reference['Fn::GetAtt'][0] === restApiId && reference['Fn::GetAtt'][1] === 'RootResourceId') return root;
    if (typeof reference?.Ref === 'string') return nodeOf(reference.Ref);
    throw new Error(`unsupported API resource parent ${JSON.stringify(reference)}`);
  };
  for (const [logicalId, resource] of ofType(template, 'AWS::ApiGateway::Resource')) {
    if (refersToApi(resource.Properties?.RestApiId)) nodeOf(logicalId);
  }
  return { root, parentOf };
}

/** Sets each method's integration on its resource, and the function its URI names; returns the proxy routes. */
function readMethods(template: StackTemplate, resolver: TemplateResolver, refersToApi: (value: unknown) => boolean, parentOf: (reference: any) => ResourceNode): GatewayRoute[] {
  const functionByArn = new Map<string, string>();
  for (const [logicalId] of ofType(template, 'AWS::Lambda::Function')) functionByArn.set(resolver.resolve({ 'Fn::GetAtt': [logicalId, 'Arn'] }), logicalId);
  const routes: GatewayRoute[] = [];
  for (const [logicalId, method] of ofType(template, 'AWS::ApiGateway::Method')) {
    const properties = method.Properties!;
    if (!refersToApi(properties.RestApiId)) continue;
    const node = parentOf(properties.ResourceId);
    const integration = properties.Integration as Record<string, unknown>;
    if (integration.Type === 'MOCK') {
      node.methods.set(properties.HttpMethod as string, { type: 'mock', response: mockResponse(logicalId, integration) });
      continue;
    }
    if (integration.Type !== 'AWS_PROXY' || integration.IntegrationHttpMethod !== 'POST') {
      throw new Error(`${logicalId}: only Lambda proxy integrations (AWS_PROXY, POST) are supported, got ${String(integration.Type)} ${String(integration.IntegrationHttpMethod)}`);
    }
    const uri = resolver.resolve(integration.Uri) as string;
    const streaming = integration.ResponseTransferMode === 'STREAM';
    const action = streaming ? '2021-11-15/functions/(.+)/response-streaming-invocations' : '2015-03-31/functions/(.+)/invocations';
    const target = new RegExp(`^arn:${resolver.partition}:apigateway:${resolver.env.region}:lambda:path/${action}$`).exec(uri)?.[1];
    const functionLogicalId = target === undefined ? undefined : functionByArn.get(target);
    if (!functionLogicalId) throw new Error(`${logicalId}: integration URI ${uri} invokes no function of the template${streaming ? ' with response streaming' : ''}`);
    node.methods.set(properties.HttpMethod as string, {
      type: 'proxy',
      functionLogicalId,
      streaming,
      timeoutMs: (integration.TimeoutInMillis as number | undefined) ?? DEFAULT_INTEGRATION_TIMEOUT_MS,
    });
    routes.push({ method: properties.HttpMethod as string, resourcePath: node.path, functionLogicalId, streaming });
  }
  return routes;
}

/** Who may invoke which function: the resource policies the permissions add. */
function invokePermissions(template: StackTemplate, resolver: TemplateResolver): RestApi['mayInvoke'] {
  const permissions = ofType(template, 'AWS::Lambda::Permission').map(([, permission]) => resolver.resolve(permission.Properties) as Record<string, string>);
  return (functionLogicalId, sourceArn) => {
    const arn = resolver.resolve({ 'Fn::GetAtt': [functionLogicalId, 'Arn'] }) as string;
    return permissions.some(
      (permission) =>
        permission.Action === 'lambda:InvokeFunction' &&
        permission.Principal === 'apigateway.amazonaws.com' &&
        (permission.FunctionName === arn || permission.FunctionName === functionLogicalId) &&
        arnLike(permission.SourceArn ?? '*', sourceArn),
    );
  };
}

/** IAM `ArnLike`: `*` any run of characters, `?` one. */
function arnLike(pattern: string, arn: string): boolean {
  const regex = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${regex}$`).test(arn);
}

/**
 * Each custom domain name's base paths mapping the API's stage (`''` for the root), by hostname.
 * A domain name must be covered by the certificate it names, when the template makes that
 * certificate: API Gateway refuses to create it otherwise.
 */
function customDomainMappings(template: StackTemplate, resolver: TemplateResolver, restApiId: string, stageId: string): Map<string, string[]> {
  const resources = Object.entries(template.Resources);
  const mappings = new Map<string, string[]>();
  for (const [logicalId, domain] of resources.filter(([, resource]) => resource.Type === 'AWS::ApiGateway::DomainName')) {
    const hostname = String(resolver.resolve(domain.Properties!.DomainName)).toLowerCase();
    // A certificate of the template is named by Ref; an existing one by its ARN, whose names the template does not know.
    const certificateId = (domain.Properties!.RegionalCertificateArn as { Ref?: string }).Ref;
    const certificate = certificateId === undefined ? undefined : template.Resources[certificateId];
    if (certificate?.Type === 'AWS::CertificateManager::Certificate') {
      const names = [certificate.Properties!.DomainName, ...(certificate.Properties!.SubjectAlternativeNames ?? [])].map((name: unknown) => String(resolver.resolve(name)).toLowerCase());
      if (!names.some((name) => name === hostname || (name.startsWith('*.') && hostname.slice(hostname.indexOf('.')) === name.slice(1)))) {
        throw new Error(`${logicalId}: its certificate covers ${names.join(', ')}, not ${hostname}`);
      }
    }
    const basePaths = resources
      .filter(([, resource]) => resource.Type === 'AWS::ApiGateway::BasePathMapping' && (resource.Properties?.DomainName as { Ref?: string })?.Ref === logicalId)
      .map(([mappingId, mapping]) => {
        const { RestApiId, Stage, BasePath } = mapping.Properties!;
        if (RestApiId?.Ref !== restApiId || Stage?.Ref !== stageId) throw new Error(`${mappingId}: maps no stage of ${restApiId}`);
        return BasePath === undefined || BasePath === '(none)' ? '' : String(BasePath);
      });
    mappings.set(hostname, basePaths);
  }
  return mappings;
}

/** How many leading path segments a custom domain's base path takes, or undefined when no mapping serves the path. */
export function mappedSegments(basePaths: readonly string[] | undefined, segments: readonly string[]): number | undefined {
  if (!basePaths) return undefined;
  if (basePaths.includes(segments[0]!)) return 1;
  return basePaths.includes('') ? 0 : undefined;
}

/** The resource a path names: static path parts win over parameters, as in API Gateway. */
export function matchResource(node: ResourceNode, segments: string[]): { node: ResourceNode; pathParameters: Record<string, string> } | undefined {
  if (segments.length === 0 || (segments.length === 1 && segments[0] === '' && node.path === '/')) return { node, pathParameters: {} };
  const [segment, ...rest] = segments as [string, ...string[]];
  if (segment === '') return undefined;
  const candidates = [...node.children.filter((child) => child.pathPart === segment), ...node.children.filter((child) => /^\{[^}]+\}$/.test(child.pathPart))];
  for (const child of candidates) {
    const found = matchResource(child, rest);
    if (!found) continue;
    const parameter = /^\{([^}]+)\}$/.exec(child.pathPart)?.[1];
    return parameter ? { node: found.node, pathParameters: { [parameter]: segment, ...found.pathParameters } } : found;
  }
  return undefined;
}
