import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { createDevCertificateAuthority, type DevCertificateAuthority } from '../../../local/dev-certificates';
import type { StandInAuthorizer } from '../iam/iam-gate';
import { BedrockError, converseDocument, encodeFrame, planAnswer, streamEvents, validateConverseBody, type Frame } from './bedrock-wire';
import { invokeDocument, invokeStreamFrames, validateInvokeBody } from './bedrock-invoke';

/** Token counts a scripted reply reports in place of the counted ones. */
export interface StandInUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** One scripted answer to the next request. Unscripted requests get { kind: 'text' }. */
export type BedrockReply =
  | { kind: 'text'; text?: string; stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'guardrail_intervened' | 'content_filtered'; usage?: StandInUsage }
  | { kind: 'tools'; calls: { name: string; input: Record<string, unknown> }[]; text?: string; thinking?: string; usage?: StandInUsage }
  | { kind: 'thinking'; thinking: string; text: string; usage?: StandInUsage }
  | { kind: 'status'; status: number; errorType: string; message: string } // e.g. 429 ThrottlingException, 503 ServiceUnavailableException, 400 ValidationException
  | { kind: 'stream-error'; afterDeltas: number; errorType: string; message: string }; // exception frame mid-stream, e.g. modelStreamErrorException

/** A request as it arrived (refused ones included): raw path, decoded model id, headers, parsed JSON body (or the raw text). */
export interface ReceivedBedrockRequest {
  path: string;
  modelId: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  httpVersion: string;
}

/** A running Bedrock Runtime stand-in (Converse and ConverseStream over HTTP/2 with TLS). */
export interface BedrockStandIn {
  /** `https://127.0.0.1:<port>`: the endpoint (SDK `endpoint`, gateway `baseUrl`). */
  baseUrl: string;
  region: string;
  /** PEM of the CA that issued the server certificate. */
  caPem: string;
  received: ReceivedBedrockRequest[];
  /** Queues replies; each valid request takes the next one (refused requests take none). */
  script(...replies: BedrockReply[]): void;
  /** Forgets the queued replies and the received requests. */
  reset(): void;
  stop(): Promise<void>;
}

/** How long a signature stays valid either side of the server's clock, as AWS allows. */
const SIGNATURE_WINDOW_MS = 5 * 60_000;
const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/;
/** Errors the front door of every AWS service answers, in its own namespace. */
const CORAL_ERRORS = new Set(['UnknownOperationException', 'MissingAuthenticationTokenException', 'IncompleteSignatureException', 'InvalidSignatureException', 'UnrecognizedClientException', 'SerializationException']);
/** The HTTP error a `stream-error` reply becomes on `converse`, which has no stream to break. */
const NON_STREAM_ERRORS: Record<string, [string, number]> = {
  modelStreamErrorException: ['ModelErrorException', 424],
  internalServerException: ['InternalServerException', 500],
  throttlingException: ['ThrottlingException', 429],
  validationException: ['ValidationException', 400],
  serviceUnavailableException: ['ServiceUnavailableException', 503],
  modelTimeoutException: ['ModelTimeoutException', 408],
};

/** The ARN IAM sees for a model id: an ARN as given, an inference profile (placeholder account: the gate takes the stack's), or a foundation model. */
function modelArn(modelId: string, region: string): string {
  if (modelId.startsWith('arn:')) return modelId;
  if (/^(us|eu|apac|us-gov|jp|au|ca|global)\./.test(modelId)) return `arn:aws:bedrock:${region}:111111111111:inference-profile/${modelId}`;
  return `arn:aws:bedrock:${region}::foundation-model/${modelId}`;
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(',') : value);

/**
 * Starts a strict local Amazon Bedrock Runtime for the Converse API: `POST /model/{modelId}/converse`
 * and `/converse-stream`, and InvokeModel for Anthropic's models (`/invoke`, `/invoke-with-response-stream`), over HTTPS (HTTP/2, HTTP/1.1 allowed) with a certificate from its own CA.
 * Every request must carry a valid SigV4 signature for `options.credentials`, service `bedrock`,
 * `options.region`; the body is checked as the service checks it; answers and errors take the
 * service's wire form, so `@aws-sdk/client-bedrock-runtime` reads them as it reads the real ones.
 */
