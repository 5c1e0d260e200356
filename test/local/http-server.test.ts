import { connect, type AddressInfo } from 'node:net';
import { request, type Server } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createLocalApiServer, type LambdaHandler } from '../../local/http-server';
import type { FunctionId } from '../../lambdas/routes';
import { streamingHandler } from '../../lambdas/http/streaming';

/** Listens on a free port of 127.0.0.1 and answers which. */
async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const closing = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('local API server: requests become REST API proxy events', () => {
  const seen: { fn: FunctionId; event: APIGatewayProxyEvent; remaining: number }[] = [];
  const handler = (fn: FunctionId): LambdaHandler => async (event, context) => {
    seen.push({ fn, event, remaining: context.getRemainingTimeInMillis() });
    return { statusCode: 201, headers: { 'X-Handled-By': fn }, body: JSON.stringify({ ok: true }) };
  };
  const server = createLocalApiServer({
    catalog: handler('catalog'),
    tokenExchange: handler('tokenExchange'),
    jwks: handler('jwks'),
    management: handler('management'),
    inference: handler('inference'),
    settingsPage: handler('settingsPage'),
  });
  let port: number;
  beforeAll(async () => {
    port = await listening(server);
  });
  afterAll(() => closing(server));
  beforeEach(() => (seen.length = 0));

  function send(method: string, path: string, headers: Record<string, string>, body?: string) {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      if (body) req.write(body);
      req.end();
    });
  }

  it('builds the event API Gateway would: resource, path parameters, query, headers, socket address, Host', async () => {
    const response = await send('PATCH', '/api/v1/keys/abc%3Adef?x=1&x=2&y=', { Host: 'eu.localhost:8787', 'X-Forwarded-For': '198.51.100.9', 'Content-Type': 'application/json' }, '{"disabled":true}');
    expect(response.status).toBe(201);
    expect(response.headers['x-handled-by']).toBe('management');
    expect(response.body).toBe('{"ok":true}');
    const { fn, event, remaining } = seen[0]!;
    expect(fn).toBe('management');
    expect(remaining).toBeGreaterThan(0);
    expect(event).toMatchObject({
      resource: '/api/v1/keys/{hash}',
      // A REST API passes the path and its parameters as the client encoded them.
      path: '/api/v1/keys/abc%3Adef',
      httpMethod: 'PATCH',
      pathParameters: { hash: 'abc%3Adef' },
      queryStringParameters: { x: '2', y: '' },
      multiValueQueryStringParameters: { x: ['1', '2'], y: [''] },
      body: '{"disabled":true}',
      isBase64Encoded: false,
    });
    expect(event.headers.Host).toBe('eu.localhost:8787');
    // The limit key is the socket's address, never a header the client chose.
    expect(event.requestContext.identity.sourceIp).toBe('127.0.0.1');
    expect(event.requestContext.resourcePath).toBe('/api/v1/keys/{hash}');
  });

  /**
   * Sends `megabytes` of body in 1 MB writes, as fast as the connection takes them, and reports
   * the answer and whether every byte could be written (a server that answers and closes while
   * the client still sends makes the client's writes fail with EPIPE or ECONNRESET).
   */
  function upload(path: string, headers: Record<string, string>, megabytes: number) {
    return new Promise<{ status: number; headers: Record<string, unknown>; body: string; writeError: string | null }>((resolve, reject) => {
      let writeError: string | null = null;
      let answer: { status: number; headers: Record<string, unknown>; body: string } | undefined;
      let written = false;
      const settle = () => answer && (written || writeError) && resolve({ ...answer, writeError });
      const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, 'Content-Length': String(megabytes * 1024 * 1024) } }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          answer = { status: res.statusCode!, headers: res.headers, body: text };
          settle();
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        writeError = error.code ?? error.message;
        if (!answer) reject(error);
        settle();
      });
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      let sent = 0;
      const pump = () => {
        while (sent < megabytes) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end(() => {
          written = true;
          settle();
        });
      };
      pump();
    });
  }

  it('reads a body past 10 MB to its end before the 413, so the client sees the answer and no broken pipe', async () => {
    const response = await upload('/api/v1/keys', { 'Content-Type': 'application/json' }, 24);
    expect(response.writeError).toBeNull();
    expect([response.status, JSON.parse(response.body)]).toEqual([413, { error: { code: 413, message: 'Request body is larger than 10485760 bytes' } }]);
    expect(response.headers.connection).toBe('close');
    expect(seen).toHaveLength(0);
  });

  it('answers a body past 10 MB on the token endpoint in the OAuth shape (docs/reference.md#oauth-errors)', async () => {
    const response = await upload('/api/v1/oauth/token', { 'Content-Type': 'application/x-www-form-urlencoded' }, 11);
    expect(response.writeError).toBeNull();
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({ error: 'invalid_request', error_description: 'Request body must be smaller than 32 KB' });
    expect(response.headers['cache-control']).toBe('no-store');
    expect(seen).toHaveLength(0);
  });

  it('still takes a body of exactly 10 MB', async () => {
    const response = await upload('/api/v1/keys', { 'Content-Type': 'application/json' }, 10);
    expect([response.status, response.writeError]).toEqual([201, null]);
    expect(seen[0]!.event.body).toHaveLength(10 * 1024 * 1024);
  });

  it('answers the preflight of an API resource itself, naming the methods it serves, and of no page', async () => {
    const preflight = await send('OPTIONS', '/api/v1/keys/abc', { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'PATCH' });
    expect(seen).toEqual([]);
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD, PATCH, DELETE',
      'access-control-allow-headers': expect.stringContaining('Authorization, Content-Type, DPoP'),
      'access-control-max-age': '7200',
    });
    const page = await send('OPTIONS', '/settings/workload-identity', { Origin: 'https://app.example.com' });
    expect(page.status).toBe(405);
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
  });

  it("names the allowed origin on its own answers under the API, as API Gateway's are", async () => {
    const unknown = await send('GET', '/api/v1/nothing', { Origin: 'https://app.example.com' });
    expect([unknown.status, unknown.headers['access-control-allow-origin']]).toEqual([404, '*']);
    const wrongMethod = await send('PUT', '/api/v1/models', { Origin: 'https://app.example.com' });
    expect([wrongMethod.status, wrongMethod.headers.allow, wrongMethod.headers['access-control-allow-origin']]).toEqual([405, 'GET, HEAD', '*']);
  });

  it('passes HEAD to the GET route as HEAD, and sends no body', async () => {
    const response = await send('HEAD', '/api/v1/models', {});
    expect([response.status, response.body, response.headers['content-length']]).toEqual([201, '', '11']);
    expect(seen.map(({ fn, event }) => [fn, event.httpMethod, event.resource])).toEqual([['catalog', 'HEAD', '/api/v1/models']]);
  });

  it('sends no query object and no body when there are none', async () => {
    await send('GET', '/api/v1/oauth/jwks', {});
    expect(seen[0]!.event.queryStringParameters).toBeNull();
    expect(seen[0]!.event.body).toBeNull();
    expect(seen[0]!.event.pathParameters).toBeNull();
  });
});

