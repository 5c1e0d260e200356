import { startTestService, type TestService } from '../../support/local-service';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('POST /oauth/token on the local service', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.stop();
  });

  const exchange = (body: string, headers: Record<string, string> = FORM) => service.call('/oauth/token', { method: 'POST', body, headers });

  it('answers RFC 6749 error bodies that are never cached', async () => {
    const response = await exchange('grant_type=client_credentials');
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body).toEqual({
      error: 'unsupported_grant_type',
      error_description: `grant_type must be urn:ietf:params:oauth:grant-type:token-exchange (request id ${requestId})`,
    });
  });

  it('refuses an oversized body with 413 and a non-JWT subject token with invalid_request', async () => {
    const big = await exchange(`grant_type=x&pad=${'a'.repeat(40 * 1024)}`);
    expect(big.status).toBe(413);
    expect(big.body.error).toBe('invalid_request');
    const notJwt = await exchange(
      new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        subject_token: 'not-a-jwt',
        federation_policy_id: 'p',
      }).toString(),
    );
    expect(notJwt.status).toBe(400);
    expect(notJwt.body).toEqual({ error: 'invalid_request', error_description: `subject_token is not a JWT (request id ${notJwt.headers.get('x-request-id')})` });
  });

  it('answers a well-formed exchange naming no configured policy with the generic invalid_grant', async () => {
    const response = await exchange(
      new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        subject_token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln',
        federation_policy_id: 'pol-unknown',
      }).toString(),
    );
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: 'invalid_grant',
      error_description: `The subject token or federation policy is not valid (request id ${response.headers.get('x-request-id')})`,
    });
  });
});
