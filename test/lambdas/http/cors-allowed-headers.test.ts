import { CORS_ALLOWED_HEADERS, preflightHeaders } from '../../../lambdas/http/cors';

/** What a preflight allows a page to send (the Fetch standard's CORS check of `Access-Control-Allow-Headers`). */
describe('the request headers a preflight allows', () => {
  const allowed = preflightHeaders(['*'], 'https://app.example.com', ['GET', 'POST'])['Access-Control-Allow-Headers']!.split(', ');

  it('allows any header with `*`, and names Authorization, which `*` does not cover', () => {
    expect(allowed).toContain('*');
    expect(allowed).toContain('Authorization');
  });

  it("names, for browsers without the wildcard, what the openai client's organization and project and a traced page send", () => {
    expect(allowed).toEqual(expect.arrayContaining(['OpenAI-Organization', 'OpenAI-Project', 'traceparent', 'tracestate', 'DPoP', 'Content-Type']));
  });

  it('is a list of header names (tokens), each once', () => {
    for (const name of CORS_ALLOWED_HEADERS) expect(name).toMatch(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);
    expect(new Set(CORS_ALLOWED_HEADERS.map((name) => name.toLowerCase())).size).toBe(CORS_ALLOWED_HEADERS.length);
  });
});
