import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { OPENAPI_DOCUMENT } from '../../../lambdas/openapi/document';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../../lambdas/signing/registration-properties';
import { ALL_TABLES } from '../../../lambdas/store/table-schemas';
import { SERVICE_BUNDLING, TRACING_ENVIRONMENT } from '../../../lib/constructs/service-function';
import { LOCAL_AWS_ENV } from '../../../local/embedded-dynamodb';
import { startKmsStandIn } from '../../support/kms-stand-in';
import { hashApiKey } from '../../../lambdas/accounts/api-keys';
import { ACTING_KEY_CLAIM } from '../../../lambdas/oauth/access-token';
import { LocalSigner } from '../../../lambdas/signing/local-signer';
import { signJwt } from '../../support/access-tokens';
import { startTestService, type TestService } from '../../support/local-service';

const ROOT = join(__dirname, '..', '..', '..');
const run = promisify(execFile);

/**
 * The artifact Lambda runs: each entry bundled with the stack's own bundling options (ESM,
 * its Node target, minified, the SDK left external for the runtime to provide), loaded by
 * plain node as an ES module with only the environment the stack gives it, and invoked with
 * a REST API proxy event against the embedded DynamoDB.
 */
describe('bundled function entry points', () => {
  let service: TestService;
  let outDir: string;
  beforeAll(async () => {
    service = await startTestService();
    // Inside the project, so the external SDK resolves from its node_modules as the runtime's would.
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    outDir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'modelgate-bundle-'));
  });
  afterAll(async () => {
    await service.stop();
    rmSync(outDir, { recursive: true, force: true });
  });

  /** The environment the stack sets, pointed at the embedded DynamoDB. */
  const functionEnv = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? '',
    ...LOCAL_AWS_ENV,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    AWS_ENDPOINT_URL_DYNAMODB: service.runtime.dynamoEndpoint,
    ...Object.fromEntries(ALL_TABLES.map((table) => [table.envVar, table.localName])),
    STAGE: 'v1',
    LOG_LEVEL: 'ERROR',
    API_BASE_URL: 'https://api.example.com/api/v1',
    ...extra,
  });

  /** Bundles an entry as the stack does; returns the output file and the source files it holds. */
  async function bundle(entry: string): Promise<{ file: string; inputs: string[] }> {
    const file = join(outDir, entry, 'index.mjs');
    const result = await build({
      entryPoints: [join(ROOT, 'lambdas', 'functions', `${entry}.ts`)],
      bundle: true,
      platform: 'node',
      format: SERVICE_BUNDLING.format,
      target: SERVICE_BUNDLING.target,
      minify: SERVICE_BUNDLING.minify,
      sourcemap: SERVICE_BUNDLING.sourceMap,
      sourcesContent: SERVICE_BUNDLING.sourcesContent,
      mainFields: [...SERVICE_BUNDLING.mainFields],
      banner: { js: SERVICE_BUNDLING.banner },
      external: [...SERVICE_BUNDLING.externalModules],
      outfile: file,
      metafile: true,
      logLevel: 'silent',
    });
    return { file, inputs: Object.keys(result.metafile.inputs).map((input) => relative(ROOT, join(ROOT, input))) };
  }

  async function invoke<Result = { statusCode: number; headers: Record<string, string>; body: string }>(
    entry: string,
    event: Record<string, unknown>,
    env: Record<string, string> = functionEnv(),
  ): Promise<Result> {
    const { file } = await bundle(entry);
    const runner = join(outDir, `run-${entry}.mjs`);
    writeFileSync(
      runner,
      `const { handler } = await import(${JSON.stringify(file)});\n` +
        `const result = await handler(JSON.parse(process.argv[2]), { awsRequestId: 'bundle-test', functionName: ${JSON.stringify(entry)}, getRemainingTimeInMillis: () => 30000 });\n` +
        `process.stdout.write(JSON.stringify(result));\n`,
    );
    const { stdout } = await run(process.execPath, [runner, JSON.stringify(event)], { env, cwd: outDir });
    return JSON.parse(stdout.trim().split('\n').at(-1)!);
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

  it('accepts an access token signed with the service\'s signing key in the catalog bundle, and refuses one for another API', async () => {
    const signer = await LocalSigner.fromFile(join(service.dataDir, 'signing-key.pem'));
    const now = Math.floor(Date.now() / 1000);
    const token = (aud: string) =>
      signJwt(signer, { iss: 'https://api.example.com/api/v1', aud, sub: 'w', iat: now, exp: now + 600, [ACTING_KEY_CLAIM]: hashApiKey(service.runtime.demo.keys.workspace) });
    const ok = await invoke('catalog', event('/api/v1/models/user', '/api/v1/models/user', await token('https://api.example.com/api/v1'), { limit: '1' }));
    expect(ok.statusCode).toBe(200);
    const refused = await invoke('catalog', event('/api/v1/models/user', '/api/v1/models/user', await token('https://other.example.com/api/v1'), { limit: '1' }));
    expect(refused.statusCode).toBe(401);
  }, 60_000);

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
    const { file } = await bundle('inference');
    const runner = join(outDir, 'run-inference-stream.mjs');
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
        `await handler(JSON.parse(process.argv[2]), stream, { awsRequestId: 'bundle-test', functionName: 'inference', getRemainingTimeInMillis: () => 30000 });\n` +
        `process.stdout.write(JSON.stringify({ mark: handler[MARK], contentType: stream.contentType, writes: stream.writes, ended: stream.writableEnded, bytes: Buffer.concat(stream.chunks).toString('base64') }));\n`,
    );
    const request = {
      ...event('/api/v1/chat/completions', '/api/v1/chat/completions', service.runtime.demo.keys.workspace),
      httpMethod: 'POST',
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'bundled stream' }] }),
    };
    const env = functionEnv({ INFERENCE_UPSTREAMS: '{"*":"development-echo"}', UPSTREAM_TIMEOUT_SECONDS: '5' });
    const { stdout } = await run(process.execPath, [runner, JSON.stringify(request)], { env, cwd: outDir });
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
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

  it('traces the catalog bundle to the X-Ray daemon when it runs in Lambda, and loads no X-Ray SDK outside Lambda', async () => {
    // The X-Ray daemon's side of its UDP protocol: a JSON header line, then one segment document.
    const daemon = createSocket('udp4');
    const documents: { name: string; trace_id: string; parent_id?: string }[] = [];
    daemon.on('message', (message) => {
      const [header, document] = message.toString().split('\n');
      if (JSON.parse(header!).format === 'json') documents.push(JSON.parse(document!));
    });
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    try {
      const { file } = await bundle('catalog');
      const runner = join(outDir, 'run-catalog-traced.mjs');
      // cls-hooked, the X-Ray SDK's context tracking, registers its namespace on `process`.
      writeFileSync(
        runner,
        `const { handler } = await import(${JSON.stringify(file)});\n` +
          `const result = await handler(JSON.parse(process.argv[2]), { awsRequestId: 'bundle-test', functionName: 'catalog', getRemainingTimeInMillis: () => 30000 });\n` +
          `process.stdout.write(JSON.stringify({ statusCode: result.statusCode, namespaces: Object.keys(process.namespaces ?? {}) }));\n`,
      );
      const request = JSON.stringify(event('/api/v1/models/user', '/api/v1/models/user', service.runtime.demo.keys.workspace, { limit: '1' }));
      const answer = async (env: Record<string, string>) => JSON.parse((await run(process.execPath, [runner, request], { env, cwd: outDir })).stdout.trim().split('\n').at(-1)!);

      // The stack's environment, outside Lambda (as the local runtime and the bench run the handlers).
      expect(await answer(functionEnv({ ...TRACING_ENVIRONMENT }))).toEqual({ statusCode: 200, namespaces: [] });
      expect(documents).toEqual([]);

      // The same, with the variables the Lambda runtime adds for an invocation with active tracing.
      const root = '1-6740f1a2-5b3c4d5e6f708192a3b4c5d6';
      const inLambda = functionEnv({
        ...TRACING_ENVIRONMENT,
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        LAMBDA_TASK_ROOT: outDir,
        _HANDLER: 'index.handler',
        _X_AMZN_TRACE_ID: `Root=${root};Parent=53995c3f42cd8ad8;Sampled=1`,
        AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${(daemon.address() as { port: number }).port}`,
        AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
      });
      expect(await answer(inLambda)).toEqual({ statusCode: 200, namespaces: ['AWSXRay'] });
      for (let waited = 0; !documents.some((d) => d.name === '## index.handler') && waited < 2_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The handler's subsegment and its DynamoDB calls, in the invocation's trace.
      expect(documents.map((d) => d.name)).toEqual(expect.arrayContaining(['## index.handler', 'DynamoDB']));
      expect(new Set(documents.map((d) => d.trace_id))).toEqual(new Set([root]));
    } finally {
      daemon.close();
    }
  }, 60_000);

  it('keeps the SDK out of every bundle and the accounts service out of the JWKS bundle', async () => {
    const jwks = await bundle('jwks');
    expect(jwks.inputs.filter((input) => input.includes('@aws-sdk/'))).toEqual([]);
    expect(jwks.inputs).toContain('lambdas/handlers/jwks.ts');
    expect(jwks.inputs.filter((input) => /accounts-service|catalog-index|management-api/.test(input))).toEqual([]);
    // The OpenAPI document imports bounds, not the modules that enforce them with the CEL engine.
    expect(jwks.inputs.filter((input) => /cel-js|federation\/condition|federation-validation/.test(input))).toEqual([]);
  }, 60_000);

  it('fails the cold start, naming the variable, when a table the function reads is not configured', async () => {
    const env = functionEnv();
    delete (env as Record<string, string>).MODELS_TABLE;
    await expect(invoke('catalog', event('/api/v1/models/user', '/api/v1/models/user', 'x'), env)).rejects.toThrow(/MODELS_TABLE is not set/);
  }, 60_000);

  it('runs the token exchange bundle: the limiter, the policy read and the OAuth refusal with its request id', async () => {
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      subject_token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
      federation_policy_id: '00000000-0000-4000-8000-000000000000',
    }).toString();
    const tokenEvent = {
      ...event('/api/v1/oauth/token', '/api/v1/oauth/token', ''),
      httpMethod: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    };
    const env = functionEnv({ API_BASE_URL: 'https://api.example.com/api/v1', ACCESS_TOKEN_MAX_LIFETIME_SECONDS: '900' });
    const result = await invoke('token-exchange', tokenEvent, env);
    expect(result.statusCode).toBe(400);
    expect(result.headers).toMatchObject({ 'Cache-Control': 'no-store', 'X-Request-Id': 'r1' });
    expect(JSON.parse(result.body)).toEqual({
      error: 'invalid_grant',
      error_description: 'The subject token or federation policy is not valid (request id r1)',
    });
    delete (env as Record<string, string>).API_BASE_URL;
    await expect(invoke('token-exchange', tokenEvent, env)).rejects.toThrow(/API_BASE_URL is not set/);
  }, 60_000);

  it('publishes the signing keys from the JWKS bundle', async () => {
    const result = await invoke('jwks', { ...event('/api/v1/oauth/jwks', '/api/v1/oauth/jwks', ''), headers: {} });
    expect(result.statusCode).toBe(200);
    expect(JSON.parse(result.body).keys).toHaveLength(1);
  }, 60_000);

  it('serves the OpenAPI document from the JWKS bundle, equal to the one the tests check answers against', async () => {
    const result = await invoke('jwks', { ...event('/api/v1/openapi.json', '/api/v1/openapi.json', ''), headers: {} });
    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({ 'Cache-Control': 'public, max-age=300' });
    expect(JSON.parse(result.body)).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
  }, 60_000);

  it('registers the signing key from the registrar bundle as CloudFormation invokes it on the first deploy', async () => {
    const kms = await startKmsStandIn();
    try {
      const keyArn = await kms.createSigningKey('access tokens');
      const created = await invoke<{ PhysicalResourceId: string; Data: { Kid: string } }>(
        'signing-key-registrar',
        {
          RequestType: 'Create',
          ServiceToken: 'arn:aws:lambda:eu-west-1:111122223333:function:provider',
          ResponseURL: 'https://cloudformation-custom-resource-response.example/',
          StackId: 'arn:aws:cloudformation:eu-west-1:111122223333:stack/Modelgate/1',
          RequestId: 'request-1',
          LogicalResourceId: 'SigningKeyRegistrationResource',
          ResourceType: 'Custom::SigningKeyRegistration',
          ResourceProperties: {
            ServiceToken: 'arn:aws:lambda:eu-west-1:111122223333:function:provider',
            [SIGNING_KEY_REGISTRATION_PROPERTIES.signingKeyArn]: keyArn,
          },
        },
        // The SDK's own per-service endpoint variable points the real KMS client at the stand-in.
        functionEnv({ AWS_ENDPOINT_URL_KMS: kms.endpoint }),
      );
      expect(created.PhysicalResourceId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created.Data).toEqual({ Kid: created.PhysicalResourceId });
      expect(kms.requests.map((r) => r.operation)).toEqual(['CreateKey', 'GetPublicKey']);

      // The JWKS bundle publishes the new key first, and the replaced local key after it.
      const jwks = await invoke('jwks', { ...event('/api/v1/oauth/jwks', '/api/v1/oauth/jwks', ''), headers: {} });
      const kids = JSON.parse(jwks.body).keys.map((key: { kid: string }) => key.kid);
      expect(kids).toHaveLength(2);
      expect(kids[0]).toBe(created.PhysicalResourceId);
    } finally {
      await kms.stop();
    }
  }, 60_000);
});
