import { deflateSync, gzipSync } from 'node:zlib';

/**
 * The stack's `minCompressionSize` (lib/constructs/api.ts): API Gateway compresses a payload of
 * this many bytes or more when the client accepts it, and sends a smaller one as it is.
 */
export const MIN_COMPRESSION_BYTES = 1024;

/** The content codings API Gateway compresses with, in its order of preference. */
export type ContentCoding = 'gzip' | 'deflate';

/**
 * The coding to answer with, from the request's `Accept-Encoding` (RFC 9110 §12.5.3): the
 * acceptable one with the highest weight, gzip on a tie (`*` stands for either); undefined
 * when neither is acceptable or the header is absent.
 */
export function negotiateContentCoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const member of acceptEncoding.split(',')) {
    const [name, ...parameters] = member.split(';').map((part) => part.trim().toLowerCase());
    if (!name) continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (coding: ContentCoding) => weights.get(coding) ?? weights.get('*') ?? 0;
  const [best] = (['gzip', 'deflate'] as const).filter((coding) => weightOf(coding) > 0).sort((a, b) => weightOf(b) - weightOf(a));
  return best;
}

/**
 * A buffered answer as API Gateway sends it: compressed when the request accepts gzip or
 * deflate and the body reaches {@link MIN_COMPRESSION_BYTES}, with `Content-Encoding`, and
 * `Vary: Accept-Encoding` on every answer whose form depends on it. An answer with no body
 * (HEAD, 204, 304) or a coding of its own is left as it is. `headers` is changed in place.
 */
export function encodeAnswer(
  request: { method?: string; headers: { 'accept-encoding'?: string } },
  status: number,
  headers: Record<string, string>,
  body: Buffer,
): Buffer {
  if (request.method === 'HEAD' || status === 204 || status === 304 || status < 200) return body;
  if (body.length < MIN_COMPRESSION_BYTES || headerName(headers, 'content-encoding') !== undefined) return body;
  appendVary(headers, 'Accept-Encoding');
  const coding = negotiateContentCoding(request.headers['accept-encoding']);
  if (!coding) return body;
  headers['Content-Encoding'] = coding;
  return coding === 'gzip' ? gzipSync(body) : deflateSync(body);
}

/** Adds `value` to the answer's `Vary`, whatever the case its name was given in. */
function appendVary(headers: Record<string, string>, value: string): void {
  const name = headerName(headers, 'vary');
  if (name === undefined) headers.Vary = value;
  else if (!headers[name]!.split(',').some((member) => member.trim().toLowerCase() === value.toLowerCase())) headers[name] = `${headers[name]}, ${value}`;
}

/** The name `headers` gives a header, in whatever case, or undefined. */
function headerName(headers: Record<string, string>, lowerCase: string): string | undefined {
  return Object.keys(headers).find((name) => name.toLowerCase() === lowerCase);
}
