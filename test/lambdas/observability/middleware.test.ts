import type { APIGatewayProxyEvent } from 'aws-lambda';
import { UnauthenticatedError } from '../../../lambdas/errors';
import { apiHandler } from '../../../lambdas/http/middleware';
import { json } from '../../../lambdas/http/responses';
import { createTelemetry } from '../../../lambdas/observability/telemetry';
import { oauthHandler } from '../../../lambdas/oauth/oauth-handler';
import { invalidRequest } from '../../../lambdas/oauth/oauth-errors';
import { captureOutput, emfMetrics, lambdaContext, recordingTelemetry } from '../../support/telemetry';

const SECRET = `sk-mg-v1-${'ab'.repeat(32)}`;

function event(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    resource: '/api/v1/models/user',
    path: '/api/v1/models/user',
    httpMethod: 'GET',
    headers: { Authorization: `Bearer ${SECRET}`, Host: 'api.example.com' },
    multiValueHeaders: {},
    queryStringParameters: { limit: '2' },
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: `{"key":"${SECRET}"}`,
    isBase64Encoded: false,
    requestContext: { requestId: 'api-request-1', identity: { sourceIp: '203.0.113.7' } } as APIGatewayProxyEvent['requestContext'],
    ...overrides,
  };
}

describe('the API wrapper in Lambda: JSON log lines and EMF metrics', () => {
  let output: ReturnType<typeof captureOutput>;
  beforeEach(() => {
    // As Lambda sets it for an on-demand execution environment; Powertools reads it at construction.
    process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
    output = captureOutput();
  });
  afterEach(() => {
    output.restore();
    delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
  });

  const records = () => output.lines().map((line) => JSON.parse(line) as Record<string, any>);
  const logLines = () => records().filter((r) => !('_aws' in r));
  const emf = () => records().filter((r) => '_aws' in r);
  const metricNames = () => emfMetrics(output.lines());

  it('logs one request line with route, status, latency and credential kind, never the credential', async () => {
    const telemetry = createTelemetry({ functionName: 'catalog', logLevel: 'INFO' });
    const handler = apiHandler(async () => json(200, { data: [] }), telemetry);

    const response = await handler(event(), lambdaContext('catalog', 'req-1'));

    expect(response.statusCode).toBe(200);
    const [line] = logLines();
    expect(line).toMatchObject({
      level: 'INFO',
      message: 'request',
      service: 'modelgate',
      function: 'catalog',
      route: 'GET /api/v1/models/user',
      status: 200,
      credential: 'api_key',
      sourceIp: '203.0.113.7',
      apiRequestId: 'api-request-1',
      function_request_id: 'req-1',
      cold_start: expect.any(Boolean),
    });
    expect(typeof line!.latencyMs).toBe('number');
    expect(output.lines().join('\n')).not.toContain(SECRET);
    expect(output.lines().join('\n')).not.toContain('ab'.repeat(32));
  });

  it('emits EMF counts: requests by route and status class, refused credentials by reason, the cold start once', async () => {
    const telemetry = createTelemetry({ functionName: 'management', logLevel: 'INFO' });
    const handler = apiHandler(async (e) => {
      if (e.headers.Authorization === 'Bearer wrong') throw new UnauthenticatedError('unknown_key', 'Invalid API key');
      return json(200, {});
    }, telemetry);

    await handler(event({ resource: '/api/v1/keys' }), lambdaContext('management', 'req-1'));
    const refused = await handler(event({ resource: '/api/v1/keys', headers: { Authorization: 'Bearer wrong' } }), lambdaContext('management', 'req-2'));

    expect(refused.statusCode).toBe(401);
    expect(emf().every((record) => record._aws.CloudWatchMetrics[0].Namespace === 'modelgate')).toBe(true);
    expect(metricNames().sort()).toEqual(
      [
        'AuthenticationFailures{service=modelgate,function=management,reason=unknown_key}',
        'ColdStart{service=modelgate,function=management,function_name=management}',
        'Requests{service=modelgate,function=management,route=GET /api/v1/keys,statusClass=2xx}',
        'Requests{service=modelgate,function=management,route=GET /api/v1/keys,statusClass=4xx}',
      ].sort(),
    );
    expect(logLines().map((l) => [l.status, l.credential, l.cold_start])).toEqual([
      [200, 'api_key', true],
      [401, 'unrecognized', false],
    ]);
  });

  it('answers an unexpected error with a bare 500, logging the error with its stack and the request line', async () => {
    const telemetry = createTelemetry({ functionName: 'inference', logLevel: 'INFO' });
    const handler = apiHandler(async () => {
      throw new Error('table exploded');
    }, telemetry);

    const response = await handler(event(), lambdaContext('inference'));

    expect(response).toMatchObject({ statusCode: 500, body: '{"error":{"code":500,"message":"Internal Server Error"}}' });
    const [error, request] = logLines();
    expect(error).toMatchObject({ level: 'ERROR', message: 'unhandled error', error: { message: 'table exploded', stack: expect.stringContaining('table exploded') } });
    expect(request).toMatchObject({ level: 'INFO', message: 'request', status: 500 });
    expect(metricNames()).toContain('Requests{service=modelgate,function=inference,route=GET /api/v1/models/user,statusClass=5xx}');
  });

  it('leaves the request line out below the configured level', async () => {
    const telemetry = createTelemetry({ functionName: 'jwks', logLevel: 'WARN' });
    await apiHandler(async () => json(200, {}), telemetry)(event(), lambdaContext('jwks'));
    expect(logLines()).toEqual([]);
  });
});

