import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Agent, createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { proxyEventIdentity } from '../../local/http-server';
import type { StackTemplate, TemplateResolver } from './cloud-assembly';
import type { LambdaProcess } from './lambda-process';

/**
 * A stand-in for an API Gateway REST API stage, built from the template alone: the
 * `AWS::ApiGateway::Resource` tree (PathPart, ParentId), each `AWS::ApiGateway::Method` and the
 * function its Lambda proxy integration URI names, the `AWS::Lambda::Permission`s that let
 * API Gateway invoke them, the stage name, the gateway responses, the API's compression and
 * binary settings, and the custom domain names (`AWS::ApiGateway::DomainName`) with their base
 * path mappings. It serves HTTPS for the execute-api hostname (the stage name first in the path)
 * and for each custom domain name (the mapping's base path, if any, first), turns each request
 * into a REST API proxy event (payload 1.0) for that function's process, and answers from the
 * function's result; response-streaming integrations (`ResponseTransferMode: STREAM`) are
 * read as Lambda's HTTP integration stream (JSON prelude, eight NUL bytes, body) and relayed
 * as they arrive. Mock integrations (the CORS preflights) are answered from their integration
 * response: its status, its header mappings and what its mapping template sets (the subset of
 * Velocity the template uses, {@link renderMockTemplate}). Gateway responses map headers from
 * static values and from the request's headers (`method.request.header.*`). A HEAD answer has
 * no body, as Node's HTTP server (like API Gateway's) sends none.
 */
export interface ApiGatewayStandIn {
  /** `https://<api id>.execute-api.<region>.<url suffix>`: the API's invoke URL without the stage. */
  readonly origin: string;
  readonly hostname: string;
  readonly stageName: string;
  /** The custom domain names that map the stage, e.g. `api.example.com`. */
  readonly customDomains: readonly string[];
  /**
   * A `fetch` that reaches this gateway for its hostnames (execute-api and custom domains),
   * trusting its certificate: what DNS and a public certificate give a client of the real API. Answers compressed with gzip are
   * decompressed, as `fetch` does.
   */
  readonly fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The routes the template declares: method, resource path, the function logical id. */
  readonly routes: readonly { method: string; resourcePath: string; functionLogicalId: string; streaming: boolean }[];
  /** What the gateway did with each request, in order. */
  readonly requests: readonly GatewayRequestRecord[];
  stop(): Promise<void>;
}

export interface GatewayRequestRecord {
  readonly requestId: string;
  readonly method: string;
  /** The hostname the request was sent to (its Host header, without port). */
  readonly host: string;
  readonly path: string;
  /** The matched resource path, e.g. `/api/v1/keys/{hash}`. */
  readonly resource?: string;
  readonly functionLogicalId?: string;
  readonly event?: APIGatewayProxyEvent;
  status?: number;
  /** For a streaming integration: the prelude the function wrote, and how it wrote its body. */
  streamed?: { prelude: unknown; contentType: string; writes: number };
}

export interface ApiGatewayStandInOptions {
  readonly template: StackTemplate;
  /** Resolves the template; the REST API must already be created in it (its `Ref` is the API id). */
  readonly resolver: TemplateResolver;
  /** The running process of each function, by logical id. */
  readonly functions: ReadonlyMap<string, LambdaProcess>;
  /** A server certificate for the execute-api hostname and every custom domain name, and the CA that issued it. */
  readonly tls: { readonly certPem: string; readonly keyPem: string; readonly caPem: string };
}

type Integration =
  | { readonly type: 'proxy'; readonly functionLogicalId: string; readonly streaming: boolean; readonly timeoutMs: number }
  | { readonly type: 'mock'; readonly response: MockResponse };

/** The integration response of a mock integration: its status, header mappings and mapping template. */
interface MockResponse {
  readonly statusCode: number;
  readonly parameters: Readonly<Record<string, string>>;
  readonly template: string | undefined;
}