describe('local API server: streaming functions', () => {
  it('relays the Lambda response-stream protocol (prelude, eight NUL bytes, body) chunk by chunk', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const streaming = streamingHandler(async (event, stream) => {
      // The prelude split across writes, as the runtime may deliver it.
      stream.write('{"statusCode":207,');
      stream.write(`"headers":{"Content-Type":"text/event-stream","X-Path":"${event.path}"}}`);
      stream.write(new Uint8Array(8));
      stream.write('data: first\n\n');
      await released;
      stream.end('data: [DONE]\n\n');
    });
    const buffered: LambdaHandler = async () => ({ statusCode: 200, body: '' });
    const server = createLocalApiServer({ catalog: buffered, tokenExchange: buffered, jwks: buffered, management: buffered, inference: streaming, settingsPage: buffered });
    const port = await listening(server);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/chat/completions`, { method: 'POST', body: '{}' });
      expect(response.status).toBe(207);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(response.headers.get('x-path')).toBe('/api/v1/chat/completions');
      const reader = response.body!.getReader();
      // The first event arrives while the handler is still running.
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
      release();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: [DONE]\n\n');
      expect((await reader.read()).done).toBe(true);
    } finally {
      await closing(server);
    }
  });

  it('destroys the handler stream when the client hangs up', async () => {
    let closed!: () => void;
    const sawClose = new Promise<void>((resolve) => (closed = resolve));
    const streaming = streamingHandler(async (_event, stream) => {
      stream.once('close', () => closed());
      stream.write(JSON.stringify({ statusCode: 200, headers: {} }));
      stream.write(new Uint8Array(8));
      stream.write('data: 1\n\n');
      await sawClose;
    });
    const buffered: LambdaHandler = async () => ({ statusCode: 200, body: '' });
    const server = createLocalApiServer({ catalog: buffered, tokenExchange: buffered, jwks: buffered, management: buffered, inference: streaming, settingsPage: buffered });
    const port = await listening(server);
    try {
      const controller = new AbortController();
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/chat/completions`, { method: 'POST', body: '{}', signal: controller.signal });
      await response.body!.getReader().read();
      controller.abort();
      await expect(sawClose).resolves.toBeUndefined();
    } finally {
      server.closeAllConnections();
      await closing(server);
    }
  });
});