describe('the OAuth wrapper', () => {
  it('serializes OAuth errors, logs the request line and counts it like every route', async () => {
    const telemetry = recordingTelemetry('tokenExchange');
    const handler = oauthHandler(async () => {
      throw invalidRequest('grant_type is required');
    }, telemetry, ['https://app.example.com']);

    const response = await handler(
      event({ httpMethod: 'POST', resource: '/api/v1/oauth/token', headers: { Origin: 'https://app.example.com' } }),
      lambdaContext('tokenExchange'),
    );

    expect(response.statusCode).toBe(400);
    // The request id: in X-Request-Id, and at the end of the description; a page of an allowed origin may read both.
    expect(response.headers).toMatchObject({
      'Cache-Control': 'no-store',
      'X-Request-Id': 'api-request-1',
      'Access-Control-Allow-Origin': 'https://app.example.com',
      'Access-Control-Expose-Headers': 'X-Request-Id, X-Generation-Id, Retry-After, WWW-Authenticate, DPoP-Nonce',
      Vary: 'Origin',
    });
    expect(JSON.parse(response.body)).toEqual({ error: 'invalid_request', error_description: 'grant_type is required (request id api-request-1)' });
    expect(telemetry.lines).toEqual([expect.stringMatching(/ INFO +tokenExchange +request route="POST \/api\/v1\/oauth\/token" status=400 latencyMs=[\d.]+ credential=none/)]);
  });

  it('answers anything else as server_error and logs it', async () => {
    const telemetry = recordingTelemetry('tokenExchange');
    const handler = oauthHandler(async () => {
      throw new TypeError('undefined is not a function');
    }, telemetry, ['*']);
    const response = await handler(event({ httpMethod: 'POST', resource: '/api/v1/oauth/token' }), lambdaContext('tokenExchange'));
    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ error: 'server_error', error_description: 'Internal server error (request id api-request-1)' });
    expect(telemetry.lines[0]).toMatch(/ ERROR +tokenExchange +unhandled error requestId=api-request-1 error=/);
    expect(telemetry.lines[0]).toContain('undefined is not a function');
  });
});

describe('local log lines', () => {
  it('are one readable line per request, with the same fields', async () => {
    const telemetry = recordingTelemetry('catalog');
    await apiHandler(async () => json(200, {}), telemetry)(event(), lambdaContext('catalog'));
    expect(telemetry.lines).toEqual([
      expect.stringMatching(
        /^\d\d:\d\d:\d\d\.\d{3} INFO  catalog       request route="GET \/api\/v1\/models\/user" status=200 latencyMs=[\d.]+ credential=api_key sourceIp=203\.0\.113\.7 apiRequestId=api-request-1$/,
      ),
    ]);
  });
});
