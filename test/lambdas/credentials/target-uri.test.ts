import { normalisedTargetUri } from '../../../lambdas/credentials/target-uri';

/** A DPoP proof's `htu` in the one form RFC 3986 and the WHATWG URL Standard agree on (RFC 9449 §4.3 step 9). */
describe('normalisedTargetUri', () => {
  it.each([
    ['http://127.0.0.1:8787/api/v1/oauth/token', 'http://127.0.0.1:8787/api/v1/oauth/token'],
    ['HTTPS://API.Example.COM:443/api/v1/x', 'https://api.example.com/api/v1/x'],
    ['http://eu.localhost:80/a', 'http://eu.localhost/a'],
    ['https://example.com:0443/a', 'https://example.com/a'],
    ['https://example.com:8443/a', 'https://example.com:8443/a'],
    ['https://example.com:/a', 'https://example.com/a'],
    ['https://example.com', 'https://example.com/'],
    ['https://example.com?x=1#f', 'https://example.com/'],
    ['https://example.com/a/./b/../c', 'https://example.com/a/c'],
    ['https://example.com/a/b/..', 'https://example.com/a/'],
    ['https://example.com/%7Efoo/%74oken', 'https://example.com/~foo/token'],
    ['https://example.com/%2e%2e/x', 'https://example.com/x'],
    ['https://example.com/a%2fb', 'https://example.com/a%2Fb'],
    ['https://exa%6Dple.com/', 'https://example.com/'],
    ['https://[::1]:8787/a', 'https://[::1]:8787/a'],
    ['https://localhost./a', 'https://localhost./a'],
  ])('reads %s as %s', (value, normal) => {
    expect(normalisedTargetUri(value)).toBe(normal);
  });

  it.each([
    ['a host with a trailing dot that WHATWG reads as an address', 'http://127.0.0.1./api/v1/oauth/token'],
    ['a hexadecimal address', 'http://0x7f000001/api/v1/oauth/token'],
    ['a shortened address', 'http://127.1/api/v1/oauth/token'],
    ['an address with octal parts', 'http://127.000.0.1/api/v1/oauth/token'],
    ['a name ending in a number', 'http://foo.0x10/api'],
    ['a backslash for a slash', 'http://127.0.0.1:8787\\api\\v1\\oauth\\token'],
    ['a backslash in the path', 'http://127.0.0.1:8787/api/v1/oauth\\token'],
    ['a tab in the URL', 'http://127.0.0.1:8787/api/v1/oauth/to\tken'],
    ['a line break in the URL', 'http://127.0.0.1:8787/api/v1/oauth/to\nken'],
    ['a leading space', ' http://127.0.0.1:8787/api/v1/oauth/token'],
    ['a trailing line break', 'http://127.0.0.1:8787/api/v1/oauth/token\n'],
    ['a space in the path', 'http://127.0.0.1:8787/api/v1/oauth/to ken'],
    ['a host beyond ASCII', 'https://exämple.com/'],
    ['a percent-encoded reserved character in the host', 'https://exa%2Emple.com%2F/'],
    ['a broken percent-encoding', 'https://example.com/%zz'],
    ['a port beyond 65535', 'https://example.com:65536/'],
    ['a non-canonical IPv6 literal', 'https://[0:0:0:0:0:0:0:1]/'],
    ['an IPvFuture literal', 'https://[v1.x]/'],
    ['user information', 'https://user@example.com/'],
    ['no authority', 'http:example.com/a'],
    ['an empty authority', 'http:///example.com/a'],
    ['another scheme', 'ftp://example.com/a'],
    ['a relative reference', '/api/v1/oauth/token'],
    ['square brackets in the path', 'https://example.com/a[1]'],
  ])('refuses %s', (_name, value) => {
    expect(normalisedTargetUri(value)).toBeNull();
  });
});
