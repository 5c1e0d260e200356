import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';
import OpenAI from 'openai';
import { streamingHandler } from '../../lambdas/http/streaming';
import { MIN_COMPRESSION_BYTES, negotiateContentCoding } from '../../local/http-compression';
import { createLocalApiServer, type LambdaHandler } from '../../local/http-server';
import { loadStack } from '../support/iam/stack-template';
import { startTestService, type TestService } from '../support/local-service';

/** An answer as it arrives, undecoded: raw HTTP, sending `Accept-Encoding` only when given. */
function raw(url: string, { method = 'GET', acceptEncoding }: { method?: string; acceptEncoding?: string } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    const req = request(url, { method, headers: acceptEncoding === undefined ? {} : { 'Accept-Encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Accept-Encoding, as API Gateway reads it', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['br', undefined],
    ['gzip', 'gzip'],
    ['deflate', 'deflate'],
    ['gzip, deflate, br', 'gzip'],
    ['deflate, gzip', 'gzip'],
    ['gzip;q=0.5, deflate', 'deflate'],
    ['gzip;q=0, deflate;q=0', undefined],
    ['GZIP;Q=1', 'gzip'],
    ['*', 'gzip'],
    ['*;q=0.1, gzip;q=0', 'deflate'],
  ])('%j answers with %j', (header, coding) => {
    expect(negotiateContentCoding(header)).toBe(coding);
  });

  it("compresses from the stack's minimum size (MinimumCompressionSize)", () => {
    const [restApi] = Object.values(loadStack().template.Resources).filter((resource) => resource.Type === 'AWS::ApiGateway::RestApi');
    expect(restApi!.Properties!.MinimumCompressionSize).toBe(MIN_COMPRESSION_BYTES);
  });
});

describe('the local server compresses as API Gateway does', () => {
  const models = Array.from({ length: 40 }, (_, i) => ({ id: `author/model-${i}`, object: 'model', created: 1_700_000_000, owned_by: 'author' }));
  const large = JSON.stringify({ object: 'list', data: models });
  const catalog: LambdaHandler = async (event) =>
    event.path.endsWith('/count') ? { statusCode: 200, body: '{"data":{"count":40}}' } : { statusCode: 200, headers: { Vary: 'Origin' }, body: large };
  const empty: LambdaHandler = async () => ({ statusCode: 204, body: '' });
  const inference = streamingHandler(async (_event, stream) => {
    stream.write(JSON.stringify({ statusCode: 200, headers: { 'Content-Type': 'text/event-stream' } }));
    stream.write(new Uint8Array(8));
    stream.end(`data: ${'x'.repeat(4 * MIN_COMPRESSION_BYTES)}\n\n`);
  });
  const server: Server = createLocalApiServer({ catalog, tokenExchange: empty, jwks: catalog, management: empty, inference, settingsPage: catalog });
  let base: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends a large answer gzipped to a client that accepts gzip, varying by Accept-Encoding as well as Origin', async () => {
    const answer = await raw(`${base}/models`, { acceptEncoding: 'gzip, deflate, br' });
    expect([answer.headers['content-encoding'], answer.headers.vary, answer.headers['content-length']]).toEqual(['gzip', 'Origin, Accept-Encoding', String(answer.body.length)]);
    expect(answer.body.length).toBeLessThan(large.length / 4);
    expect(gunzipSync(answer.body).toString()).toBe(large);
  });

  it('sends it deflated to a client that accepts deflate only', async () => {
    const answer = await raw(`${base}/models`, { acceptEncoding: 'deflate' });
    expect(answer.headers['content-encoding']).toBe('deflate');
    expect(inflateSync(answer.body).toString()).toBe(large);
  });

  it('sends it as it is without Accept-Encoding, or with none it can use', async () => {
    for (const acceptEncoding of [undefined, 'identity', 'br', 'gzip;q=0']) {
      const answer = await raw(`${base}/models`, { acceptEncoding });
      expect([acceptEncoding, answer.headers['content-encoding'], answer.headers.vary, answer.body.toString()]).toEqual([acceptEncoding, undefined, 'Origin, Accept-Encoding', large]);
    }
  });

  it('sends an answer under the minimum size as it is, with no Vary for it', async () => {
    const answer = await raw(`${base}/models/count`, { acceptEncoding: 'gzip' });
    expect([answer.headers['content-encoding'], answer.headers.vary, answer.body.toString()]).toEqual([undefined, undefined, '{"data":{"count":40}}']);
  });

  it('compresses no HEAD and no 204', async () => {
    const head = await raw(`${base}/models`, { method: 'HEAD', acceptEncoding: 'gzip' });
    expect([head.status, head.headers['content-encoding'], head.headers['content-length'], head.body.length]).toEqual([200, undefined, String(large.length), 0]);
    const deleted = await raw(`${base}/keys/abc`, { method: 'DELETE', acceptEncoding: 'gzip' });
    expect([deleted.status, deleted.headers['content-encoding']]).toEqual([204, undefined]);
  });

  it('relays a stream as it comes, uncompressed', async () => {
    const answer = await raw(`${base}/chat/completions`, { method: 'POST', acceptEncoding: 'gzip' });
    expect([answer.headers['content-type'], answer.headers['content-encoding'], answer.body.toString().slice(0, 8)]).toEqual(['text/event-stream', undefined, 'data: xx']);
  });

  it('is read by fetch and by the openai client, which decode it', async () => {
    const fetched = await fetch(`${base}/models`);
    expect(fetched.headers.get('content-encoding')).toBe('gzip');
    expect(await fetched.text()).toBe(large);
    const client = new OpenAI({ apiKey: 'sk-unused', baseURL: base, maxRetries: 0 });
    const listed = await client.models.list();
    expect(listed.data.map((model) => model.id)).toEqual(models.map((model) => model.id));
  });
});

describe('the local runtime: the catalog of models as a client receives it', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service.stop());

  it('sends /models/user gzipped to a client that accepts it, whole to one that does not', async () => {
    const url = `${service.runtime.baseUrl}/models/user`;
    const key = service.runtime.demo.keys.workspace;
    const get = (acceptEncoding?: string) =>
      new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        const headers: Record<string, string> = { Authorization: `Bearer ${key}`, ...(acceptEncoding ? { 'Accept-Encoding': acceptEncoding } : {}) };
        request(url, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        })
          .on('error', reject)
          .end();
      });
    const [whole, gzipped] = await Promise.all([get(), get('gzip, deflate')]);
    expect(whole.encoding).toBeUndefined();
    expect(gzipped.encoding).toBe('gzip');
    expect(whole.body.length).toBeGreaterThan(100_000);
    expect(gzipped.body.length).toBeLessThan(whole.body.length / 5);
    expect(JSON.parse(gunzipSync(gzipped.body).toString()).data).toHaveLength(JSON.parse(whole.body.toString()).data.length);
    // fetch asks for it compressed and decodes it.
    const fetched = await service.call('/models/user', { key });
    expect(fetched.headers.get('content-encoding')).toBe('gzip');
    expect(fetched.body.data).toHaveLength(JSON.parse(whole.body.toString()).data.length);
  });
});
