import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { renderMockTemplate } from './mock-template';

/** The integration response of a mock integration: its status, header mappings and mapping template. */
export interface MockResponse {
  readonly statusCode: number;
  readonly parameters: Readonly<Record<string, string>>;
  readonly template: string | undefined;
}

/** Sends a gateway response of a type and default status with a message; returns the status sent. */
export type GatewayResponder = (response: ServerResponse, requestId: string, type: string, status: number, message: string) => number;

/** A mock integration's one integration response, as CDK writes it for a CORS preflight. */
export function mockResponse(logicalId: string, integration: Record<string, any>): MockResponse {
  const responses = (integration.IntegrationResponses ?? []) as Record<string, any>[];
  if (responses.length !== 1 || responses[0]!.SelectionPattern !== undefined) {
    throw new Error(`${logicalId}: only mock integrations with one default integration response are supported`);
  }
  const [only] = responses;
  return { statusCode: Number(only!.StatusCode), parameters: only!.ResponseParameters ?? {}, template: only!.ResponseTemplates?.['application/json'] };
}

/** A mock integration's answer: its status, its header mappings, then what its template overrides. */
export function answerMock(mock: MockResponse, request: IncomingMessage, response: ServerResponse, requestId: string): number {
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

/**
 * The gateway responses of the template, by response type (resolved `AWS::ApiGateway::GatewayResponse`
 * properties): each answer is the one for its type (or the DEFAULT_4XX/5XX one), else API Gateway's default.
 */
export function gatewayResponder(gatewayResponses: ReadonlyMap<string, Record<string, any>>): GatewayResponder {
  return (response, requestId, type, status, message) => {
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