interface ResourceNode {
  readonly logicalId: string;
  readonly pathPart: string;
  readonly path: string;
  readonly children: ResourceNode[];
  readonly methods: Map<string, Integration>;
}

/** API Gateway's request payload cap. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/** Lambda's synchronous response payload cap. */
const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;

export async function startApiGatewayStandIn(options: ApiGatewayStandInOptions): Promise<ApiGatewayStandIn> {
  const { template, resolver } = options;
  const resources = Object.entries(template.Resources);
  const ofType = (type: string) => resources.filter(([, resource]) => resource.Type === type);

  const restApis = ofType('AWS::ApiGateway::RestApi');
  if (restApis.length !== 1) throw new Error(`expected one REST API in the template, found ${restApis.length}`);
  const [restApiId, restApi] = restApis[0]!;
  const apiId = resolver.resolve({ Ref: restApiId }) as string;
  const refersToApi = (value: unknown) => (value as { Ref?: string })?.Ref === restApiId;
  const stages = ofType('AWS::ApiGateway::Stage').filter(([, stage]) => refersToApi(stage.Properties?.RestApiId));
  if (stages.length !== 1) throw new Error(`expected one stage of ${restApiId}, found ${stages.length}`);
  const stageName = stages[0]![1].Properties!.StageName as string;
  const { region, account } = resolver.env;
  const hostname = `${apiId}.execute-api.${region}.${resolver.urlSuffix}`;
  const basePaths = customDomainMappings(template, resolver, restApiId, stages[0]![0]);
  const binaryMediaTypes = (restApi.Properties?.BinaryMediaTypes ?? []) as string[];
  const minimumCompressionSize = restApi.Properties?.MinimumCompressionSize as number | undefined;

  // The resource tree, from each resource's PathPart and ParentId.
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
  for (const [logicalId, resource] of ofType('AWS::ApiGateway::Resource')) {
    if (refersToApi(resource.Properties?.RestApiId)) nodeOf(logicalId);
  }

  // Each method's integration, and the function its URI names.
  const functionByArn = new Map<string, string>();
  for (const [logicalId] of ofType('AWS::Lambda::Function')) functionByArn.set(resolver.resolve({ 'Fn::GetAtt': [logicalId, 'Arn'] }), logicalId);
  const routes: ApiGatewayStandIn['routes'][number][] = [];
  for (const [logicalId, method] of ofType('AWS::ApiGateway::Method')) {
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
    const target = new RegExp(`^arn:${resolver.partition}:apigateway:${region}:lambda:path/${action}$`).exec(uri)?.[1];
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

  // Who may invoke which function: the resource policies the permissions add.
  const permissions = ofType('AWS::Lambda::Permission').map(([, permission]) => resolver.resolve(permission.Properties) as Record<string, string>);
  const mayInvoke = (functionLogicalId: string, sourceArn: string) => {
    const arn = resolver.resolve({ 'Fn::GetAtt': [functionLogicalId, 'Arn'] }) as string;
    return permissions.some(
      (permission) =>
        permission.Action === 'lambda:InvokeFunction' &&
        permission.Principal === 'apigateway.amazonaws.com' &&
        (permission.FunctionName === arn || permission.FunctionName === functionLogicalId) &&
        arnLike(permission.SourceArn ?? '*', sourceArn),
    );
  };

  const gatewayResponses = new Map(
    ofType('AWS::ApiGateway::GatewayResponse')
      .filter(([, response]) => refersToApi(response.Properties?.RestApiId))
      .map(([, response]) => [response.Properties!.ResponseType as string, resolver.resolve(response.Properties) as Record<string, any>]),
  );
  /** A gateway response: the template's for its type (or the DEFAULT_4XX/5XX one), else API Gateway's default. */
  const gatewayResponse = (response: ServerResponse, requestId: string, type: string, status: number, message: string): number => {
    const custom = gatewayResponses.get(type) ?? gatewayResponses.get(status < 500 ? 'DEFAULT_4XX' : 'DEFAULT_5XX');
    const headers: OutgoingHttpHeaders = { 'Content-Type': 'application/json', 'x-amzn-RequestId': requestId, 'x-amzn-ErrorType': type };
    for (const [name, value] of Object.entries<string>(custom?.ResponseParameters ?? {})) {
      const header = /^gatewayresponse\.header\.(.+)$/.exec(name)?.[1];
      const mapped = header === undefined ? undefined : mappedValue(value, response.req);
      if (header && mapped !== undefined) headers[header] = mapped;
    }
    const statusCode = custom?.StatusCode ? Number(custom.StatusCode) : status;
    const body = (custom?.ResponseTemplates?.['application/json'] as string | undefined)
      ?.replaceAll('$context.error.messageString', JSON.stringify(message))
      .replaceAll('$context.error.message', message)
      .replaceAll('$context.requestId', requestId) ?? JSON.stringify({ message });
    response.writeHead(statusCode, { ...headers, 'Content-Length': Buffer.byteLength(body) });
    response.end(body);
    return statusCode;
  };

  const requests: GatewayRequestRecord[] = [];

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const method = request.method ?? 'GET';
    const rawPath = (request.url ?? '/').split('?')[0]!;
    const host = String(request.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const record: GatewayRequestRecord = { requestId, method, host, path: rawPath };
    requests.push(record);
    const segments = rawPath.split('/').slice(1);
    // Below the stage on the execute-api hostname; below the mapping's base path on a custom domain.
    const skipped = host === hostname ? (segments[0] === stageName ? 1 : undefined) : mappedSegments(basePaths.get(host), segments);
    if (skipped === undefined) {
      // No such stage or mapping: refused before any API of the account is looked at.
      const body = JSON.stringify({ message: 'Forbidden' });
      response.writeHead(403, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': requestId }).end(body);
      record.status = 403;
      return;
    }
    // REST APIs pass a custom domain's path whole, base path included, and the execute-api one without the stage.
    const path = host === hostname ? `/${segments.slice(1).join('/')}` : rawPath;
    const match = matchResource(root, segments.slice(skipped));
    const integration = match?.node.methods.get(method) ?? match?.node.methods.get('ANY');
    // REST APIs answer an unknown resource and an unknown method on a known one alike.
    if (!match || !integration) {
      record.status = gatewayResponse(response, requestId, 'MISSING_AUTHENTICATION_TOKEN', 403, 'Missing Authentication Token');
      return;
    }
    if (integration.type === 'mock') {
      Object.assign(record, { resource: match.node.path });
      record.status = answerMock(integration.response, request, response, requestId);
      return;
    }
    Object.assign(record, { resource: match.node.path, functionLogicalId: integration.functionLogicalId });

    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > MAX_REQUEST_BYTES) {
        record.status = gatewayResponse(response, requestId, 'REQUEST_TOO_LARGE', 413, 'Request Too Long');
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const body = Buffer.concat(chunks);
    const event = proxyEvent(request, { requestId, host, path, stagePath: rawPath, node: match.node, pathParameters: match.pathParameters, body });
    Object.assign(record, { event });

    const sourceArn = `arn:${resolver.partition}:execute-api:${region}:${account}:${apiId}/${stageName}/${method}/${segments.slice(skipped).join('/')}`;
    if (!mayInvoke(integration.functionLogicalId, sourceArn)) {
      // "Execution failed due to configuration error: Invalid permissions on Lambda function"
      record.status = gatewayResponse(response, requestId, 'API_CONFIGURATION_ERROR', 500, 'Internal server error');
      return;
    }
    const fn = options.functions.get(integration.functionLogicalId);
    if (!fn) throw new Error(`no process runs ${integration.functionLogicalId}`);
    if (integration.streaming) return relayStream(fn, event, response, record);

    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), integration.timeoutMs).unref());
    const outcome = await Promise.race([fn.invoke(event), timeout]);
    if (outcome === 'timeout') {
      record.status = gatewayResponse(response, requestId, 'INTEGRATION_TIMEOUT', 504, 'Endpoint request timed out');
      return;
    }
    const result = outcome.ok && outcome.payload.length <= MAX_RESPONSE_BYTES ? proxyResult(outcome.payload) : undefined;
    if (!result) {
      // A function error, a payload over Lambda's limit, or a malformed proxy result.
      record.status = gatewayResponse(response, requestId, 'DEFAULT_5XX', 502, 'Internal server error');
      return;
    }
    const headers = mergedHeaders(result.headers, result.multiValueHeaders);
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
    const contentType = String(Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type')![1]);
    const accept = String(request.headers.accept ?? '').split(',')[0]!.trim();
    const binary = result.isBase64Encoded && [accept, contentType].some((type) => binaryMediaTypes.some((pattern) => mediaTypeMatches(pattern, type)));
    let payload = binary ? Buffer.from(result.body ?? '', 'base64') : Buffer.from(result.body ?? '', 'utf8');
    if (minimumCompressionSize !== undefined && payload.length >= minimumCompressionSize && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      payload = gzipSync(payload);
      headers['Content-Encoding'] = 'gzip';
    }
    response.writeHead(result.statusCode, { ...headers, 'x-amzn-RequestId': requestId, 'Content-Length': payload.length });
    response.end(payload);
    record.status = result.statusCode;
  }

  async function relayStream(fn: LambdaProcess, event: APIGatewayProxyEvent, response: ServerResponse, record: GatewayRequestRecord) {
    const invocation = fn.invokeStreaming(event);
    let head: Buffer | null = Buffer.alloc(0);
    let prelude: { statusCode?: number; headers?: Record<string, string>; multiValueHeaders?: Record<string, string[]>; cookies?: string[] } = {};
    const send = async (chunk: Buffer) => {
      if (response.destroyed || response.write(chunk)) return;
      await new Promise((resolve) => response.once('drain', resolve).once('close', resolve));
    };
    for await (const chunk of invocation.body) {
      // A client that went away gets nothing more; the function runs on, as in Lambda.
      if (response.destroyed) continue;
      if (head === null) {
        await send(chunk as Buffer);
        continue;
      }
      head = Buffer.concat([head, chunk as Buffer]);
      const delimiter = head.indexOf(Buffer.alloc(8));
      if (delimiter < 0) continue;
      try {
        prelude = JSON.parse(head.subarray(0, delimiter).toString('utf8'));
      } catch {
        continue;
      }
      const rest = head.subarray(delimiter + 8);
      head = null;
      const headers = mergedHeaders(prelude.headers, prelude.multiValueHeaders);
      if (prelude.cookies?.length) headers['Set-Cookie'] = prelude.cookies;
      response.writeHead(prelude.statusCode ?? 200, { ...headers, 'x-amzn-RequestId': record.requestId });
      response.flushHeaders();
      if (rest.length > 0) await send(rest);
    }
    const outcome = await invocation.finished;
    if (head !== null) {
      // No JSON prelude and delimiter: not an HTTP integration response.
      record.status = gatewayResponse(response, record.requestId, 'DEFAULT_5XX', 502, 'Internal server error');
      return;
    }
    record.status = prelude.statusCode ?? 200;
    record.streamed = { prelude, contentType: outcome.ok ? outcome.contentType : '', writes: outcome.ok ? outcome.writes : 0 };
    // A function error after the headers went out cuts the response short.
    if (outcome.ok) response.end();
    else response.destroy();
  }

  function proxyEvent(
    request: IncomingMessage,
    at: { requestId: string; host: string; path: string; stagePath: string; node: ResourceNode; pathParameters: Record<string, string>; body: Buffer },
  ): APIGatewayProxyEvent {
    const sourceIp = (request.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    const traceId = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
    const headers: Record<string, string> = {};
    const multiValueHeaders: Record<string, string[]> = {};
    const raw = [...request.rawHeaders, 'X-Forwarded-For', sourceIp, 'X-Forwarded-Port', '443', 'X-Forwarded-Proto', 'https', 'X-Amzn-Trace-Id', traceId];
    for (let i = 0; i < raw.length; i += 2) {
      // The last value of a repeated header, and every value in the multi-value map.
      headers[raw[i]!] = raw[i + 1]!;
      (multiValueHeaders[raw[i]!] ??= []).push(raw[i + 1]!);
    }
    const search = new URL(request.url ?? '/', 'https://gateway').searchParams;
    const query: Record<string, string> = {};
    const multiValueQuery: Record<string, string[]> = {};
    for (const [name, value] of search) {
      query[name] = value;
      (multiValueQuery[name] ??= []).push(value);
    }
    const hasQuery = Object.keys(query).length > 0;
    const now = new Date();
    return {
      resource: at.node.path,
      // REST APIs pass the path and its parameters as the client encoded them.
      path: at.path,
      httpMethod: request.method ?? 'GET',
      headers,
      multiValueHeaders,
      queryStringParameters: hasQuery ? query : null,
      multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
      pathParameters: Object.keys(at.pathParameters).length > 0 ? at.pathParameters : null,
      stageVariables: null,
      requestContext: {
        accountId: account,
        apiId,
        authorizer: null,
        domainName: at.host,
        domainPrefix: at.host.split('.')[0]!,
        extendedRequestId: randomBytes(8).toString('base64url'),
        httpMethod: request.method ?? 'GET',
        identity: proxyEventIdentity(sourceIp, request.headers['user-agent']),
        path: at.stagePath,
        protocol: `HTTP/${request.httpVersion}`,
        requestId: at.requestId,
        requestTime: now.toUTCString(),
        requestTimeEpoch: now.getTime(),
        resourceId: at.node.logicalId,
        resourcePath: at.node.path,
        stage: stageName,
      },
      body: at.body.length > 0 ? at.body.toString('utf8') : null,
      isBase64Encoded: false,
    };
  }

  const server: Server = createServer({ cert: options.tls.certPem, key: options.tls.keyPem }, (request, response) => {
    void serve(request, response).catch((error: Error) => {
      console.error(`API Gateway stand-in: ${error.stack ?? error.message}`);
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/json' }).end(JSON.stringify({ message: 'Internal server error' }));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, ca: options.tls.caPem });

  return {
    origin: `https://${hostname}`,
    hostname,
    stageName,
    customDomains: [...basePaths.keys()],
    routes,
    requests,
    fetch: (input, init) => loopbackFetch(new Request(input, init), { hostnames: [hostname, ...basePaths.keys()], port, agent }),
    async stop() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A mock integration's one integration response, as CDK writes it for a CORS preflight. */
function mockResponse(logicalId: string, integration: Record<string, any>): MockResponse {
  const responses = (integration.IntegrationResponses ?? []) as Record<string, any>[];
  if (responses.length !== 1 || responses[0]!.SelectionPattern !== undefined) {
    throw new Error(`${logicalId}: only mock integrations with one default integration response are supported`);
  }
  const [only] = responses;
  return { statusCode: Number(only!.StatusCode), parameters: only!.ResponseParameters ?? {}, template: only!.ResponseTemplates?.['application/json'] };
}

/** A mock integration's answer: its status, its header mappings, then what its template overrides. */
function answerMock(mock: MockResponse, request: IncomingMessage, response: ServerResponse, requestId: string): number {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'x-amzn-RequestId': requestId };
  for (const [name, value] of Object.entries(mock.parameters)) {
    const header = /^method\.response\.header\.(.+)$/.exec(name)?.[1];
    const mapped = header === undefined ? undefined : mappedValue(value, request);
    if (header && mapped !== undefined) headers[header] = mapped;
  }
  const rendered = mock.template === undefined ? { body: '', headers: {} } : renderMockTemplate(mock.template, request);
  Object.assign(headers, rendered.headers);
  response.writeHead(mock.statusCode, { ...headers, 'Content-Length': Buffer.byteLength(rendered.body) });
  response.end(rendered.body);
  return mock.statusCode;
}

/** A header mapping's value: a static `'value'`, or a header of the request; undefined for a header not sent. */
function mappedValue(mapping: string, request: IncomingMessage): string | undefined {
  const literal = /^'(.*)'$/.exec(mapping);
  if (literal) return literal[1]!;
  const fromRequest = /^method\.request\.header\.(.+)$/.exec(mapping)?.[1];
  if (fromRequest === undefined) throw new Error(`unsupported header mapping ${mapping}`);
  const value = request.headers[fromRequest.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Runs a mock integration's mapping template, in the subset of Velocity CDK's CORS preflight
 * template uses: `#set`, `#if` (comparisons with `==` joined by `||`) and `#end`, variables, string
 * literals, `$input.params().header.get("Name")` (the header as the client spelt its name, ""
 * when absent) and `$context.responseOverride.header.Name` as a target. Anything else throws, so
 * a template the stand-in cannot read fails the suite instead of being misread.
 */
export function renderMockTemplate(template: string, request: IncomingMessage): { body: string; headers: Record<string, string> } {
  const variables = new Map<string, string>();
  const headers: Record<string, string> = {};
  const sentHeader = (name: string) => {
    for (let i = 0; i < request.rawHeaders.length; i += 2) if (request.rawHeaders[i] === name) return request.rawHeaders[i + 1]!;
    return '';
  };
  const value = (expression: string): string => {
    const trimmed = expression.trim();
    const header = /^\$input\.params\(\)\.header\.get\("([^"]+)"\)$/.exec(trimmed);
    if (header) return sentHeader(header[1]!);
    const literal = /^"([^"]*)"$/.exec(trimmed);
    if (literal) return literal[1]!;
    if (/^\$[A-Za-z]\w*$/.test(trimmed)) return variables.get(trimmed.slice(1)) ?? '';
    throw new Error(`unsupported template expression ${trimmed}`);
  };
  const holds = (condition: string) =>
    condition.split('||').some((comparison) => {
      const [left, right, ...rest] = comparison.split('==');
      if (right === undefined || rest.length > 0) throw new Error(`unsupported template condition ${comparison}`);
      return value(left!) === value(right);
    });
  const active: boolean[] = [];
  const body: string[] = [];
  for (const line of template.split('\n').map((text) => text.trim())) {
    const running = active.every(Boolean);
    const set = /^#set\(\$([\w.-]+) = (.+)\)$/.exec(line);
    const opened = /^#if\((.+)\)$/.exec(line);
    if (opened) active.push(running && holds(opened[1]!));
    else if (line === '#end') active.pop();
    else if (set && running) {
      const target = /^context\.responseOverride\.header\.(.+)$/.exec(set[1]!)?.[1];
      if (target) headers[target] = value(set[2]!);
      else if (/^[A-Za-z]\w*$/.test(set[1]!)) variables.set(set[1]!, value(set[2]!));
      else throw new Error(`unsupported template target $${set[1]}`);
    } else if (!set && line.startsWith('#')) throw new Error(`unsupported template directive ${line}`);
    else if (!set && running && line !== '') body.push(line);
  }
  return { body: body.join('\n'), headers };
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
function mappedSegments(basePaths: readonly string[] | undefined, segments: readonly string[]): number | undefined {
  if (!basePaths) return undefined;
  if (basePaths.includes(segments[0]!)) return 1;
  return basePaths.includes('') ? 0 : undefined;
}

/** The resource a path names: static path parts win over parameters, as in API Gateway. */
function matchResource(node: ResourceNode, segments: string[]): { node: ResourceNode; pathParameters: Record<string, string> } | undefined {
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

interface ProxyResult {
  statusCode: number;
  headers?: Record<string, unknown>;
  multiValueHeaders?: Record<string, unknown[]>;
  body?: string;
  isBase64Encoded?: boolean;
}

/** The function's payload as a Lambda proxy result, or undefined when API Gateway would call it malformed. */
function proxyResult(payload: string): ProxyResult | undefined {
  let result: unknown;
  try {
    result = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return undefined;
  const { statusCode, headers, multiValueHeaders, body, isBase64Encoded } = result as Record<string, unknown>;
  const isObject = (value: unknown) => value === undefined || value === null || (typeof value === 'object' && !Array.isArray(value));
  if (typeof statusCode !== 'number' || !Number.isInteger(statusCode) || !isObject(headers) || !isObject(multiValueHeaders)) return undefined;
  if (body !== undefined && body !== null && typeof body !== 'string') return undefined;
  if (isBase64Encoded !== undefined && typeof isBase64Encoded !== 'boolean') return undefined;
  return result as ProxyResult;
}

/** `headers` and `multiValueHeaders` as API Gateway merges them: a name in both keeps the multi-value list. */
function mergedHeaders(headers: Record<string, unknown> | null | undefined, multiValueHeaders: Record<string, unknown[]> | null | undefined): Record<string, string | string[]> {
  const merged: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers ?? {})) merged[name] = String(value);
  for (const [name, values] of Object.entries(multiValueHeaders ?? {})) merged[name] = values.map(String);
  return merged;
}

function mediaTypeMatches(pattern: string, type: string): boolean {
  const bare = type.split(';')[0]!.trim().toLowerCase();
  const [patternType, patternSubtype] = pattern.toLowerCase().split('/');
  const [typeType, typeSubtype] = bare.split('/');
  return (patternType === '*' || patternType === typeType) && (patternSubtype === '*' || patternSubtype === typeSubtype);
}

/** IAM `ArnLike`: `*` any run of characters, `?` one. */
function arnLike(pattern: string, arn: string): boolean {
  const regex = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${regex}$`).test(arn);
}

/** One request to the gateway over a loopback connection, presented as the public hostname (SNI and Host). */
async function loopbackFetch(request: Request, target: { hostnames: readonly string[]; port: number; agent: Agent }): Promise<Response> {
  const url = new URL(request.url);
  if (url.protocol !== 'https:' || !target.hostnames.includes(url.hostname) || (url.port !== '' && url.port !== '443')) {
    throw new TypeError(`this fetch reaches ${target.hostnames.map((hostname) => `https://${hostname}`).join(', ')} only, not ${url.origin}`);
  }
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { 'accept-encoding': 'gzip', ...Object.fromEntries(request.headers), host: url.hostname };
  if (body) headers['content-length'] = String(body.length);
  return new Promise<Response>((resolve, reject) => {
    const outgoing = httpsRequest(
      { host: '127.0.0.1', port: target.port, servername: url.hostname, agent: target.agent, method: request.method, path: `${url.pathname}${url.search}`, headers },
      (incoming) => {
        const responseHeaders = new Headers();
        for (let i = 0; i < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
        const status = incoming.statusCode ?? 0;
        const bodyless = [101, 204, 205, 304].includes(status) || request.method === 'HEAD';
        const stream = incoming.headers['content-encoding'] === 'gzip' ? incoming.pipe(createGunzip()) : incoming;
        resolve(new Response(bodyless ? null : (Readable.toWeb(stream) as ReadableStream), { status, statusText: incoming.statusMessage, headers: responseHeaders }));
      },
    );
    const abort = () => outgoing.destroy(request.signal.reason instanceof Error ? request.signal.reason : new Error('aborted'));
    if (request.signal.aborted) abort();
    else request.signal.addEventListener('abort', abort, { once: true });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
