import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { StackTemplate, TemplateResolver } from '../cloud-assembly';
import type { LambdaProcess } from '../lambda-process';
import { answerMock, gatewayResponder } from './gateway-answers';
import { answerFromResult, relayStream } from './lambda-integration';
import { loopbackFetch } from './loopback-fetch';
import { proxyEvent } from './proxy-event';
import { mappedSegments, matchResource, readRestApi, type GatewayRoute } from './rest-api';

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
 * Velocity the template uses, see mock-template.ts). Gateway responses map headers from
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
  readonly routes: readonly GatewayRoute[];
  /** What the gateway did with each request, in order. */
  readonly requests: readonly GatewayRequestRecord[];
  stop(): Promise<void>;
}

/** What the gateway did with one request: where it went, the event it built, and the status it answered. */
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

/** The template and its resolver, the function processes, and the TLS material the stand-in serves with. */
export interface ApiGatewayStandInOptions {
  readonly template: StackTemplate;
  /** Resolves the template; the REST API must already be created in it (its `Ref` is the API id). */
  readonly resolver: TemplateResolver;
  /** The running process of each function, by logical id. */
  readonly functions: ReadonlyMap<string, LambdaProcess>;
  /** A server certificate for the execute-api hostname and every custom domain name, and the CA that issued it. */
  readonly tls: { readonly certPem: string; readonly keyPem: string; readonly caPem: string };
}

/** API Gateway's request payload cap. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Reads the template's REST API and serves it over HTTPS on a loopback port. */
export async function startApiGatewayStandIn(options: ApiGatewayStandInOptions): Promise<ApiGatewayStandIn> {
  const api = readRestApi(options.template, options.resolver);
  const { hostname, stageName, basePaths } = api;
  const gatewayResponse = gatewayResponder(api.gatewayResponses);
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
    const match = matchResource(api.root, segments.slice(skipped));
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
    const event = proxyEvent(request, { requestId, host, path, stagePath: rawPath, node: match.node, pathParameters: match.pathParameters, body }, api);
    Object.assign(record, { event });

    const sourceArn = `arn:${api.partition}:execute-api:${api.region}:${api.account}:${api.apiId}/${stageName}/${method}/${segments.slice(skipped).join('/')}`;
    if (!api.mayInvoke(integration.functionLogicalId, sourceArn)) {
      // "Execution failed due to configuration error: Invalid permissions on Lambda function"
      record.status = gatewayResponse(response, requestId, 'API_CONFIGURATION_ERROR', 500, 'Internal server error');
      return;
    }
    const fn = options.functions.get(integration.functionLogicalId);
    if (!fn) throw new Error(`no process runs ${integration.functionLogicalId}`);
    const invocation = { fn, event, request, response, record, gatewayResponse };
    if (integration.streaming) return relayStream(invocation);
    await answerFromResult(invocation, integration.timeoutMs, api);
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
    routes: api.routes,
    requests,
    fetch: (input, init) => loopbackFetch(new Request(input, init), { hostnames: [hostname, ...basePaths.keys()], port, agent }),
    async stop() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
