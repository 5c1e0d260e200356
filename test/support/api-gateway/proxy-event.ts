import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { proxyEventIdentity } from '../../../local/http-server';
import type { ResourceNode, RestApi } from './rest-api';

/** Where a request landed: its id, host and paths, the resource it matched with its parameters, and its body. */
export interface MatchedRequest {
  readonly requestId: string;
  readonly host: string;
  /** The path the function sees: without the stage on the execute-api hostname. */
  readonly path: string;
  /** The path as sent. */
  readonly stagePath: string;
  readonly node: ResourceNode;
  readonly pathParameters: Record<string, string>;
  readonly body: Buffer;
}

/** The REST API proxy event (payload 1.0) API Gateway hands the function for a request. */
export function proxyEvent(request: IncomingMessage, at: MatchedRequest, api: Pick<RestApi, 'account' | 'apiId' | 'stageName'>): APIGatewayProxyEvent {
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
      accountId: api.account,
      apiId: api.apiId,
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
      stage: api.stageName,
    },
    body: at.body.length > 0 ? at.body.toString('utf8') : null,
    isBase64Encoded: false,
  };
}
