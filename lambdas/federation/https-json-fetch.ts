import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { refusedAddressKind } from './address-policy';

/**
 * Fetches the JSON documents an identity provider publishes (discovery document, key set)
 * under the rules of the token exchange: HTTPS only, the system's CAs plus Node's
 * `NODE_EXTRA_CA_CERTS` (plus any CA the composition root adds), redirects not followed, a
 * deadline for the whole exchange, a size cap, and no connection to a refused address.
 */

/** A fetched JSON document and how long its publisher says it may be cached. */
export interface JsonDocument {
  body: unknown;
  /** `Cache-Control: max-age`, when sent. */
  maxAgeSeconds: number | null;
}

/** Fetches one JSON document; throws {@link DocumentFetchError} when it cannot be had. */
export type JsonFetcher = (url: string) => Promise<JsonDocument>;

/** The identity provider could not be reached or answered badly. The message is for an admin. */
export class DocumentFetchError extends Error {
  override name = 'DocumentFetchError';
}

/** Resolves a hostname to every address it has, as `dns.lookup` with `all` does. */
export type HostLookup = (hostname: string) => Promise<LookupAddress[]>;

/** What the fetcher trusts and allows: loopback hosts, extra CAs, its deadline and size cap. */
export interface HttpsJsonFetcherOptions {
  /** Loopback addresses are refused unless this is set (the local runtime only). */
  allowLoopback: boolean;
  /**
   * CA certificates (PEM) trusted in addition to the system's and `NODE_EXTRA_CA_CERTS`:
   * lets a running local service trust a development CA created after Node started. A
   * function is asked on every fetch, so CAs added later are trusted without a restart.
   */
  extraCaPems?: readonly string[] | (() => readonly string[]);
  /** @default 3000 */
  timeoutMs?: number;
  /** @default 262144 (256 KB) */
  maxBytes?: number;
  /** Name resolution; `dns.lookup` (all addresses) by default. Tests inject answers. */
  resolveHost?: HostLookup;
}

/** The deadline of one whole fetch, connection to last byte. */
export const FETCH_TIMEOUT_MS = 3000;
/** The largest document read; a longer one is refused. */
export const MAX_DOCUMENT_BYTES = 256 * 1024;

const defaultResolveHost: HostLookup = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/**
 * A {@link JsonFetcher} under the exchange's rules (HTTPS, no redirects, one deadline, a size cap),
 * each address checked as it is connected to.
 * @example const fetchJson = createHttpsJsonFetcher({ allowLoopback: false });
 */
