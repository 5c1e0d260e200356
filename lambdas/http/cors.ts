/**
 * Cross-origin requests (CORS, the Fetch standard): which pages may call the API from a
 * browser, what they may send and what they may read. Every answer under the API base path
 * names the allowed origin, errors included, so a page can read a 401, a 429 and its
 * `Retry-After`. No credentials mode: the credential is the `Authorization` header, never a
 * cookie. The settings page is same-origin only and never carries these headers.
 *
 * The functions add the answer's headers ({@link corsHeaders}); preflights are answered by the
 * gateway without reaching a function (lib/constructs/api.ts in AWS, local/http-server.ts
 * locally), with the same lists.
 */

/**
 * What a page may send beside the CORS-safelisted headers: any header. `*` allows every name
 * but `Authorization` (the Fetch standard, for requests without credentials, the only kind this
 * API answers), so the credential is named; the other names are for browsers too old for the
 * wildcard: the DPoP proof (RFC 9449), JSON bodies, the headers the official SDK and the
 * `openai` client add (its `organization` and `project` among them) and trace context. One
 * fixed value rather than the request's `Access-Control-Request-Headers` named back: API
 * Gateway's preflight is a mock integration, whose header mappings cannot take a request header.
 */
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'DPoP',
  'Accept',
  'HTTP-Referer',
  'X-Title',
  'X-OpenRouter-Title',
  'X-OpenRouter-Categories',
  'X-OpenRouter-Metadata',
  'X-Stainless-Arch',
  'X-Stainless-Lang',
  'X-Stainless-OS',
  'X-Stainless-Package-Version',
  'X-Stainless-Retry-Count',
  'X-Stainless-Runtime',
  'X-Stainless-Runtime-Version',
  'X-Stainless-Timeout',
  'X-Stainless-Helper-Method',
  'OpenAI-Organization',
  'OpenAI-Project',
  'traceparent',
  'tracestate',
  '*',
] as const;

/** What a page may read beside the CORS-safelisted response headers. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'X-Generation-Id', 'Retry-After', 'WWW-Authenticate', 'DPoP-Nonce'] as const;

/** How long a browser may reuse a preflight's answer (Chromium's ceiling). */
export const CORS_MAX_AGE_SECONDS = 7200;

/** Any origin. */
export const ANY_ORIGIN = '*';

/**
 * The allowed origins, checked: `['*']`, or origins as browsers send them (`https://app.example.com`,
 * a port when not the scheme's own; no path, no trailing slash). `fail` is told what is wrong.
 */
export function parseCorsOrigins(values: readonly unknown[], fail: (message: string) => never): readonly string[] {
  if (values.length === 0) fail('must be "*" or a non-empty list of origins');
  if (values.includes(ANY_ORIGIN)) {
    if (values.length > 1) fail('must be "*" alone or a list of origins, not both');
    return [ANY_ORIGIN];
  }
  for (const value of values) {
    if (typeof value !== 'string' || !isOrigin(value)) {
      fail(`must be "*" or origins such as https://app.example.com (scheme, host and port only), got ${JSON.stringify(value)}`);
    }
  }
  return [...new Set(values as string[])];
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/**
 * The CORS headers of an answer to a request sent from `origin` (its `Origin` header). With a
 * list, an origin on it is named back and any other gets no `Access-Control-Allow-Origin`, so
 * the browser keeps the answer from its page; `Vary: Origin` tells caches the answer differs.
 */
export function corsHeaders(allowed: readonly string[], origin: string | undefined): Record<string, string> {
  const exposed = { 'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS.join(', ') };
  if (allowed[0] === ANY_ORIGIN) return { 'Access-Control-Allow-Origin': ANY_ORIGIN, ...exposed };
  if (origin === undefined || !allowed.includes(origin)) return { Vary: 'Origin' };
  return { 'Access-Control-Allow-Origin': origin, ...exposed, Vary: 'Origin' };
}

/** The answer to a preflight (`OPTIONS` with `Access-Control-Request-Method`) of a resource serving `methods`. */
export function preflightHeaders(allowed: readonly string[], origin: string | undefined, methods: readonly string[]): Record<string, string> {
  return {
    ...corsHeaders(allowed, origin),
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS.join(', '),
    'Access-Control-Max-Age': String(CORS_MAX_AGE_SECONDS),
  };
}
