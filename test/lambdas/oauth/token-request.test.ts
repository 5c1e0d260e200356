import { OAuthError, invalidDpopProof, invalidRequest, toOAuthResponse } from '../../../lambdas/oauth/oauth-errors';
import { parseTokenExchangeRequest } from '../../../lambdas/oauth/token-request';

const FORM = 'application/x-www-form-urlencoded';
const JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
const valid = {
  grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
  subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
  subject_token: JWT,
  federation_policy_id: 'pol-1',
};
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
/** The API base URL: the one resource access tokens are for. */
const RESOURCE = 'https://api.example.com/api/v1';

function oauthFailure(body: string, contentType: string | undefined = FORM) {
  try {
    parseTokenExchangeRequest(body, contentType, RESOURCE);
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    const e = error as OAuthError;
    return { status: e.status, error: e.code, description: e.description };
  }
  throw new Error('expected an OAuth error');
}

describe('token exchange request (docs/reference.md#the-token-exchange, docs/reference.md#oauth-errors)', () => {
  it('accepts a complete request and the optional fields', () => {
    expect(parseTokenExchangeRequest(form(valid), FORM)).toEqual({ subjectToken: JWT, federationPolicyId: 'pol-1', scope: null });
    const full = form({ ...valid, scope: 'management', requested_token_type: 'urn:ietf:params:oauth:token-type:access_token', audience: 'x', resource: RESOURCE });
    expect(parseTokenExchangeRequest(full, `${FORM}; charset=utf-8`).scope).toBe('management');
  });

  it.each([
    ['a wrong grant type', { ...valid, grant_type: 'client_credentials' }, 400, 'unsupported_grant_type'],
    ['no grant type', { ...valid, grant_type: '' }, 400, 'invalid_request'],
    ['a wrong subject token type', { ...valid, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' }, 400, 'invalid_request'],
    ['an actor token (no delegation)', { ...valid, actor_token: 'a.b.c', actor_token_type: 'urn:ietf:params:oauth:token-type:jwt' }, 400, 'invalid_request'],
    ['a resource that is not this API', { ...valid, resource: 'https://other.example.com/api/v1' }, 400, 'invalid_target'],
    ['a subject token that is not a JWT', { ...valid, subject_token: 'abc' }, 400, 'invalid_request'],
    ['no policy id', { ...valid, federation_policy_id: '' }, 400, 'invalid_request'],
    ['a wrong requested token type', { ...valid, requested_token_type: 'urn:ietf:params:oauth:token-type:jwt' }, 400, 'invalid_request'],
    ['an unknown scope', { ...valid, scope: 'admin' }, 400, 'invalid_scope'],
    ['a subject token over 16 KB', { ...valid, subject_token: `${'a'.repeat(16 * 1024)}.b.c` }, 400, 'invalid_request'],
  ])('refuses %s', (_name, fields, status, error) => {
    expect(oauthFailure(form(fields as Record<string, string>))).toMatchObject({ status, error });
  });

  it('takes an ID token (RFC 8693 names its type) and the API itself as the resource, with or without a final slash', () => {
    for (const fields of [
      { ...valid, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' },
      { ...valid, resource: `${RESOURCE}/` },
      { ...valid, resource: RESOURCE },
    ]) {
      expect(parseTokenExchangeRequest(form(fields), FORM, RESOURCE)).toMatchObject({ subjectToken: JWT });
    }
  });

  it('refuses a body of 32 KB or more with 413, a repeated parameter and a JSON body with 400', () => {
    expect(oauthFailure(form({ ...valid, audience: 'r'.repeat(33 * 1024) }))).toMatchObject({ status: 413, error: 'invalid_request' });
    expect(oauthFailure(`${form(valid)}&federation_policy_id=pol-2`)).toEqual({ status: 400, error: 'invalid_request', description: 'Parameter federation_policy_id is repeated' });
    expect(oauthFailure(JSON.stringify(valid), 'application/json')).toMatchObject({ status: 400, error: 'invalid_request' });
  });

  it.each(['grant_type', 'subject_token', 'subject_token_type', 'federation_policy_id', 'scope', 'requested_token_type'])(
    'refuses a repeated %s, a parameter that must be single (RFC 6749 §3.2)',
    (name) => {
      const body = `${form({ ...valid, scope: 'inference', requested_token_type: 'urn:ietf:params:oauth:token-type:access_token' })}&${name}=x`;
      expect(oauthFailure(body)).toEqual({ status: 400, error: 'invalid_request', description: `Parameter ${name} is repeated` });
    },
  );

  it('accepts several audience and resource parameters (RFC 8693 §2.1) and ignores them (docs/reference.md#the-token-exchange)', () => {
    const body = `${form(valid)}&audience=https://a.example&audience=https://b.example&resource=https://r.example/1&resource=https://r.example/2`;
    expect(parseTokenExchangeRequest(body, 'application/x-www-form-urlencoded')).toEqual(parseTokenExchangeRequest(form(valid), 'application/x-www-form-urlencoded'));
  });

  it('serializes OAuth errors with no-store and hides unexpected ones as server_error', () => {
    expect(toOAuthResponse(new OAuthError(400, 'invalid_grant', 'nope'))).toEqual({
      statusCode: 400,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache' },
      body: '{"error":"invalid_grant","error_description":"nope"}',
    });
    const hidden = toOAuthResponse(new Error('DynamoDB exploded'));
    expect(hidden.statusCode).toBe(500);
    expect(JSON.parse(hidden.body)).toEqual({ error: 'server_error', error_description: 'Internal server error' });
  });

  it('keeps every error_description in the RFC 6749 §5.2 character set, whatever the message quotes', () => {
    const quoted = toOAuthResponse(invalidDpopProof('The DPoP proof claims are not valid: "iat" claim must be a number'), 'req-1');
    expect(JSON.parse(quoted.body).error_description).toBe("The DPoP proof claims are not valid: 'iat' claim must be a number (request id req-1)");
    const hostile = toOAuthResponse(invalidRequest('a\\b\tc\nd\r\u0000e\u007ff é 🙂 “x” ~ !#[]'));
    const description: string = JSON.parse(hostile.body).error_description;
    expect(description).toBe('a/b?c?d??e?f ? ? ?x? ~ !#[]');
    expect(description).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/);
  });
});
