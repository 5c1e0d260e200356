import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/**
 * Lambda response streaming, as API Gateway REST APIs use it (`responseTransferMode: STREAM`):
 * the handler gets a writable stream, writes a JSON prelude (status and headers), eight NUL
 * bytes, then the body as it is produced.
 *
 * In Lambda the runtime provides the global `awslambda` with `streamifyResponse` and
 * `HttpResponseStream`; the local server speaks the same byte protocol
 * (local/http-server.ts), so one handler serves both.
 */
export type StreamingHandler = (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => Promise<void>;

/** The status and headers a streamed answer starts with. */
export interface ResponsePrelude {
  statusCode: number;
  headers: Record<string, string>;
}

/** The mark `awslambda.streamifyResponse` sets on a handler, read by the Lambda runtime. */
export const STREAMING_HANDLER_MARK = Symbol.for('aws.lambda.runtime.handler.streaming');
const STREAM_RESPONSE = 'response';

/** Eight NUL bytes end the prelude (the `application/vnd.awslambda.http-integration-response` form). */
export const PRELUDE_DELIMITER = new Uint8Array(8);

interface LambdaRuntimeGlobal {
  streamifyResponse(handler: StreamingHandler): StreamingHandler;
  HttpResponseStream: { from(stream: Writable, prelude: ResponsePrelude): Writable };
}

/** The Lambda runtime's helpers; the AWS SDK also creates an `awslambda` object, without them. */
function runtimeGlobal(): LambdaRuntimeGlobal | undefined {
  const runtime: unknown = Reflect.get(globalThis, 'awslambda');
  return isRuntimeGlobal(runtime) ? runtime : undefined;
}

function isRuntimeGlobal(value: unknown): value is LambdaRuntimeGlobal {
  const runtime = value as Partial<LambdaRuntimeGlobal> | undefined;
  return typeof runtime?.streamifyResponse === 'function' && typeof runtime.HttpResponseStream?.from === 'function';
}

/** Marks a handler as streaming: through the Lambda runtime when present, else the same mark by hand. */
export function streamingHandler(handler: StreamingHandler): StreamingHandler {
  const runtime = runtimeGlobal();
  if (runtime) return runtime.streamifyResponse(handler);
  Reflect.set(handler, STREAMING_HANDLER_MARK, STREAM_RESPONSE);
  return handler;
}

/** Whether a handler was marked streaming: the local server relays its stream as it comes. */
export function isStreamingHandler(handler: unknown): handler is StreamingHandler {
  return typeof handler === 'function' && Reflect.get(handler, STREAMING_HANDLER_MARK) === STREAM_RESPONSE;
}

/**
 * Starts the HTTP response on a Lambda response stream. Returns the stream to write the
 * body to; nothing reaches the client before the first body write.
 */
export function startHttpResponse(stream: Writable, prelude: ResponsePrelude): Writable {
  const runtime = runtimeGlobal();
  if (runtime) return runtime.HttpResponseStream.from(stream, prelude);
  stream.write(JSON.stringify(prelude));
  stream.write(PRELUDE_DELIMITER);
  return stream;
}

/**
 * One HTTP response over a response stream: headers once, then body text. Knows whether
 * the status line has gone out, which decides how a late error can still be reported.
 */
export class StreamingResponse {
  private body: Writable | undefined;
  /** The status sent, once started. */
  status = 0;

  /** `headers`: what every answer carries whatever its status (the CORS headers). */
  constructor(
    private readonly stream: Writable,
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  get started(): boolean {
    return this.body !== undefined;
  }

  /** True once the client has gone away (or the response has ended). */
  get closed(): boolean {
    return this.stream.destroyed || this.stream.writableEnded;
  }

  start(statusCode: number, headers: Record<string, string>): void {
    if (this.body) throw new Error('response already started');
    this.status = statusCode;
    this.body = startHttpResponse(this.stream, { statusCode, headers: { ...headers, ...this.headers } });
  }

  /** How many writes the body has had: what shows a stream has been silent. */
  writes = 0;

  write(text: string): void {
    if (!this.body) throw new Error('response not started');
    this.writes++;
    if (!this.closed) this.body.write(text);
  }

  /**
   * Writes, then waits while the client reads slower than the answer comes (backpressure), or
   * until it has gone: what a relay has read of its source is then what the client was sent,
   * give or take the stream's buffer.
   */
  async send(text: string): Promise<void> {
    if (!this.body) throw new Error('response not started');
    this.writes++;
    if (this.closed || this.body.write(text)) return;
    const body = this.body;
    await new Promise<void>((resolve) => {
      const done = () => {
        body.off('drain', done);
        body.off('close', done);
        body.off('error', done);
        resolve();
      };
      body.once('drain', done);
      body.once('close', done);
      body.once('error', done);
    });
  }

  /** A whole JSON answer, its length known: a HEAD answer says it too, without the body. */
  json(statusCode: number, value: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(value);
    this.start(statusCode, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
    this.write(text);
  }

  /** Ends the response and waits until the bytes are handed over. */
  async end(): Promise<void> {
    if (this.stream.writableEnded || this.stream.destroyed) return;
    // A body must exist for the prelude to be flushed; an empty one will do.
    if (!this.body) this.start(204, {});
    await new Promise<void>((resolve) => {
      this.stream.once('error', () => resolve());
      this.stream.end(() => resolve());
    });
  }

  /** Aborted when the client disconnects before the response has ended. */
  disconnectSignal(): AbortSignal {
    const controller = new AbortController();
    const onClose = () => {
      if (!this.stream.writableFinished) controller.abort(new Error('client disconnected'));
    };
    this.stream.once('close', onClose);
    this.stream.once('error', onClose);
    return controller.signal;
  }
}
