import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDevCertificateAuthority } from '../../../local/dev-certificates';
import { startApiGatewayStandIn, type ApiGatewayStandIn } from '../../support/api-gateway';
import { TemplateResolver, type StackTemplate } from '../../support/cloud-assembly';
import { startLambdaProcess, type LambdaFunctionSpec, type LambdaProcess } from '../../support/lambda-process';

const ROOT = join(__dirname, '..', '..', '..');

/**
 * The stand-ins the bundle suite runs the synthesized packages on, held to what Lambda and API
 * Gateway do, with throwaway packages: what a package may import, the function timeout, the
 * response-streaming protocol, and the gateway's answers when a function or its wiring fails.
 */
describe('Lambda and API Gateway stand-ins of the bundle suite', () => {
  let dir: string;
  beforeAll(() => {
    // Under the project's node_modules, so every package of the project would resolve by Node's own rules.
    mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
    dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'modelgate-packages-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let count = 0;
  /** A function package holding `index.mjs`, and how to run it. */
  const functionPackage = (source: string, overrides: Partial<LambdaFunctionSpec> = {}): LambdaFunctionSpec => {
    const codeDir = join(dir, `package-${++count}`);
    mkdirSync(codeDir);
    writeFileSync(join(codeDir, 'index.mjs'), source);
    return { name: `Fn${count}`, functionArn: `arn:aws:lambda:us-east-1:123456789012:function:Fn${count}`, codeDir, handler: 'index.handler', timeoutSeconds: 5, memorySize: 256, environment: {}, ...overrides };
  };
  const processes: LambdaProcess[] = [];
  const start = async (spec: LambdaFunctionSpec) => {
    const started = await startLambdaProcess(spec);
    processes.push(started);
    return started;
  };
  afterAll(async () => {
    for (const started of processes) await started.stop();
  });

  describe('a function process', () => {
    it('loads a package that imports the AWS SDK, which the runtime provides', async () => {
      const fn = await start(functionPackage(`import { DynamoDBClient } from '@aws-sdk/client-dynamodb';\nexport const handler = async () => typeof DynamoDBClient;\n`));
      expect(await fn.invoke({})).toEqual({ ok: true, payload: '"function"' });
    });

    it('fails the init of a package that imports or requires a module the runtime does not provide, naming it', async () => {
      await expect(start(functionPackage(`import { jwtVerify } from 'jose';\nexport const handler = async () => typeof jwtVerify;\n`))).rejects.toThrow(
        /failed its init: .*Cannot find package 'jose'/,
      );
      await expect(
        start(functionPackage(`import { createRequire } from 'module';\nconst require = createRequire(import.meta.url);\nrequire('dynalite');\nexport const handler = async () => 1;\n`)),
      ).rejects.toThrow(/failed its init: .*Cannot find module 'dynalite'/);
      await expect(start(functionPackage(`export const other = async () => 1;\n`))).rejects.toThrow(/Runtime.HandlerNotFound: index.handler is undefined or not exported/);
    });

    it('ends an invocation still running after the function timeout, and starts a new environment for the next one', async () => {
      const fn = await start(functionPackage(`export const handler = async (event) => event.hang ? new Promise(() => {}) : 'answered';\n`, { timeoutSeconds: 1 }));
      expect(await fn.invoke({ hang: true })).toEqual({ ok: false, error: { errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 1.00 seconds' } });
      expect(await fn.invoke({})).toEqual({ ok: true, payload: '"answered"' });
      expect(fn.coldStarts).toBe(2);
    });

    it("streams through the runtime's helpers: the JSON prelude, eight NUL bytes, the body; the response ends before the handler returns", async () => {
      const fn = await start(
        functionPackage(
          `export const handler = awslambda.streamifyResponse(async (event, stream) => {\n` +
            `  const body = awslambda.HttpResponseStream.from(stream, { statusCode: 201, headers: { 'Content-Type': 'text/plain' } });\n` +
            `  body.write('one ');\n  body.write('two');\n  body.end();\n` +
            `  await new Promise((resolve) => setTimeout(resolve, 300));\n});\n`,
        ),
      );
      expect(fn.streaming).toBe(true);
      const invocation = fn.invokeStreaming({});
      const chunks: Buffer[] = [];
      for await (const chunk of invocation.body) chunks.push(chunk as Buffer);
      const bytes = Buffer.concat(chunks);
      const delimiter = bytes.indexOf(Buffer.alloc(8));
      expect(JSON.parse(bytes.subarray(0, delimiter).toString())).toEqual({ statusCode: 201, headers: { 'Content-Type': 'text/plain' } });
      expect(bytes.subarray(delimiter + 8).toString()).toBe('one two');
      expect(await invocation.finished).toEqual({ ok: true, contentType: 'application/vnd.awslambda.http-integration-response', writes: 2 });
      let returned = false;
      void invocation.done.then(() => (returned = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(returned).toBe(false);
      expect(await invocation.done).toEqual({ ok: true });
    });
  });

  describe('the API Gateway stand-in', () => {
    let gateway: ApiGatewayStandIn;
    beforeAll(async () => {
      const handlers = {
        Ok: `export const handler = async (event) => ({ statusCode: 200, headers: { 'Content-Type': 'text/plain' }, body: event.resource + ' ' + JSON.stringify(event.pathParameters) });\n`,
        Unpermitted: `export const handler = async () => ({ statusCode: 200, body: 'never' });\n`,
        Throws: `export const handler = async () => { throw new Error('boom'); };\n`,
        Malformed: `export const handler = async () => ({ status: 200, body: 'no statusCode' });\n`,
        Base64: `export const handler = async () => ({ statusCode: 200, headers: { 'Content-Type': 'image/png' }, body: Buffer.from('png').toString('base64'), isBase64Encoded: true });\n`,
        Buffered: `export const handler = async () => ({ statusCode: 200, body: 'not a stream' });\n`,
      };
      const lambda = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
      const resources: StackTemplate['Resources'] = {
        Api: { Type: 'AWS::ApiGateway::RestApi', Properties: { Name: 'Api' } },
        Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { RestApiId: { Ref: 'Api' }, StageName: 'v1' } },
        NotFound: { Type: 'AWS::ApiGateway::GatewayResponse', Properties: { RestApiId: { Ref: 'Api' }, ResponseType: 'MISSING_AUTHENTICATION_TOKEN', StatusCode: '404', ResponseTemplates: { 'application/json': '{"error":"not found"}' } } },
        Items: { Type: 'AWS::ApiGateway::Resource', Properties: { RestApiId: { Ref: 'Api' }, ParentId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] }, PathPart: 'items' } },
        Item: { Type: 'AWS::ApiGateway::Resource', Properties: { RestApiId: { Ref: 'Api' }, ParentId: { Ref: 'Items' }, PathPart: '{id}' } },
        Special: { Type: 'AWS::ApiGateway::Resource', Properties: { RestApiId: { Ref: 'Api' }, ParentId: { Ref: 'Items' }, PathPart: 'special' } },
      };
      const route = (name: string, resource: string, method: string, fn: string, streaming = false, permitted = true) => {
        resources[`${name}Method`] = {
          Type: 'AWS::ApiGateway::Method',
          Properties: {
            RestApiId: { Ref: 'Api' },
            ResourceId: { Ref: resource },
            HttpMethod: method,
            Integration: {
              Type: 'AWS_PROXY',
              IntegrationHttpMethod: 'POST',
              ...(streaming ? { ResponseTransferMode: 'STREAM' } : {}),
              Uri: {
                'Fn::Join': ['', [`arn:aws:apigateway:us-east-1:lambda:path/${streaming ? '2021-11-15' : '2015-03-31'}/functions/`, lambda(fn), streaming ? '/response-streaming-invocations' : '/invocations']],
              },
            },
          },
        };
        if (permitted) {
          resources[`${name}Permission`] = {
            Type: 'AWS::Lambda::Permission',
            Properties: {
              Action: 'lambda:InvokeFunction',
              FunctionName: lambda(fn),
              Principal: 'apigateway.amazonaws.com',
              SourceArn: { 'Fn::Join': ['', ['arn:aws:execute-api:us-east-1:123456789012:', { Ref: 'Api' }, '/', { Ref: 'Stage' }, `/${method}/${resource === 'Item' ? 'items/*' : resource === 'Special' ? 'items/special' : 'items'}`]] },
            },
          };
        }
      };
      route('Get', 'Item', 'GET', 'Ok');
      route('GetSpecial', 'Special', 'GET', 'Ok');
      route('Post', 'Items', 'POST', 'Unpermitted', false, false);
      route('Put', 'Item', 'PUT', 'Throws');
      route('Patch', 'Item', 'PATCH', 'Malformed');
      route('Delete', 'Item', 'DELETE', 'Base64');
      route('Stream', 'Special', 'POST', 'Buffered', true);
      const functions = new Map<string, LambdaProcess>();
      for (const [id, source] of Object.entries(handlers)) {
        resources[id] = { Type: 'AWS::Lambda::Function', Properties: { Handler: 'index.handler' } };
        functions.set(id, await start(functionPackage(source)));
      }
      const template: StackTemplate = { Resources: resources };
      const resolver = new TemplateResolver(template, 'Test');
      resolver.created('Api', { ref: 'abcde12345', attributes: { RootResourceId: 'root' } });
      const ca = createDevCertificateAuthority({ commonName: 'gateway test CA' });
      gateway = await startApiGatewayStandIn({ template, resolver, functions, tls: { ...ca.issueServerCertificate(['abcde12345.execute-api.us-east-1.amazonaws.com']), caPem: ca.certPem } });
    }, 120_000);
    afterAll(() => gateway?.stop());

    const request = async (method: string, path: string) => {
      const response = await gateway.fetch(`${gateway.origin}${path}`, { method });
      return [response.status, await response.text()];
    };

    it('routes by the resource tree: a static part before a parameter, passed on as the client encoded it', async () => {
      expect(await request('GET', '/v1/items/special')).toEqual([200, '/items/special null']);
      expect(await request('GET', '/v1/items/a%40b')).toEqual([200, '/items/{id} {"id":"a%40b"}']);
      expect(await request('GET', '/v1/items')).toEqual([404, '{"error":"not found"}']);
    });

    it('answers 500 when no permission lets API Gateway invoke the function, and 502 for a function error or a malformed result', async () => {
      expect(await request('POST', '/v1/items')).toEqual([500, '{"message":"Internal server error"}']);
      expect(await request('PUT', '/v1/items/1')).toEqual([502, '{"message":"Internal server error"}']);
      expect(await request('PATCH', '/v1/items/1')).toEqual([502, '{"message":"Internal server error"}']);
    });

    it('returns a base64 body as text when the API declares no binary media types', async () => {
      expect(await request('DELETE', '/v1/items/1')).toEqual([200, Buffer.from('png').toString('base64')]);
    });

    it('answers 502 when a streaming integration gets no HTTP integration prelude', async () => {
      expect(await request('POST', '/v1/items/special')).toEqual([502, '{"message":"Internal server error"}']);
    });
  });
});
