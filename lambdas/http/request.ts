import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { PresentedCredential, RequestProofs } from '../credentials/authenticate';
import { InvalidInputError, PayloadTooLargeError, UnauthenticatedError, UnsupportedMediaTypeError } from '../errors';
import { normalizeHostname } from '../hostname';

export { normalizeHostname };

type HeaderEvent = Pick<APIGatewayProxyEvent, 'headers'> & Partial<Pick<APIGatewayProxyEvent, 'multiValueHeaders'>>;

/** Header lookup that ignores case, as HTTP does (API Gateway keeps the client's case). */
export function header(event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined {
  const headers = event.headers ?? {};
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}

/**
 * Every value the client sent for a header, whatever the letter case of each copy.
 * API Gateway keeps one value per spelling in `headers` and every value in
 * `multiValueHeaders`, so the latter is authoritative when present.
 */
export function headerValues(event: HeaderEvent, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  if (event.multiValueHeaders) {
    for (const [key, list] of Object.entries(event.multiValueHeaders)) {
      if (key.toLowerCase() === wanted) values.push(...(list ?? []));
    }
    if (values.length > 0) return values;
  }
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) values.push(value);
  }
  return values;
}

/**
 * The one `Authorization` value of a request. Two credentials in one request are refused
 * whichever comes first (docs/reference.md#scopes-and-access rule 2: an invalid credential is a 401), so a proxy that
 * adds its own header can never decide which identity the request runs as.
 */
export function credentialHeader(event: HeaderEvent): string | undefined {
  const values = headerValues(event, 'authorization');
  if (values.length > 1) throw new UnauthenticatedError('malformed_header', 'Multiple Authorization headers: send exactly one credential');
  return values[0];
}

/**
 * What a request presents to authenticate: its one `Authorization` value, its `DPoP` proofs
 * (RFC 9449), and what a proof must name: the method and the URL. API Gateway's
 * `requestContext` gives the host and full path the client used (the stage URL); the local
 * runtime gives none, and the API base URL is the only public URL.
 */
export function presentedCredential(event: ProofEvent, keyHeader?: 'x-api-key'): PresentedCredential {
  const authorization = credentialHeader(event);
  const keys = keyHeader ? headerValues(event, keyHeader) : [];
  if (keys.length === 0) return { authorization, ...proofRequest(event) };
  // The key in its own header is a bearer credential; sent beside another, both must be the same.
  if (keys.length > 1 || (authorization !== undefined && authorization !== `Bearer ${keys[0]}`)) {
    throw new UnauthenticatedError('malformed_header', `Send one credential: ${keyHeader} or Authorization, not two`);
  }
  return { authorization: `Bearer ${keys[0]}`, ...proofRequest(event) };
}

type ProofEvent = HeaderEvent &
  Pick<APIGatewayProxyEvent, 'httpMethod' | 'path'> & { requestContext?: Partial<Pick<APIGatewayProxyEvent['requestContext'], 'domainName' | 'path'>> };

/** A request's `DPoP` proofs (RFC 9449) and what they must name: method, path, and the URL API Gateway saw. */
export function proofRequest(event: ProofEvent): RequestProofs {
  const { domainName, path } = event.requestContext ?? {};
  return {
    proofs: headerValues(event, 'dpop'),
    method: event.httpMethod,
    path: event.path,
    stageUrl: domainName && path ? `https://${domainName}${path}` : undefined,
    host: header(event, 'host'),
  };
}

/**
 * The id a request is known by, in `X-Request-Id` on every answer and in every log line of it:
 * API Gateway's (the one its access log shows), else the invocation's.
 */
export function requestIdOf(event: Pick<APIGatewayProxyEvent, 'requestContext'> | undefined, context: Pick<Context, 'awsRequestId'> | undefined): string {
  return event?.requestContext?.requestId || context?.awsRequestId || 'unknown';
}

