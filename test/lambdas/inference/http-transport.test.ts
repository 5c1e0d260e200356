import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeHttpTransport } from '../../../lambdas/inference/http-transport';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A provider on 127.0.0.1 that answers with `handler` and records each request's socket port. */
describe('the HTTP transport to providers', () => {
  let server: Server;
  let baseUrl: string;
  let handler: Handler;
  const ports: number[] = [];
  const bodies: string[] = [];
  const transport = nodeHttpTransport();
  const send = (path: string, signal = new AbortController().signal) =>
    transport(`${baseUrl}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer secret' }, body: '{"model":"m"}', signal });

  beforeAll(async () => {
    server = createServer((request, response) => {
      ports.push(request.socket.remotePort!);
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        bodies.push(Buffer.concat(parts).toString());
        handler(request, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    ports.length = 0;
    bodies.length = 0;
  });

  it('sends the method, headers and body, and answers with the status, headers and body', async () => {
    let seen: IncomingMessage | undefined;
    handler = (request, response) => {
      seen = request;
      response.writeHead(201, { 'Content-Type': 'application/json', 'X-Provider': 'a' }).end('{"ok":true}');
    };
    const answer = await send('/v1/chat/completions');
    expect([answer.status, answer.ok, answer.headers.get('x-provider'), await answer.json()]).toEqual([201, true, 'a', { ok: true }]);
    expect([seen?.method, seen?.url, seen?.headers.authorization, seen?.headers['accept-encoding'], bodies]).toEqual(['POST', '/v1/chat/completions', 'Bearer secret', undefined, ['{"model":"m"}']]);
  });

  it('hands over the body as it arrives: the first event is read before the provider ends its answer', async () => {
    let end!: () => void;
    handler = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      response.write('data: first\n\n');
      end = () => response.end('data: [DONE]\n\n');
    };
    const reader = (await send('/stream')).body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    end();
    const rest: string[] = [];
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest.push(new TextDecoder().decode(chunk.value));
    expect(rest.join('')).toBe('data: [DONE]\n\n');
  });

  it('keeps the connection open for the next request', async () => {
    handler = (_request, response) => response.end('{}');
    for (let i = 0; i < 3; i++) await (await send('/again')).text();
    expect(new Set(ports).size).toBe(1);
  });

  it('answers a redirect as it is, without following it', async () => {
    handler = (_request, response) => response.writeHead(307, { Location: 'http://169.254.169.254/latest' }).end();
    const answer = await send('/moved');
    expect([answer.status, answer.headers.get('location'), answer.ok]).toEqual([307, 'http://169.254.169.254/latest', false]);
    expect(ports).toHaveLength(1);
  });

  it('answers a 204 with no body', async () => {
    handler = (_request, response) => response.writeHead(204).end();
    const answer = await send('/empty');
    expect([answer.status, answer.body]).toEqual([204, null]);
  });

  it('ends the request and its body when the signal aborts', async () => {
    handler = (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      response.write('data: first\n\n');
    };
    const controller = new AbortController();
    const reader = (await send('/hang', controller.signal)).body!.getReader();
    await reader.read();
    controller.abort(new Error('deadline'));
    await expect(reader.read()).rejects.toThrow();
    const before = new AbortController();
    before.abort();
    await expect(send('/never', before.signal)).rejects.toThrow();
  });

  it('refuses an address of another scheme, and rejects when the provider cannot be reached', async () => {
    await expect(transport('file:///etc/passwd', { method: 'POST', signal: new AbortController().signal })).rejects.toThrow('Cannot reach file: addresses');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(transport(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', signal: new AbortController().signal })).rejects.toThrow(/ECONNREFUSED/);
  });
});
