import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { InterposedDynamoDb } from '../../../local/runtime-options';
import { accessKeyIdOf, replyAwsJson } from '../aws-json-server';
import { dynamoDbAuthorizations } from './dynamodb-authorizations';
import type { IamGate } from './iam-gate';

const TARGET_PREFIX = 'DynamoDB_20120810.';

/**
 * An HTTP server in front of the embedded DynamoDB that lets through what IAM would: each
 * request's operation (`X-Amz-Target`), JSON body and SigV4 access key id go to the gate, and
 * a refused request gets DynamoDB's AccessDeniedException (HTTP 400) without reaching the
 * tables; the rest is relayed as sent. Requests from callers that are not functions of the
 * stack (the operator's `local` credentials) pass ungated.
 */
export async function startDynamoDbGate(upstream: string, gate: IamGate): Promise<InterposedDynamoDb> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((request, response) => {
    void serve(request, response).catch((error: Error) => {
      if (!response.headersSent) replyAwsJson(response, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: error.message }, '1.0');
      else response.destroy(error);
    });
  });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(request.headers['x-amz-target'] ?? '');
    const accessKeyId = accessKeyIdOf(request.headers.authorization);
    if (accessKeyId && operation.startsWith(TARGET_PREFIX) && gate.principal(accessKeyId)) {
      const parsed = parseJson(body);
      // An unreadable body is DynamoDB's to refuse (SerializationException), as it would before IAM.
      if (parsed) {
        const denied = await gate.authorize(accessKeyId, dynamoDbAuthorizations(operation.slice(TARGET_PREFIX.length), parsed, gate));
        if (denied !== undefined) {
          replyAwsJson(response, 400, { __type: 'com.amazonaws.dynamodb.v20120810#AccessDeniedException', message: denied }, '1.0');
          return;
        }
      }
    }
    await relay(request, body, response);
  }

  function relay(request: IncomingMessage, body: Buffer, response: ServerResponse): Promise<void> {
    return new Promise((resolve, reject) => {
      const forwarded = httpRequest(
        { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.headers, agent },
        (answer) => {
          response.writeHead(answer.statusCode ?? 500, answer.headers);
          answer.pipe(response);
          answer.on('end', resolve);
          answer.on('error', reject);
        },
      );
      forwarded.on('error', reject);
      forwarded.end(body);
    });
  }

  // The functions' clients reuse their sockets after any pause, as against DynamoDB: closing idle
  // ones after Node's default 5 s races a client reusing one (ECONNRESET), and a burst of those
  // (a usage view reads every shard side by side) exhausts the SDK's retry quota.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function parseJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(body.toString('utf8') || '{}') as unknown;
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
