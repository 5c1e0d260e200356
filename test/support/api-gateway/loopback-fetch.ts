import { request as httpsRequest, type Agent } from 'node:https';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** One request to the gateway over a loopback connection, presented as the public hostname (SNI and Host). */
export async function loopbackFetch(request: Request, target: { hostnames: readonly string[]; port: number; agent: Agent }): Promise<Response> {
  const url = new URL(request.url);
  if (url.protocol !== 'https:' || !target.hostnames.includes(url.hostname) || (url.port !== '' && url.port !== '443')) {
    throw new TypeError(`this fetch reaches ${target.hostnames.map((hostname) => `https://${hostname}`).join(', ')} only, not ${url.origin}`);
  }
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = { 'accept-encoding': 'gzip', ...Object.fromEntries(request.headers), host: url.hostname };
  if (body) headers['content-length'] = String(body.length);
  return new Promise<Response>((resolve, reject) => {
    const outgoing = httpsRequest(
      { host: '127.0.0.1', port: target.port, servername: url.hostname, agent: target.agent, method: request.method, path: `${url.pathname}${url.search}`, headers },
      (incoming) => {
        const responseHeaders = new Headers();
        for (let i = 0; i < incoming.rawHeaders.length; i += 2) responseHeaders.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
        const status = incoming.statusCode ?? 0;
        const bodyless = [101, 204, 205, 304].includes(status) || request.method === 'HEAD';
        const stream = incoming.headers['content-encoding'] === 'gzip' ? incoming.pipe(createGunzip()) : incoming;
        resolve(new Response(bodyless ? null : (Readable.toWeb(stream) as ReadableStream), { status, statusText: incoming.statusMessage, headers: responseHeaders }));
      },
    );
    const abort = () => outgoing.destroy(request.signal.reason instanceof Error ? request.signal.reason : new Error('aborted'));
    if (request.signal.aborted) abort();
    else request.signal.addEventListener('abort', abort, { once: true });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