/**
 * The URL API Gateway says the request came in on, less the route: `https://<id>.execute-api.<region>.amazonaws.com/v1`
 * (the stage is in `requestContext.path`, not in `path`), or a custom domain with its base path.
 * API Gateway sets both; a client's headers cannot. Undefined locally.
 */
export function gatewayBaseUrl({ path, requestContext }: Pick<APIGatewayProxyEvent, 'path' | 'requestContext'>): string | undefined {
  const { domainName, path: seen } = requestContext ?? {};
  if (!domainName || !seen || !seen.endsWith(path)) return undefined;
  return `https://${domainName}${seen.slice(0, seen.length - path.length)}`;
}

/** The hostname the request was sent to, normalised ({@link normalizeHostname}). */
export function requestHost(event: Pick<APIGatewayProxyEvent, 'headers'>): string | undefined {
  const raw = header(event, 'host');
  return raw === undefined ? undefined : normalizeHostname(raw);
}

/**
 * The path parameters of a request, decoded. API Gateway REST APIs pass them as the client
 * encoded them: the official SDK sends a variant's slug `gpt-4o:free` as `gpt-4o%3Afree`, and
 * the function receives that. An escape that does not decode is kept as sent. Keyed without a
 * prototype, so a parameter named `constructor` finds nothing inherited.
 */
export function pathParameters(event: Pick<APIGatewayProxyEvent, 'pathParameters'>): Record<string, string> {
  const decoded: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value === undefined) continue;
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      decoded[name] = value;
    }
  }
  return decoded;
}

/** The raw body as text, decoding API Gateway's base64 form. */
export function bodyText(event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): string {
  if (event.body == null) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The media type of the bodies of routes that declare a `body` (lambdas/route-definition.ts). */
export const JSON_MEDIA_TYPE = 'application/json';
/** The media type of the bodies of routes that declare a `form`: the token endpoint (docs/reference.md#the-token-exchange). */
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * The media type a `Content-Type` value names: type and subtype in lower case, without
 * parameters (`Application/JSON; charset=utf-8` is `application/json`, RFC 9110 §8.3.1).
 */
export function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

/**
 * The media type of the request body, from its one `Content-Type` header; undefined when the
 * request has none, or more than one (a body cannot be two things).
 */
export function requestMediaType(event: HeaderEvent): string | undefined {
  const values = headerValues(event, 'content-type');
  return values.length === 1 ? mediaType(values[0]!) : undefined;
}

/**
 * How deep a JSON body may nest objects and arrays (docs/api.md, "Request bodies"): far more
 * than any request shape needs (tool schemas included), and few enough that nothing that walks
 * the parsed body (validation, copies, the answer) runs out of stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The deepest nesting of objects and arrays in a JSON text, counted in one pass over it before
 * it is parsed, brackets inside strings skipped. A malformed text gets some number: the parser refuses it next.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/**
 * The body parsed as a JSON object, the one reader of every route that declares a JSON `body`:
 * 413 past `maxBytes`, 415 unless the request says the body is `application/json` (a form or
 * text body is never read as JSON, so a browser's simple cross-site request cannot create
 * anything), 400 for a body nested deeper than {@link MAX_JSON_DEPTH} and for anything but a
 * JSON object.
 */
export function jsonBody(
  event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded' | 'headers'> & Partial<Pick<APIGatewayProxyEvent, 'multiValueHeaders'>>,
  maxBytes = 64 * 1024,
): Record<string, unknown> {
  const text = bodyText(event);
  if (Buffer.byteLength(text, 'utf8') > maxBytes) {
    throw new PayloadTooLargeError(`Request body is larger than ${maxBytes} bytes`);
  }
  if (requestMediaType(event) !== JSON_MEDIA_TYPE) throw new UnsupportedMediaTypeError(`Content-Type must be ${JSON_MEDIA_TYPE}`);
  if (text.trim() === '') throw new InvalidInputError('Request body must be a JSON object');
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new InvalidInputError(`Request body nests deeper than ${MAX_JSON_DEPTH} levels`, { limit: MAX_JSON_DEPTH });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidInputError('Request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidInputError('Request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}
