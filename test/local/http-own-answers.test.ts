import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CORS_ALLOWED_HEADERS } from '../../lambdas/http/cors';
import { streamingHandler } from '../../lambdas/http/streaming';
import { createLocalApiServer, MAX_HEADER_BYTES, type FunctionHandler, type LambdaHandler } from '../../local/http-server';
import type { FunctionId } from '../../lambdas/routes';

/**
 * What the local server answers itself, on a raw connection as a client's bytes reach it: the
 * head limit counted on the bytes sent, and the CORS headers on every error it gives, so a page
 * on another origin reads it as it reads API Gateway's.
 */
const APP = 'https://app.example.com';

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const closing = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Writes `sent` on a new connection, then ends it if `end`; resolves with the parsed answer once the server closes. */
function exchange(port: number, sent: string, { end = false }: { end?: boolean } = {}) {
  return new Promise<{ status: number; head: string; headers: Record<string, string>; body: string }>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => (end ? socket.end(sent) : socket.write(sent)));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const lines = head!.split('\r\n');
      const headers = Object.fromEntries(lines.slice(1).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(lines[0]!.split(' ')[1]), head: head!, headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/** A request head of exactly `size` bytes on the wire: padded with one `X-Pad` header. */
function headOfSize(size: number, path = '/api/v1/models'): string {
  const start = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\nConnection: close\r\n`;
  const padding = size - Buffer.byteLength(start) - 'X-Pad: \r\n\r\n'.length;
  return `${start}X-Pad: ${'p'.repeat(padding)}\r\n\r\n`;
}

function servers(corsAllowedOrigins: string[], overrides: Partial<Record<FunctionId, FunctionHandler>> = {}) {
  const ok: LambdaHandler = async () => ({ statusCode: 200, body: '{"ok":true}' });
  const handlers = { catalog: ok, tokenExchange: ok, jwks: ok, management: ok, inference: ok, settingsPage: ok, ...overrides };
  return createLocalApiServer(handlers, { corsAllowedOrigins, timeouts: { headersMs: 150, requestMs: 300, checkIntervalMs: 25 } });
}

describe.each([
  ['any origin', ['*'], '*'],
  ['a list of origins', [APP, 'https://admin.example.com'], APP],
])('the local server with %s: CORS headers on every answer of its own', (_name, origins, allowed) => {
  const failing: LambdaHandler = async () => {
    throw new Error('the function failed');
  };
  // A streaming function that ends without its prelude: the server answers 500 for it.
  const silent = streamingHandler(async () => undefined);
  const server = servers(origins, { jwks: failing, inference: silent });
  let port: number;
  // The failing function's error is logged; the test reads its answer.
  let logged: jest.SpyInstance;
  beforeAll(async () => {
    logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    port = await listening(server);
  });
  afterAll(async () => {
    logged.mockRestore();
    await closing(server);
  });

  const expectCors = (answer: { headers: Record<string, string> }) => {
    expect(answer.headers['access-control-allow-origin']).toBe(allowed);
    expect(answer.headers['access-control-expose-headers']).toContain('X-Request-Id');
  };

  it('allows any request header on a preflight, Authorization by name (what OpenAI({ organization, project }) and a traced page send)', async () => {
    const answer = await exchange(
      port,
      `OPTIONS /api/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\nAccess-Control-Request-Method: POST\r\n` +
        'Access-Control-Request-Headers: authorization,content-type,openai-organization,openai-project,traceparent,x-anything\r\nConnection: close\r\n\r\n',
    );
    expect(answer.status).toBe(204);
    expectCors(answer);
    const names = answer.headers['access-control-allow-headers']!.split(',').map((name) => name.trim());
    expect(names).toEqual([...CORS_ALLOWED_HEADERS]);
    expect(names).toEqual(expect.arrayContaining(['Authorization', 'OpenAI-Organization', 'OpenAI-Project', 'traceparent', '*']));
  });

  it.each([
    ['an unknown path', 'GET /api/v1/nothing HTTP/1.1', 404, 'Resource not found'],
    ['a path no URL can be built from', 'GET //[ HTTP/1.1', 404, 'Resource not found'],
    ['a function that fails', 'GET /api/v1/oauth/jwks HTTP/1.1', 500, 'Internal Server Error'],
    ['a streaming function that ends without its prelude', 'POST /api/v1/chat/completions HTTP/1.1', 500, 'Internal Server Error'],
  ])('answers %s with its JSON error and the CORS headers', async (_what, line, status, message) => {
    const answer = await exchange(port, `${line}\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([status, { error: { code: status, message } }]);
    expectCors(answer);
  });

  it('answers a head past the limit, counted as sent, with a 431, the CORS headers and closes', async () => {
    const answer = await exchange(port, headOfSize(MAX_HEADER_BYTES + 1));
    expect([answer.status, JSON.parse(answer.body), answer.headers.connection]).toEqual([
      431,
      { error: { code: 431, message: `Request headers are larger than ${MAX_HEADER_BYTES} bytes` } },
      'close',
    ]);
    expectCors(answer);
  });

  it("answers a head Node's parser stops reading (far past the limit) with the same 431 and CORS headers", async () => {
    const answer = await exchange(port, headOfSize(4 * MAX_HEADER_BYTES));
    expect([answer.status, JSON.parse(answer.body)]).toEqual([431, { error: { code: 431, message: `Request headers are larger than ${MAX_HEADER_BYTES} bytes` } }]);
    expectCors(answer);
  });

  it("answers a request Node cannot parse with a 400 and the CORS headers", async () => {
    const answer = await exchange(port, `GET /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\nContent-Length: x\r\n\r\n`);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([400, { error: { code: 400, message: 'Malformed HTTP request' } }]);
    expectCors(answer);
  });

  it('answers a body that stops arriving with a 408 and the CORS headers, Connection: close last', async () => {
    const answer = await exchange(port, `POST /api/v1/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${APP}\r\nContent-Length: 100\r\n\r\n{"na`);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([408, { error: { code: 408, message: 'Request timed out' } }]);
    expect(answer.head).toMatch(/\r\nConnection: close$/);
    expectCors(answer);
  });

  it('gives no CORS headers to the settings page, which is same-origin only', async () => {
    const answer = await exchange(port, headOfSize(MAX_HEADER_BYTES + 1, '/settings/workload-identity'));
    expect(answer.status).toBe(431);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('the local server: the head limit counts the bytes sent', () => {
  const server = servers(['*']);
  let port: number;
  beforeAll(async () => {
    port = await listening(server);
  });
  afterAll(() => closing(server));

  it("refuses 1,000 short headers (11 KB sent, 7 KB of names and values: under Node's count) with a 431", async () => {
    const headers = Array.from({ length: 1000 }, (_, i) => [`X-${String(i).padStart(4, '0')}`, 'v']);
    const sent = `GET /api/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
    expect(Buffer.byteLength(sent)).toBeGreaterThan(11_000);
    expect(headers.flat().join('').length).toBeLessThan(MAX_HEADER_BYTES);
    const answer = await exchange(port, sent);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([431, { error: { code: 431, message: 'Request headers are larger than 10240 bytes' } }]);
  });

  it('takes a head of exactly the limit, and refuses one byte more', async () => {
    expect((await exchange(port, headOfSize(MAX_HEADER_BYTES))).status).toBe(200);
    expect((await exchange(port, headOfSize(MAX_HEADER_BYTES + 1))).status).toBe(431);
  });

  it('answers the 431 to a request with a body, which it does not read', async () => {
    const sent = headOfSize(MAX_HEADER_BYTES + 1).replace('GET ', 'POST ').replace('\r\n\r\n', '\r\nContent-Length: 5\r\n\r\nhello');
    expect((await exchange(port, sent)).status).toBe(431);
  });
});