export function createHttpsJsonFetcher(options: HttpsJsonFetcherOptions): JsonFetcher {
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? MAX_DOCUMENT_BYTES;
  const resolveHost = options.resolveHost ?? defaultResolveHost;
  const policy = { allowLoopback: options.allowLoopback };
  // Built once per set of extra CAs: parsing the root store per request would cost more than the request.
  let secureContext: { extra: string; context: SecureContext } | undefined;
  const trust = (): SecureContext | undefined => {
    const extraPems = typeof options.extraCaPems === 'function' ? options.extraCaPems() : (options.extraCaPems ?? []);
    if (extraPems.length === 0) return undefined; // Node's default store already has NODE_EXTRA_CA_CERTS
    const extra = extraPems.join('\n');
    if (secureContext?.extra !== extra) {
      secureContext = { extra, context: createSecureContext({ ca: [...rootCertificates, ...nodeExtraCaCerts(), ...extraPems] }) };
    }
    return secureContext.context;
  };

  /**
   * Runs inside the connection attempt, so the address checked is the address connected to
   * (no gap for DNS rebinding between a check and the connect).
   */
  const guardedLookup: RequestOptions['lookup'] = (hostname, lookupOptions, callback) => {
    const all = typeof lookupOptions === 'object' && lookupOptions !== null && lookupOptions.all === true;
    resolveHost(hostname).then(
      (addresses) => {
        const allowed = addresses.filter((a) => refusedAddressKind(a.address, policy) === null);
        if (allowed.length === 0) {
          const reasons = addresses.map((a) => `${a.address} (${refusedAddressKind(a.address, policy)})`).join(', ');
          const error = Object.assign(new Error(`${hostname} resolves only to refused addresses: ${reasons || 'none'}`), {
            code: 'EREFUSEDADDRESS',
          });
          callback(error, '', 0);
          return;
        }
        // With `all`, Node's callback takes the list (its type names the one-address form only).
        if (all) Reflect.apply(callback, undefined, [null, allowed]);
        else callback(null, allowed[0]!.address, allowed[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };

  return async (rawUrl) => {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new DocumentFetchError(`${rawUrl} is not a URL`);
    }
    if (url.protocol !== 'https:') throw new DocumentFetchError(`${url.origin} is not an https:// address`);
    if (url.username || url.password) throw new DocumentFetchError(`${url.host} carries credentials in the URL`);
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // Node connects to an IP literal without calling `lookup`, so literals are checked here.
    if (isIP(hostname)) {
      const refused = refusedAddressKind(hostname, policy);
      if (refused) throw new DocumentFetchError(`${url.origin}: ${hostname} is a ${refused} address, which is refused`);
    }
    return fetchOnce(url, { timeoutMs, maxBytes, lookup: guardedLookup, secureContext: trust() });
  };
}

function fetchOnce(
  url: URL,
  options: { timeoutMs: number; maxBytes: number; lookup: RequestOptions['lookup']; secureContext: SecureContext | undefined },
): Promise<JsonDocument> {
  const where = `${url.origin}${url.pathname}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.destroy();
      reject(new DocumentFetchError(`${where}: ${message}`));
    };
    const req = request(url, {
      method: 'GET',
      headers: { accept: 'application/json, application/jwk-set+json', 'user-agent': 'modelgate-federation' },
      lookup: options.lookup,
      ...(options.secureContext ? { secureContext: options.secureContext } : {}),
      // One connection per fetch: fetches are rare (cached for minutes) and a pooled socket
      // would outlive the address check made when it was opened.
      agent: false,
    });
    // One deadline for connect, TLS, headers and body: a slow drip cannot hold the exchange.
    const deadline = setTimeout(() => fail(`no complete answer within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => fail(describeNetworkError(error)));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        return fail(`answered ${status} redirecting to ${res.headers.location ?? 'nowhere'}; redirects are not followed`);
      }
      if (status !== 200) return fail(`answered HTTP ${status}`);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        return fail(`document of ${declared} bytes is larger than ${options.maxBytes / 1024} KB`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return fail(`document is larger than ${options.maxBytes / 1024} KB`);
        chunks.push(chunk);
      });
      res.on('error', (error) => fail(describeNetworkError(error)));
      res.on('end', () => {
        if (settled) return;
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return fail('answer is not JSON');
        }
        settled = true;
        clearTimeout(deadline);
        resolve({ body, maxAgeSeconds: parseMaxAge(res.headers['cache-control']) });
      });
    });
    req.end();
  });
}

function describeNetworkError(error: NodeJS.ErrnoException): string {
  if (error.code === 'EREFUSEDADDRESS') return error.message;
  if (error.code === 'ENOTFOUND') return 'host name does not resolve';
  if (error.code === 'ECONNREFUSED') return 'connection refused';
  if (error.code && /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS/.test(error.code)) {
    return `TLS certificate not trusted (${error.code})`;
  }
  return `connection failed (${error.code ?? error.message})`;
}

/** `Cache-Control: max-age=N` (RFC 9111 §5.2.2.1); null when absent or malformed. */
export function parseMaxAge(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return null;
  const match = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(?:,|$)/i.exec(value);
  return match ? Number(match[1]) : null;
}

let extraCaCache: string[] | undefined;

/** The certificates Node added from `NODE_EXTRA_CA_CERTS`; an explicit `ca` list replaces them. */
function nodeExtraCaCerts(): string[] {
  if (extraCaCache) return extraCaCache;
  const file = process.env.NODE_EXTRA_CA_CERTS;
  extraCaCache = [];
  if (file) {
    try {
      extraCaCache = readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    } catch {
      // Node itself only warns about an unreadable file; so do we, by trusting nothing extra.
    }
  }
  return extraCaCache;
}