export async function startBedrockStandIn(options: {
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Model ids, inference profile ids or ARNs it serves. */
  models: readonly string[];
  /**
   * Decides each signed request as IAM would (test/support/iam/iam-gate.ts): the action
   * (`bedrock:InvokeModel`, or `...WithResponseStream` for a stream), the signer's access key id
   * and the ARN the model id names. A string is the AccessDeniedException's message.
   */
  authorize?: StandInAuthorizer;
  /** The CA that issues its certificate (one a function process already trusts). @default a CA of its own */
  ca?: DevCertificateAuthority;
}): Promise<BedrockStandIn> {
  const ca = options.ca ?? createDevCertificateAuthority({ commonName: 'Bedrock stand-in CA' });
  const { certPem, keyPem } = ca.issueServerCertificate(['127.0.0.1', 'localhost']);
  const received: ReceivedBedrockRequest[] = [];
  const replies: BedrockReply[] = [];
  const signer = new SignatureV4({ service: 'bedrock', region: options.region, credentials: options.credentials, sha256: Sha256, applyChecksum: false });

  async function handle(request: Http2ServerRequest, response: Http2ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = request.url;
    const [path = '', query = ''] = url.split('?', 2);
    const route = ROUTE.exec(path);
    const modelId = route ? safeDecode(route[1]!) : '';
    const body = parseBody(raw);
    received.push({ path: url, modelId, headers: { ...request.headers }, body, httpVersion: request.httpVersion });
    if (request.method !== 'POST' || !route) throw new BedrockError('UnknownOperationException', 'Unknown operation', 404);
    await verifySignature(request, path, query, raw);
    if (options.authorize) {
      const accessKeyId = /Credential=([^/]+)\//.exec(single(request.headers.authorization) ?? '')![1]!;
      const action = route[2]!.endsWith('stream') ? 'bedrock:InvokeModelWithResponseStream' : 'bedrock:InvokeModel';
      const decision = await options.authorize({ action, accessKeyId, resource: modelArn(modelId, options.region) });
      if (decision !== true) throw new BedrockError('AccessDeniedException', decision, 403);
    }
    if (!options.models.includes(modelId)) throw new BedrockError('ValidationException', 'The provided model identifier is invalid.');
    if (typeof body !== 'object' || body === null) throw new BedrockError('SerializationException', 'The request body is not a JSON document.');
    const stream = route[2]!.endsWith('stream');
    // InvokeModel takes the model's own API: Anthropic's Messages API for Anthropic's models.
    const invoke = route[2]!.startsWith('invoke');
    if (invoke) validateInvokeBody(body as Record<string, unknown>, modelId);
    else validateConverseBody(body, stream);
    const reply = replies.shift() ?? { kind: 'text' };
    if (reply.kind === 'status') throw new BedrockError(reply.errorType, reply.message, reply.status);
    if (reply.kind === 'stream-error' && !stream) {
      const [type, status] = NON_STREAM_ERRORS[lowerFirst(reply.errorType)] ?? [reply.errorType, 500];
      throw new BedrockError(type, reply.message, status);
    }
    const answer = planAnswer(reply.kind === 'stream-error' ? { kind: 'text' } : reply, body as Record<string, unknown>);
    if (!stream) return sendJson(response, 200, invoke ? invokeDocument(answer, modelId) : converseDocument(answer));
    let frames = invoke ? invokeStreamFrames(answer, modelId) : streamEvents(answer);
    if (reply.kind === 'stream-error') frames = breakStream(frames, reply);
    await sendStream(response, frames);
  }

  async function verifySignature(request: Http2ServerRequest, path: string, query: string, body: Buffer): Promise<void> {
    const header = (name: string) => single(request.headers[name]);
    const authorization = header('authorization');
    if (!authorization) throw new BedrockError('MissingAuthenticationTokenException', 'Missing Authentication Token', 403);
    const parts = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;:-]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
    if (!parts) throw new BedrockError('IncompleteSignatureException', `Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.`, 403);
    const [, accessKeyId, day, region, service, signedHeaders = '', signature = ''] = parts;
    const invalid = (message: string) => new BedrockError('InvalidSignatureException', message, 403);
    const unrecognized = new BedrockError('UnrecognizedClientException', 'The security token included in the request is invalid.', 403);
    if (accessKeyId !== options.credentials.accessKeyId) throw unrecognized;
    if (header('x-amz-security-token') !== options.credentials.sessionToken) throw unrecognized;
    const amzDate = header('x-amz-date') ?? '';
    const signedAt = parseAmzDate(amzDate);
    if (signedAt === undefined) throw new BedrockError('IncompleteSignatureException', `Authorization header requires existence of a valid 'X-Amz-Date' header.`, 403);
    const now = Date.now();
    if (signedAt.getTime() < now - SIGNATURE_WINDOW_MS) throw invalid(`Signature expired: ${amzDate} is now earlier than ${formatAmzDate(new Date(now - SIGNATURE_WINDOW_MS))}.`);
    if (signedAt.getTime() > now + SIGNATURE_WINDOW_MS) throw invalid(`Signature not yet current: ${amzDate} is still later than ${formatAmzDate(new Date(now + SIGNATURE_WINDOW_MS))}.`);
    if (day !== amzDate.slice(0, 8)) throw invalid('Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.');
    if (region !== options.region) throw invalid(`Credential should be scoped to a valid region. `);
    if (service !== 'bedrock') throw invalid(`Credential should be scoped to correct service: 'bedrock'. `);
    const names = signedHeaders.split(';');
    // Over HTTP/2 the SDK signs `:authority` where HTTP/1.1 has `host`: either names the host.
    if (!names.includes('host') && !names.includes(':authority')) throw invalid(`'Host' must be a 'SignedHeader' in the AWS Authorization.`);
    const host = header(':authority') ?? header('host');
    const headers: Record<string, string> = {};
    for (const name of names.filter((name) => name !== 'x-amz-date' && name !== 'x-amz-security-token')) {
      const value = name === 'host' || name === ':authority' ? host : header(name);
      if (value !== undefined) headers[name] = value;
    }
    const mismatch = invalid('The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.');
    // The signature covers the body through this header when it is sent: it must be the body's hash.
    const claimedHash = header('x-amz-content-sha256');
    if (claimedHash !== undefined && claimedHash !== createHash('sha256').update(body).digest('hex')) throw mismatch;
    const resigned = await signer.sign(
      { method: request.method, protocol: 'https:', hostname: '127.0.0.1', path, query: parseQuery(query), headers, body },
      { signingDate: signedAt },
    );
    const expected = Buffer.from(/Signature=([0-9a-f]{64})/.exec(String(resigned.headers.authorization))![1]!);
    if (!timingSafeEqual(expected, Buffer.from(signature))) throw mismatch;
  }

  const server = createSecureServer({ allowHTTP1: true, cert: certPem, key: keyPem }, (request, response) => {
    handle(request, response).catch((error: unknown) => {
      const known = error instanceof BedrockError ? error : new BedrockError('InternalServerException', (error as Error).message, 500);
      if (!response.headersSent) sendError(response, known);
      else response.end();
    });
  });
  const sessions = new Set<Http2Session>();
  const sockets = new Set<TLSSocket>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  server.on('secureConnection', (socket: TLSSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });

  return {
    baseUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: options.region,
    caPem: ca.certPem,
    received,
    script: (...next) => void replies.push(...next),
    reset() {
      replies.length = 0;
      received.length = 0;
    },
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.destroy();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** The frames of a stream cut after its `afterDeltas`-th delta (its last one if it has fewer), then the exception. */
function breakStream(frames: Frame[], reply: Extract<BedrockReply, { kind: 'stream-error' }>): Frame[] {
  const deltas = frames.flatMap((frame, i) => (frame.type === 'contentBlockDelta' ? [i] : []));
  const cut = reply.afterDeltas <= 0 ? 1 : deltas[Math.min(reply.afterDeltas, deltas.length) - 1]! + 1;
  return [...frames.slice(0, cut), { messageType: 'exception', type: lowerFirst(reply.errorType), body: { message: reply.message } }];
}

async function sendStream(response: Http2ServerResponse, frames: Frame[]): Promise<void> {
  let closed = false;
  response.once('close', () => (closed = true));
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomUUID() });
  for (const [sequence, frame] of frames.entries()) {
    if (closed) return;
    response.write(encodeFrame(frame, sequence));
    // One frame per turn of the event loop, so that a client sees them arrive apart.
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

function sendJson(response: Http2ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-requestid': randomUUID(), ...headers });
  response.end(JSON.stringify(body));
}

function sendError(response: Http2ServerResponse, error: BedrockError): void {
  const namespace = CORAL_ERRORS.has(error.type) ? 'com.amazon.coral.service' : 'com.amazon.bedrock';
  const body = error.type === 'UnknownOperationException' ? { Output: { __type: 'com.amazon.coral.service#UnknownOperationException' }, Version: '1.0' } : { message: error.message };
  sendJson(response, error.status, body, { 'x-amzn-errortype': `${error.type}:http://internal.amazon.com/coral/${namespace}/` });
}

function parseBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function parseQuery(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(query)) {
    const before = out[key];
    out[key] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
  }
  return out;
}

/** `YYYYMMDDTHHMMSSZ`, the SigV4 date form. */
function parseAmzDate(text: string): Date | undefined {
  const parts = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second] = parts.slice(1).map(Number) as [number, number, number, number, number, number];
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}

function formatAmzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}
