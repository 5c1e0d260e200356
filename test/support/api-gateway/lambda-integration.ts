import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { LambdaProcess } from '../lambda-process';
import type { GatewayResponder } from './gateway-answers';
import type { RestApi } from './rest-api';
import type { GatewayRequestRecord } from './stand-in';

/** Lambda's synchronous response payload cap. */
const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

/** A request handed to a function's proxy integration: its event, the function, and where the answer goes. */
export interface ProxyInvocation {
  readonly fn: LambdaProcess;
  readonly event: APIGatewayProxyEvent;
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly record: GatewayRequestRecord;
  readonly gatewayResponse: GatewayResponder;
}

/** Invokes the function and answers from its proxy result, binary and compressed as the API's settings say. */
export async function answerFromResult(
  { fn, event, request, response, record, gatewayResponse }: ProxyInvocation,
  timeoutMs: number,
  api: Pick<RestApi, 'binaryMediaTypes' | 'minimumCompressionSize'>,
): Promise<void> {
  const { requestId } = record;
  const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref());
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
  const binary = result.isBase64Encoded && [accept, contentType].some((type) => api.binaryMediaTypes.some((pattern) => mediaTypeMatches(pattern, type)));
  let payload = binary ? Buffer.from(result.body ?? '', 'base64') : Buffer.from(result.body ?? '', 'utf8');
  const { minimumCompressionSize } = api;
  if (minimumCompressionSize !== undefined && payload.length >= minimumCompressionSize && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
    payload = gzipSync(payload);
    headers['Content-Encoding'] = 'gzip';
  }
  response.writeHead(result.statusCode, { ...headers, 'x-amzn-RequestId': requestId, 'Content-Length': payload.length });
  response.end(payload);
  record.status = result.statusCode;
}

/** Relays a response-streaming invocation: its JSON prelude as the status and headers, then the body as it arrives. */
export async function relayStream({ fn, event, response, record, gatewayResponse }: ProxyInvocation): Promise<void> {
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
