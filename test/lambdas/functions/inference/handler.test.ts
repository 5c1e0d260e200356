import { PassThrough } from 'node:stream';
import { NOTHING_RESERVED } from '../../../../lambdas/spending/reservation';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { AccountStore } from '../../../../lambdas/accounts/account-store';
import type { CatalogCache } from '../../../../lambdas/catalog/catalog-cache';
import { createInferenceHandler } from '../../../../lambdas/functions/inference/handler';
import { createTelemetry } from '../../../../lambdas/observability/telemetry';
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
      responses: {} as never,
      usage: { record: async () => undefined },
      generations: { put: async () => undefined },
      openCompletions: { open: () => Promise.reject(new Error('no spending limit applies here')), close: async () => undefined },
      spending: { reserve: () => Promise.reject(new Error('no spending limit applies here')), track: () => NOTHING_RESERVED },
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
});
