import { PassThrough } from 'node:stream';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { AccountStore } from '../../../../lambdas/accounts/account-store';
import type { CatalogCache } from '../../../../lambdas/catalog/catalog-cache';
import { createInferenceHandler } from '../../../../lambdas/functions/inference/handler';
import { createTelemetry } from '../../../../lambdas/observability/telemetry';
import { hashApiKey } from '../../../../lambdas/accounts/api-keys';
import { CatalogIndex } from '../../../../lambdas/catalog/catalog-index';
import { DEVELOPMENT_PROVIDER } from '../../../../lambdas/config';
import { upstreamOptions } from '../../../../lambdas/inference/upstream-options';
import { authenticationRecords } from '../../../support/accounts';
import { catalogEntry, providerEndpoint } from '../../../support/catalog-fixtures';
import { makeOrganization, makeWorkspaceKey } from '../../../support/federation-fixtures';
import { FixedClock } from '../../../support/fixed-clock';
import { captureOutput, emfMetrics, lambdaContext } from '../../../support/telemetry';

/** The streaming wrapper does by hand what the Powertools middlewares do for the others. */
describe('inference handler telemetry', () => {
  let output: ReturnType<typeof captureOutput>;
  beforeEach(() => {
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
    output = captureOutput();
  });
  afterEach(() => {
    output.restore();
    delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
  });

  it('logs one request line and flushes the request count and the cold start as EMF, with no empty flush', async () => {
    const telemetry = createTelemetry({ functionName: 'inference', logLevel: 'INFO' });
    const handler = createInferenceHandler({
      accounts: {} as AccountStore,
      catalog: {} as CatalogCache,
      clock: new FixedClock(),
      regionalHostnames: {},
      corsAllowedOrigins: ['*'],
      upstream: { upstreams: {} } as never,
      usage: { record: async () => undefined, countModelRequest: async () => undefined },
      resourceMetadataUrl: 'https://api.example.com/api/v1/.well-known/oauth-protected-resource',
      telemetry,
    });
    const event = {
      resource: '/api/v1/chat/completions',
      path: '/api/v1/chat/completions',
      httpMethod: 'POST',
      headers: {},
      multiValueHeaders: {},
      body: '{}',
      isBase64Encoded: false,
      requestContext: { requestId: 'r1', identity: { sourceIp: '203.0.113.9' } },
    } as unknown as APIGatewayProxyEvent;

    await handler(event, new PassThrough(), lambdaContext('inference', 'req-1'));
    await handler(event, new PassThrough(), lambdaContext('inference', 'req-2'));

    const lines = output.lines();
    const logs = lines.map((line) => JSON.parse(line)).filter((record) => !('_aws' in record));
    expect(logs.map((l) => [l.level, l.message, l.status, l.credential])).toEqual([
      ['INFO', 'request', 401, 'none'],
      ['INFO', 'request', 401, 'none'],
    ]);
    expect(emfMetrics(lines)).toEqual([
      'ColdStart{service=modelgate,function=inference,function_name=inference}',
      'Requests{service=modelgate,function=inference,route=POST /api/v1/chat/completions,statusClass=4xx}',
      'Requests{service=modelgate,function=inference,route=POST /api/v1/chat/completions,statusClass=4xx}',
    ]);
  });

  it("times the request line to the answer's end, not to the popularity write made after it", async () => {
    const secret = `sk-mg-v1-${'2'.repeat(64)}`;
    const clock = new FixedClock();
    const key = makeWorkspaceKey({ hash: hashApiKey(secret), organizationId: 'org-1', workspaceId: null, name: 'k', label: 'sk-mg-v1-222...2222' });
    // A monotonic clock the test moves: the popularity write "takes" 400 ms of it.
    let now = 1_000;
    let popularityCounted = false;
    const handler = createInferenceHandler({
      accounts: authenticationRecords(makeOrganization({ id: 'org-1', name: 'Org' }), key),
      catalog: { get: async () => new CatalogIndex([catalogEntry('acme/chat', { endpoints: [providerEndpoint('acme', { provider_name: 'Acme' })] })]) } as unknown as CatalogCache,
      clock,
      regionalHostnames: {},
      corsAllowedOrigins: ['*'],
      upstream: upstreamOptions({ inferenceUpstreams: { '*': DEVELOPMENT_PROVIDER }, upstreamTimeoutSeconds: 5 }, { clock, newId: () => 'id-1' }),
      usage: {
        record: async () => undefined,
        countModelRequest: async () => {
          now += 400;
          popularityCounted = true;
        },
      },
      resourceMetadataUrl: 'https://api.example.com/api/v1/.well-known/oauth-protected-resource',
      telemetry: createTelemetry({ functionName: 'inference', logLevel: 'INFO' }),
      elapsed: () => now,
    });
    const event = {
      resource: '/api/v1/chat/completions',
      path: '/api/v1/chat/completions',
      httpMethod: 'POST',
      headers: { Authorization: `Bearer ${secret}`, 'Content-Type': 'application/json' },
      multiValueHeaders: {},
      body: JSON.stringify({ model: 'acme/chat', messages: [{ role: 'user', content: 'hello' }] }),
      isBase64Encoded: false,
      requestContext: { requestId: 'r1', identity: { sourceIp: '203.0.113.9' } },
    } as unknown as APIGatewayProxyEvent;

    await handler(event, new PassThrough(), lambdaContext('inference', 'req-1'));

    // The invocation waited for the popularity write; the request line did not count it.
    expect(popularityCounted).toBe(true);
    const [line] = output.lines().map((l) => JSON.parse(l)).filter((record) => record.message === 'request');
    expect(line).toMatchObject({ status: 200, latencyMs: 0 });
  });

});
