import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { RouteMatch } from '../lambdas/routes';

/** What API Gateway knows of a routed request when it builds the proxy event. */
export interface RoutedRequest {
  url: URL;
  method: string;
  match: RouteMatch;
  body: Buffer;
  stage: string;
  requestId: string;
}

/** The REST API proxy event API Gateway hands the function of a routed request. */
export function proxyEvent(request: IncomingMessage, { url, method, match, body, stage, requestId }: RoutedRequest): APIGatewayProxyEvent {
  const { single: headers, multi: multiValueHeaders } = valueMaps(pairs(request.rawHeaders), (known, value) => `${known},${value}`);
  const { single: query, multi: multiQuery } = valueMaps(url.searchParams, (_known, value) => value);
  const hasQuery = Object.keys(query).length > 0;
  const pathParameters: Record<string, string> = Object.assign(Object.create(null), match.pathParameters);
  return {
    resource: match.resource,
    path: url.pathname,
    httpMethod: method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null,
    stageVariables: null,
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      authorizer: null,
      protocol: `HTTP/${request.httpVersion}`,
      httpMethod: method,
      path: `/${stage}${url.pathname}`,
      stage,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: match.resource,
      identity: proxyEventIdentity(normalizeAddress(request.socket.remoteAddress), request.headers['user-agent']),
    },
  };
}

/** Node's raw headers, `[name, value, name, value, …]`, as pairs. */
function* pairs(raw: readonly string[]): Iterable<[string, string]> {
  for (let i = 0; i < raw.length; i += 2) yield [raw[i]!, raw[i + 1]!];
}

/**
 * A proxy event's single-value and multi-value maps of headers or query parameters: every
 * value in the multi-value map, and in the single one the values a name repeats `join`ed.
 * The maps are keyed by client-chosen names, so they have no prototype: a name like
 * `constructor` or `__proto__` is a plain entry, not an inherited member.
 */
function valueMaps(entries: Iterable<[string, string]>, join: (known: string, value: string) => string) {
  const single: Record<string, string> = Object.create(null);
  const multi: Record<string, string[]> = Object.create(null);
  for (const [name, value] of entries) {
    single[name] = single[name] === undefined ? value : join(single[name], value);
    (multi[name] ??= []).push(value);
  }
  return { single, multi };
}

/** An invocation context whose deadline can be brought forward: a stop gives the requests under way the time it has left. */
export type LocalContext = Context & { endBy(at: number): void };

/** The invocation context a function's handler is given, with the function's deadline (30 s unless said). */
export function lambdaContext(functionName: string, requestId: string, timeoutMs = 30_000): LocalContext {
  let deadline = Date.now() + timeoutMs;
  return {
    endBy: (at) => {
      deadline = Math.min(deadline, at);
    },
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** `::ffff:127.0.0.1` is how node reports IPv4 on a dual-stack socket; API Gateway says `127.0.0.1`. */
function normalizeAddress(address: string | undefined): string {
  if (!address) return '0.0.0.0';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * `requestContext.identity` of a REST API proxy event for an unauthenticated caller: the
 * connection's address and the User-Agent, every IAM and Cognito field null.
 */
export function proxyEventIdentity(sourceIp: string, userAgent: string | undefined): APIGatewayProxyEvent['requestContext']['identity'] {
  return {
    sourceIp,
    userAgent: userAgent ?? null,
    accessKey: null,
    accountId: null,
    apiKey: null,
    apiKeyId: null,
    caller: null,
    clientCert: null,
    cognitoAuthenticationProvider: null,
    cognitoAuthenticationType: null,
    cognitoIdentityId: null,
    cognitoIdentityPoolId: null,
    principalOrgId: null,
    user: null,
    userArn: null,
  };
}
