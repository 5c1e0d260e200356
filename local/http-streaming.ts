import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { StreamingHandler } from '../lambdas/http/streaming';
import { errorBody, send } from './http-answers';

/**
 * A streaming function (`awslambda.streamifyResponse`): the handler writes the Lambda
 * response-stream protocol (JSON prelude, eight NUL bytes, body) and the bytes go to the
 * client as they come, never compressed (API Gateway relays a stream as it is). A client that
 * hangs up destroys the handler's stream, as in Lambda. `cors` goes on the 500 of a handler that
 * ends without a prelude.
 */
export async function serveStreaming(
  handler: StreamingHandler,
  event: APIGatewayProxyEvent,
  context: Context,
  response: ServerResponse,
  cors: Record<string, string>,
): Promise<void> {
  const stream = new PreludeResponseStream(response, cors);
  response.once('close', () => {
    if (!response.writableFinished) stream.destroy();
  });
  try {
    await handler(event, stream, context);
  } finally {
    if (!stream.writableEnded && !stream.destroyed) stream.end();
  }
}

class PreludeResponseStream extends Writable {
  private head: Buffer | null = Buffer.alloc(0);

  constructor(
    private readonly response: ServerResponse,
    private readonly cors: Record<string, string>,
  ) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.head === null) return this.forward(chunk, callback);
    this.head = Buffer.concat([this.head, chunk]);
    // The prelude is JSON, which holds no NUL byte: the first NUL starts the delimiter.
    const delimiter = this.head.indexOf(0);
    if (delimiter < 0 || this.head.length < delimiter + 8) return callback();
    let prelude: { statusCode?: number; headers?: Record<string, string> };
    try {
      prelude = JSON.parse(this.head.subarray(0, delimiter).toString('utf8'));
    } catch {
      return callback(new Error('streaming handler wrote an invalid response prelude'));
    }
    const rest = this.head.subarray(delimiter + 8);
    this.head = null;
    this.response.writeHead(prelude.statusCode ?? 200, prelude.headers ?? {});
    this.response.flushHeaders();
    if (rest.length === 0) return callback();
    this.forward(rest, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.head !== null) {
      send(this.response, { statusCode: 500, headers: this.cors, body: errorBody(500, 'Internal Server Error') });
      return callback();
    }
    this.response.end(() => callback());
  }

  private forward(chunk: Buffer, callback: (error?: Error | null) => void): void {
    if (this.response.write(chunk)) callback();
    else this.response.once('drain', () => callback());
  }
}
