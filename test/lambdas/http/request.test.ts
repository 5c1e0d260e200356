import type { APIGatewayProxyEvent } from 'aws-lambda';
import { UnauthenticatedError } from '../../../lambdas/errors';
import { toErrorBody } from '../../../lambdas/http/api-errors';
import { credentialHeader, headerValues, jsonBody, mediaType, normalizeHostname, pathParameters, requestHost, requestMediaType } from '../../../lambdas/http/request';

type HeaderEvent = Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>;

describe('request headers', () => {
  it('collects every copy of a header whatever its letter case', () => {
    const event: HeaderEvent = {
      headers: { Authorization: 'Bearer a', authorization: 'Bearer b' },
      multiValueHeaders: { Authorization: ['Bearer a'], authorization: ['Bearer b'] },
    };
    expect(headerValues(event, 'AUTHORIZATION')).toEqual(['Bearer a', 'Bearer b']);
    // Without multiValueHeaders, each spelling in `headers` still counts.
    expect(headerValues({ headers: event.headers, multiValueHeaders: {} }, 'authorization')).toEqual(['Bearer a', 'Bearer b']);
  });

  it('refuses two credentials in one request, even identical ones', () => {
    const twice: HeaderEvent = { headers: { Authorization: 'Bearer a' }, multiValueHeaders: { Authorization: ['Bearer a', 'Bearer a'] } };
    let error: unknown;
    try {
      credentialHeader(twice);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UnauthenticatedError);
    // RFC 6750 §3.1: more than one method of sending a token is an invalid request.
    expect(toErrorBody(error)).toEqual({
      status: 401,
      body: { error: { code: 401, message: 'Multiple Authorization headers: send exactly one credential' } },
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_request"' },
    });
    expect(credentialHeader({ headers: { authorization: 'Bearer a' }, multiValueHeaders: {} })).toBe('Bearer a');
    expect(credentialHeader({ headers: {}, multiValueHeaders: {} })).toBeUndefined();
  });
});

describe('request host', () => {
  it.each([
    ['eu.example.com', 'eu.example.com'],
    ['EU.Example.COM', 'eu.example.com'],
    ['eu.example.com.', 'eu.example.com'],
    ['eu.example.com.:8443', 'eu.example.com'],
    ['  eu.example.com:443 ', 'eu.example.com'],
    ['eu.example.com:', 'eu.example.com'],
    ['eu.example.com..', 'eu.example.com.'],
    ['[::1]:8787', '[::1]'],
  ])('normalises %j to %j', (raw, normalised) => {
    expect(normalizeHostname(raw)).toBe(normalised);
  });

  it('reads the Host header in any case', () => {
    expect(requestHost({ headers: { host: 'EU.localhost.:8787' } })).toBe('eu.localhost');
    expect(requestHost({ headers: {} })).toBeUndefined();
  });
});

describe('path parameters', () => {
  it('decodes what a REST API passes on as the client encoded it, and keeps an escape that does not decode', () => {
    expect({ ...pathParameters({ pathParameters: { author: 'liquid', slug: 'lfm-2.5-2.6b%3Afree', bad: '100%' } }) }).toEqual({
      author: 'liquid',
      slug: 'lfm-2.5-2.6b:free',
      bad: '100%',
    });
    expect({ ...pathParameters({ pathParameters: null }) }).toEqual({});
  });
});

describe('request media type', () => {
  it.each([
    ['application/json', 'application/json'],
    ['Application/JSON; charset=utf-8', 'application/json'],
    ['  application/x-www-form-urlencoded ;charset=UTF-8', 'application/x-www-form-urlencoded'],
    ['text/plain;charset=UTF-8', 'text/plain'],
  ])('reads %j as %j', (contentType, media) => {
    expect(mediaType(contentType)).toBe(media);
    expect(requestMediaType({ headers: { 'content-TYPE': contentType } })).toBe(media);
  });

  it('has none for a request without a Content-Type or with two', () => {
    expect(requestMediaType({ headers: {} })).toBeUndefined();
    expect(requestMediaType({ headers: { 'Content-Type': 'text/plain' }, multiValueHeaders: { 'Content-Type': ['application/json', 'text/plain'] } })).toBeUndefined();
  });

  it('reads a JSON body only from a request that says it is JSON, as a 415 in the docs/reference.md#the-common-error-body shape', () => {
    const body = '{"name":"x"}';
    expect(jsonBody({ body, isBase64Encoded: false, headers: { 'Content-Type': 'application/json; charset=utf-8' } })).toEqual({ name: 'x' });
    let error: unknown;
    try {
      jsonBody({ body, isBase64Encoded: false, headers: { 'Content-Type': 'text/plain' } });
    } catch (caught) {
      error = caught;
    }
    expect(toErrorBody(error)).toEqual({ status: 415, body: { error: { code: 415, message: 'Content-Type must be application/json' } } });
  });
});
