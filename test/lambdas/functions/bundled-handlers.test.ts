import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { CREATE_REQUIRE_BANNER } from '../../../lib/constructs/service-function';
import { startTestService, type TestService } from '../../support/local-service';

const ROOT = join(__dirname, '..', '..', '..');
const run = promisify(execFile);

/**
 * The artifact Lambda runs: each entry bundled as the stack bundles it (ESM, minified,
 * `createRequire` banner), loaded by plain node as an ES module, and invoked with a REST
 * API proxy event against the embedded DynamoDB.
 */
describe('bundled function entry points', () => {
  let service: TestService;
  let outDir: string;
  beforeAll(async () => {
    service = await startTestService();
    outDir = mkdtempSync(join(tmpdir(), 'modelgate-bundle-'));
  });
  afterAll(async () => {
    await service.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  async function bundle(entry: string): Promise<string> {
    const file = join(outDir, `${entry}.mjs`);
    await build({
      entryPoints: [join(ROOT, 'lambdas', 'functions', `${entry}.ts`)],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      minify: true,
      mainFields: ['module', 'main'],
      banner: { js: CREATE_REQUIRE_BANNER },
      outfile: file,
      logLevel: 'silent',
    });
    return file;
  }

  async function invoke(entry: string, event: Record<string, unknown>): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> {
    const file = await bundle(entry);
    const runner = join(outDir, `run-${entry}.mjs`);
    writeFileSync(
      runner,
      `const { handler } = await import(${JSON.stringify(file)});\n` +
        `const result = await handler(JSON.parse(process.argv[2]), { awsRequestId: 'bundle-test', getRemainingTimeInMillis: () => 30000 });\n` +
        `process.stdout.write(JSON.stringify(result));\n`,
    );
    // The runtime set the table names and DynamoDB endpoint in this process's environment.
    const { stdout } = await run(process.execPath, [runner, JSON.stringify(event)], { env: process.env, cwd: outDir });
    return JSON.parse(stdout);
  }

  const event = (resource: string, path: string, key: string, query: Record<string, string> | null = null) => ({
    resource,
    path,
    httpMethod: 'GET',
    headers: { Authorization: `Bearer ${key}`, Host: 'localhost' },
    multiValueHeaders: {},
    queryStringParameters: query,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { identity: { sourceIp: '203.0.113.7' }, requestId: 'r1', stage: 'v1' },
  });

  it('serves the catalog from the catalog bundle', async () => {
    const result = await invoke('catalog', event('/api/v1/models/user', '/api/v1/models/user', service.runtime.demo.keys.workspace, { limit: '2' }));
    expect(result.statusCode).toBe(200);
    const body = JSON.parse(result.body);
    expect(body.data).toHaveLength(2);
    expect(body.links.next).toBe('/api/v1/models/user?offset=2&limit=2');
  }, 60_000);

  it('authenticates and refuses the wrong key kind in the management bundle', async () => {
    const ok = await invoke('management', event('/api/v1/workspaces', '/api/v1/workspaces', service.runtime.demo.keys.managementReadOnly));
    expect(ok.statusCode).toBe(200);
    expect(JSON.parse(ok.body).total_count).toBe(1);
    const refused = await invoke('management', event('/api/v1/workspaces', '/api/v1/workspaces', service.runtime.demo.keys.workspace));
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ error: { code: 403, message: 'Operation reserved for management keys' } });
  }, 60_000);

  it('streams a completion from the inference bundle through the Lambda runtime\'s streaming helpers', async () => {
    const file = await bundle('inference');
    const runner = join(outDir, 'run-inference.mjs');
    // The runtime's `awslambda` global: streamifyResponse marks the handler, and
    // HttpResponseStream.from defers the prelude and its eight NUL bytes to the first write.
    writeFileSync(
      runner,
      `import { Writable } from 'node:stream';\n` +
        `const MARK = Symbol.for('aws.lambda.runtime.handler.streaming');\n` +
        `globalThis.awslambda = {\n` +
        `  streamifyResponse: (h) => { h[MARK] = 'response'; return h; },\n` +
        `  HttpResponseStream: { from(s, prelude) { s.setContentType('application/vnd.awslambda.http-integration-response');\n` +
        `    s._onBeforeFirstWrite = (write) => { write(JSON.stringify(prelude)); write(new Uint8Array(8)); }; return s; } },\n` +
        `};\n` +
        `class ResponseStream extends Writable {\n` +
        `  chunks = []; writes = 0;\n` +
        `  setContentType(type) { this.contentType = type; }\n` +
        `  _write(chunk, _e, cb) { const hook = this._onBeforeFirstWrite; this._onBeforeFirstWrite = undefined;\n` +
        `    if (hook) hook((c) => this.chunks.push(Buffer.from(c))); this.chunks.push(Buffer.from(chunk)); this.writes++; cb(); }\n` +
        `}\n` +
        `const { handler } = await import(${JSON.stringify(file)});\n` +
        `const stream = new ResponseStream();\n` +
        `await handler(JSON.parse(process.argv[2]), stream, { awsRequestId: 'bundle-test', getRemainingTimeInMillis: () => 30000 });\n` +
        `process.stdout.write(JSON.stringify({ mark: handler[MARK], contentType: stream.contentType, writes: stream.writes, ended: stream.writableEnded, bytes: Buffer.concat(stream.chunks).toString('base64') }));\n`,
    );
    const request = {
      ...event('/api/v1/chat/completions', '/api/v1/chat/completions', service.runtime.demo.keys.workspace),
      httpMethod: 'POST',
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'bundled stream' }] }),
    };
    const { stdout } = await run(process.execPath, [runner, JSON.stringify(request)], { env: process.env, cwd: outDir });
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ mark: 'response', contentType: 'application/vnd.awslambda.http-integration-response', ended: true });
    const bytes = Buffer.from(result.bytes, 'base64');
    const delimiter = bytes.indexOf(Buffer.alloc(8));
    expect(JSON.parse(bytes.subarray(0, delimiter).toString())).toEqual({
      statusCode: 200,
      headers: { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive' },
    });
    const body = bytes.subarray(delimiter + 8).toString();
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(body).toContain('"content":"bundled"');
    // One write per event: the body leaves the function as it is produced.
    expect(result.writes).toBe(body.split('\n\n').filter(Boolean).length);
  }, 60_000);

  it('publishes the signing keys from the JWKS bundle', async () => {
    const result = await invoke('jwks', { ...event('/api/v1/oauth/jwks', '/api/v1/oauth/jwks', ''), headers: {} });
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body).keys).toHaveLength(1);
  }, 60_000);
});
