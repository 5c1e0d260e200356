import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An error the service answers in its wire form: `{"__type", "message"}` with a status (400 by default). */
export class AwsJsonError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** The access key id of a SigV4 `Authorization` header: `AWS4-HMAC-SHA256 Credential=<id>/<date>/...`. */
export function accessKeyIdOf(authorization: string | undefined): string | undefined {
  return /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(authorization ?? '')?.[1];
}

/** A request as the service reads it, before its operation runs. */
export interface AwsJsonCall {
  readonly operation: string;
  readonly accessKeyId: string;
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
}

export interface AwsJsonServerOptions {
  /** The `X-Amz-Target` prefix, e.g. `TrentService.` for KMS. */
  readonly targetPrefix: string;
  /** `__type` of the 500 a failing operation answers, e.g. `KMSInternalException`. */
  readonly internalErrorType: string;
  readonly operations: Readonly<Record<string, (body: Record<string, unknown>) => unknown>>;
  /** Sees every signed call of a known operation before it runs (recording, IAM); throws an {@link AwsJsonError} to refuse it. */
  readonly before?: (call: AwsJsonCall) => void | Promise<void>;
}

/**
 * An AWS JSON 1.1 service on a loopback port, as KMS and Secrets Manager speak it: `POST /`
 * with `Content-Type: application/x-amz-json-1.1`, the operation in `X-Amz-Target`, a SigV4
 * signature (its presence: an unsigned request is refused before it is read), JSON in and out,
 * errors as `{"__type", "message"}`. The stand-ins supply the operations.
 */
export async function startAwsJsonServer(options: AwsJsonServerOptions): Promise<{ server: Server; endpoint: string }> {
  const server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const target = String(request.headers['x-amz-target'] ?? '');
      const operation = target.startsWith(options.targetPrefix) ? target.slice(options.targetPrefix.length) : '';
      try {
        if (request.method !== 'POST' || !String(request.headers['content-type'] ?? '').startsWith('application/x-amz-json-1.1')) {
          throw new AwsJsonError('SerializationException', 'Expected POST with Content-Type application/x-amz-json-1.1');
        }
        const accessKeyId = accessKeyIdOf(request.headers.authorization);
        if (!accessKeyId) throw new AwsJsonError('MissingAuthenticationTokenException', 'Missing Authentication Token');
        const run = Object.hasOwn(options.operations, operation) ? options.operations[operation] : undefined;
        if (!run) throw new AwsJsonError('UnknownOperationException', `Unknown operation ${target}`);
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        } catch {
          throw new AwsJsonError('SerializationException', 'Request body is not JSON');
        }
        await options.before?.({ operation, accessKeyId, body, headers: request.headers });
        replyAwsJson(response, 200, run(body));
      } catch (error) {
        if (!(error instanceof AwsJsonError)) throw error;
        replyAwsJson(response, error.status, { __type: error.type, message: error.message });
      }
    })().catch((error: Error) => replyAwsJson(response, 500, { __type: options.internalErrorType, message: error.message }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** An AWS JSON answer: 1.1 for KMS and Secrets Manager, 1.0 for DynamoDB. */
export function replyAwsJson(response: ServerResponse, status: number, body: unknown, version: '1.0' | '1.1' = '1.1'): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': `application/x-amz-json-${version}`,
    'Content-Length': Buffer.byteLength(payload),
    'x-amzn-RequestId': randomUUID(),
  });
  response.end(payload);
}