describe('local API server: requests that stop arriving', () => {
  const called: string[] = [];
  const handler: LambdaHandler = async (event) => {
    called.push(event.path);
    return { statusCode: 200, body: '{}' };
  };
  // Timeouts of a fraction of a second: the test waits for the server's answer, not a clock.
  const server = createLocalApiServer(
    { catalog: handler, tokenExchange: handler, jwks: handler, management: handler, inference: handler, settingsPage: handler },
    { timeouts: { headersMs: 150, requestMs: 300, checkIntervalMs: 25 } },
  );
  let port: number;
  beforeAll(async () => {
    port = await listening(server);
  });
  afterAll(() => closing(server));

  /** Writes `sent` on a raw connection and never more; resolves with all the server wrote once it closes the connection. */
  function stall(sent: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(sent));
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
  }

  const expect408 = (answer: string) => {
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(head).toMatch(/\r\nConnection: close$/);
    expect(JSON.parse(body!)).toEqual({ error: { code: 408, message: 'Request timed out' } });
  };

  it.each([
    ['the token endpoint', 'POST', '/api/v1/oauth/token', 'application/x-www-form-urlencoded'],
    ['a completion', 'POST', '/api/v1/chat/completions', 'application/json'],
    ['a management change', 'PATCH', '/api/v1/keys/abc', 'application/json'],
  ])('answers 408 and closes when the body of a request to %s stops arriving', async (_name, method, path, type) => {
    called.length = 0;
    const answer = await stall(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: 1000\r\n\r\n${'a'.repeat(200)}`);
    expect408(answer);
    // The handler never saw a request it would have read half of.
    expect(called).toEqual([]);
    await server.idle();
  });

  it.each([
    ['in the request line', 'GET /api/v1/mod'],
    ['in the headers', 'GET /api/v1/models/user HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthori'],
  ])('answers 408 and closes when a request stops arriving %s', async (_where, sent) => {
    expect408(await stall(sent));
  });

  it('still takes a body that arrives in pieces within the time', async () => {
    called.length = 0;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /api/v1/oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\nConnection: close\r\n\r\n12345');
        setImmediate(() => socket.write('67890'));
      });
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(called).toEqual(['/api/v1/oauth/token']);
  });
});

describe('local API server: shutting down (Ctrl-C)', () => {
  /** A handler that answers once released, and says when it has started. */
  function gated() {
    let release!: () => void;
    let started!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = new Promise<void>((resolve) => (started = resolve));
    const handler: LambdaHandler = async () => {
      started();
      await gate;
      return { statusCode: 200, body: JSON.stringify({ answered: 'in full' }) };
    };
    return { handler, release, running };
  }

  async function serverWith(handler: LambdaHandler) {
    const server = createLocalApiServer({ catalog: handler, tokenExchange: handler, jwks: handler, management: handler, inference: handler, settingsPage: handler });
    return { server, port: await listening(server) };
  }

  it('stops accepting, lets the request under way finish and send its whole answer, then closes', async () => {
    const { handler, release, running } = gated();
    const { server, port } = await serverWith(handler);
    const answer = fetch(`http://127.0.0.1:${port}/api/v1/keys`).then(async (response) => ({ status: response.status, body: await response.json() }));
    await running;
    let stopped = false;
    const shutdown = server.shutdown(30_000).then(() => (stopped = true));
    // No new connection is taken while the one under way finishes.
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/keys`)).rejects.toThrow();
    expect(stopped).toBe(false);
    release();
    await expect(answer).resolves.toEqual({ status: 200, body: { answered: 'in full' } });
    await shutdown;
    expect(server.listening).toBe(false);
  });

  it('cuts a request that is still running when the drain time is up, and returns', async () => {
    const { handler, release, running } = gated();
    const { server, port } = await serverWith(handler);
    const answer = fetch(`http://127.0.0.1:${port}/api/v1/keys`).then(
      (response) => response.status,
      (error: Error) => error.message,
    );
    await running;
    await server.shutdown(50);
    expect(server.listening).toBe(false);
    await expect(answer).resolves.toBe('fetch failed');
    release();
  });
});
