import { createHmac, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { JWK } from 'jose';
import { createDevCertificateAuthority, type DevCertificateAuthority } from '../../local/dev-certificates';

/**
 * A real OpenID identity provider over HTTPS, in the test process: a certificate from a CA
 * generated for it, a discovery document, a JWK Set with an ES256 and an RS256 key, and a
 * signer for workload tokens (and for forged ones). Clients trust it through `caPem`.
 */

export type IdpAlgorithm = 'ES256' | 'RS256';

export interface IdpKey {
  kid: string;
  alg: IdpAlgorithm;
  privateKey: KeyObject;
  publicJwk: JWK;
}

export interface IdpSignOptions {
  /** @default 'ES256' */
  alg?: IdpAlgorithm;
  /** The kid put in the header; by default the first published key's of that algorithm. Null leaves kid out. */
  kid?: string | null;
  /** Members merged into the header last (`typ`, `crit`, `jku`...); undefined values remove a member. */
  header?: Record<string, unknown>;
  /** Sign with this key instead of the published one (an attacker's key). */
  privateKey?: KeyObject;
  /** `iat` and the default `exp` (+10 minutes) are relative to this. @default now */
  now?: Date;
}

/** Overrides the answer for one path: a status, a body, headers, a delay, or no answer at all. */
export interface IdpResponse {
  status?: number;
  body?: string | object;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Hold the request open without answering, until the provider closes. */
  never?: boolean;
}

export interface TestIdentityProvider {
  /** `https://<host>:<port>` plus the issuer path, exactly as it appears in `iss`. */
  issuerUrl: string;
  /** `jwks_uri` of the discovery document. */
  jwksUri: string;
  /** A second URL serving the same key set, for an issuer configured with `jwks_url`. */
  keysUrl: string;
  /** PEM of the CA that signed the server certificate. */
  caPem: string;
  ca: DevCertificateAuthority;
  /** Published keys, in order. */
  readonly keys: IdpKey[];
  /** Paths of the requests received, in order. */
  readonly requests: string[];
  /** Signs a token; `iss`, `iat` and `exp` are filled in unless given. */
  sign(claims: Record<string, unknown>, options?: IdpSignOptions): string;
  /** Generates and publishes a new key. */
  addKey(alg: IdpAlgorithm, kid?: string): IdpKey;
  removeKey(kid: string): void;
  /** The JWK Set as served. */
  jwks(): { keys: JWK[] };
  /** Overrides (or, with null, restores) the answer for a path. */
  respond(path: string, response: IdpResponse | null): void;
  close(): Promise<void>;
}

export interface IdentityProviderOptions {
  /** Host name in the issuer URL; the server listens on 127.0.0.1. @default '127.0.0.1' */
  hostname?: string;
  /** Path of the issuer URL (no trailing slash), e.g. `/tenant-1`. @default '' */
  issuerPath?: string;
  /** Port to listen on. @default a free one */
  port?: number;
  /** Reuse a CA (e.g. one the service under test already trusts). */
  ca?: DevCertificateAuthority;
  /** Header values for the key set answer. @default { 'cache-control': 'max-age=600' } */
  jwksHeaders?: Record<string, string>;
}

export async function startIdentityProvider(options: IdentityProviderOptions = {}): Promise<TestIdentityProvider> {
  const hostname = options.hostname ?? '127.0.0.1';
  const ca = options.ca ?? createDevCertificateAuthority({ commonName: 'test identity provider CA' });
  const serverCert = ca.issueServerCertificate([hostname, 'localhost', '127.0.0.1', '::1']);
  const keys: IdpKey[] = [];
  const requests: string[] = [];
  const overrides = new Map<string, IdpResponse>();
  let issuerUrl = '';
  let kidCounter = 0;

  const addKey = (alg: IdpAlgorithm, kid?: string): IdpKey => {
    const pair = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
    const exported = pair.publicKey.export({ format: 'jwk' }) as JWK;
    const id = kid ?? `${alg.toLowerCase()}-${++kidCounter}`;
    const key: IdpKey = { kid: id, alg, privateKey: pair.privateKey, publicJwk: { ...exported, kid: id, alg, use: 'sig' } };
    keys.push(key);
    return key;
  };
  addKey('ES256');
  addKey('RS256');

  const jwks = () => ({ keys: keys.map((key) => key.publicJwk) });
  const issuerPath = options.issuerPath ?? '';
  const paths = {
    discovery: `${issuerPath}/.well-known/openid-configuration`,
    jwks: `${issuerPath}/.well-known/jwks.json`,
    keys: `${issuerPath}/keys`,
  };

  const server: Server = createServer({ cert: serverCert.certPem, key: serverCert.keyPem }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    requests.push(path);
    const override = overrides.get(path);
    let status = 200;
    let headers: Record<string, string> = { 'content-type': 'application/json' };
    let body: string | object | undefined;
    if (path === paths.discovery) {
      body = { issuer: issuerUrl, jwks_uri: `${origin}${paths.jwks}`, id_token_signing_alg_values_supported: ['ES256', 'RS256'] };
    } else if (path === paths.jwks || path === paths.keys) {
      body = jwks();
      headers = { ...headers, ...(options.jwksHeaders ?? { 'cache-control': 'max-age=600' }) };
    } else {
      status = 404;
      body = { error: 'not found' };
    }
    if (override) {
      status = override.status ?? status;
      body = override.body ?? body;
      headers = { ...headers, ...override.headers };
    }
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const send = () => {
      res.writeHead(status, { 'content-length': String(Buffer.byteLength(text)), ...headers });
      res.end(text);
    };
    if (override?.never) return;
    if (override?.delayMs) setTimeout(send, override.delayMs).unref();
    else send();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `https://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`;
  issuerUrl = `${origin}${issuerPath}`;

  return {
    issuerUrl,
    jwksUri: `${origin}${paths.jwks}`,
    keysUrl: `${origin}${paths.keys}`,
    caPem: ca.certPem,
    ca,
    keys,
    requests,
    sign(claims, signOptions = {}) {
      const alg = signOptions.alg ?? 'ES256';
      const key = signOptions.kid ? keys.find((k) => k.kid === signOptions.kid) : keys.find((k) => k.alg === alg);
      const kid = signOptions.kid === null ? undefined : (signOptions.kid ?? key?.kid);
      const nowSeconds = Math.floor((signOptions.now ?? new Date()).getTime() / 1000);
      const payload = { iss: issuerUrl, iat: nowSeconds, exp: nowSeconds + 600, ...claims };
      const header = withoutUndefined({ alg, typ: 'JWT', kid, ...signOptions.header });
      const privateKey = signOptions.privateKey ?? key?.privateKey;
      if (!privateKey) throw new Error(`no ${alg} key to sign with`);
      return signJws(header, payload, { alg, privateKey });
    },
    addKey,
    removeKey(kid) {
      const index = keys.findIndex((key) => key.kid === kid);
      if (index >= 0) keys.splice(index, 1);
    },
    jwks,
    respond(path, response) {
      if (response) overrides.set(path, response);
      else overrides.delete(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A compact JWS over exactly the header and payload given: for well-formed and forged tokens alike. */
export function signJws(
  header: Record<string, unknown>,
  payload: Record<string, unknown> | string,
  signer: { alg: IdpAlgorithm; privateKey: KeyObject } | { alg: 'HS256'; secret: Buffer | string } | { alg: 'none' },
): string {
  const encodedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
  const encodedPayload = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url');
  const input = `${encodedHeader}.${encodedPayload}`;
  let signature: Buffer;
  if (signer.alg === 'none') signature = Buffer.alloc(0);
  else if (signer.alg === 'HS256') signature = createHmac('sha256', signer.secret).update(input).digest();
  else if (signer.alg === 'ES256') signature = cryptoSign('sha256', Buffer.from(input), { key: signer.privateKey, dsaEncoding: 'ieee-p1363' });
  else signature = cryptoSign('sha256', Buffer.from(input), signer.privateKey);
  return `${input}.${signature.toString('base64url')}`;
}

function withoutUndefined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
