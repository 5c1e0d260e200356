import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ForbiddenError, TooManyRequestsError, UnauthenticatedError, type AuthenticationFailureReason } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { apiHandler } from '../../../lambdas/http/middleware';
import { lambdaContext, recordingTelemetry } from '../../support/telemetry';

const METADATA = 'https://api.example.com/api/v1/.well-known/oauth-protected-resource';

describe('the docs/reference.md#the-common-error-body serializer: the Bearer challenge of a 401 (RFC 6750 §3, RFC 9728 §5.1)', () => {
  const cases: [AuthenticationFailureReason, string, string][] = [
    ['missing_credential', 'Missing Authentication header', `Bearer resource_metadata="${METADATA}"`],
    ['malformed_header', 'Malformed Authorization header: expected "Bearer <API key>"', `Bearer error="invalid_request", resource_metadata="${METADATA}"`],
    ['unknown_key', 'Invalid API key', `Bearer error="invalid_token", resource_metadata="${METADATA}"`],
    ['invalid_token', 'Invalid or expired access token', `Bearer error="invalid_token", resource_metadata="${METADATA}"`],
    ['disabled_key', 'API key is disabled', `Bearer error="invalid_token", resource_metadata="${METADATA}"`],
    ['expired_key', 'API key has expired', `Bearer error="invalid_token", resource_metadata="${METADATA}"`],
  ];

  it.each(cases)('answers %s with the common error body (docs/reference.md#the-common-error-body) and the challenge %#', (reason, message, challenge) => {
    expect(toErrorBody(new UnauthenticatedError(reason, message), { resourceMetadataUrl: METADATA })).toEqual({
      status: 401,
      body: { error: { code: 401, message } },
      headers: { 'WWW-Authenticate': challenge },
    });
  });

  it('still challenges with Bearer where no metadata URL is known', () => {
    expect(toErrorBody(new UnauthenticatedError('missing_credential', 'Missing Authentication header')).headers).toEqual({ 'WWW-Authenticate': 'Bearer' });
    expect(toErrorBody(new UnauthenticatedError('unknown_key', 'Invalid API key')).headers).toEqual({ 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  });

  it('challenges on no other status: a 403 and a 429 keep their own headers', () => {
    expect(toErrorBody(new ForbiddenError('Operation reserved for management keys'), { resourceMetadataUrl: METADATA })).toEqual({
      status: 403,
      body: { error: { code: 403, message: 'Operation reserved for management keys' } },
    });
    expect(toErrorBody(new TooManyRequestsError('Slow down', 7), { resourceMetadataUrl: METADATA }).headers).toEqual({ 'Retry-After': '7' });
  });

  it('sends the challenge from the API wrapper, whose options name the metadata URL, with the request id', async () => {
    const handler = apiHandler(
      async () => {
        throw new UnauthenticatedError('invalid_token', 'Invalid or expired access token');
      },
      recordingTelemetry('catalog'),
      { resourceMetadataUrl: METADATA },
    );
    const event = { resource: '/api/v1/models/user', httpMethod: 'GET', headers: {}, requestContext: { identity: { sourceIp: '203.0.113.7' } } } as unknown as APIGatewayProxyEvent;
    const context = lambdaContext('catalog');
    expect(await handler(event, context)).toEqual({
      statusCode: 401,
      headers: {
        'Content-Type': 'application/json',
        'WWW-Authenticate': `Bearer error="invalid_token", resource_metadata="${METADATA}"`,
        // No API Gateway request id in the event: the invocation's.
        'X-Request-Id': context.awsRequestId,
      },
      body: '{"error":{"code":401,"message":"Invalid or expired access token"}}',
    });
  });
});
