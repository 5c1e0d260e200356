import { randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { accessTokenHash } from '../lambdas/credentials/dpop-proof';

/** A workload's DPoP key (RFC 9449): the private key never leaves the workload. */
export interface DpopKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The RFC 7638 thumbprint: the `cnf.jkt` of the tokens bound to this key. */
  jkt: string;
  /** The algorithm its proofs are signed with. */
  alg: string;
}

/** A fresh DPoP key pair for `alg` (ES256 by default) and its thumbprint. */
export async function newDpopKey(alg = 'ES256', options: Parameters<typeof generateKeyPair>[1] = {}): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, options);
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk), alg };
}

/**
 * A DPoP proof (RFC 9449 §4.2) for one request: `htm` the method, `htu` the URL without query
 * and fragment, `ath` the hash of the access token on a protected route, a fresh `jti`.
 */
export function dpopProof(key: DpopKey, method: string, url: string | URL, accessToken?: string): Promise<string> {
  const target = new URL(url);
  target.search = '';
  target.hash = '';
  return new SignJWT({
    htm: method,
    htu: target.href,
    jti: randomUUID(),
    iat: Math.floor(Date.now() / 1000),
    ...(accessToken === undefined ? {} : { ath: accessTokenHash(accessToken) }),
  })
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.publicJwk })
    .sign(key.privateKey);
}

/**
 * A `fetch` that presents a DPoP-bound access token as RFC 9449 §7 says, a new proof for every
 * request: hand it to any client that takes a `fetch`, such as the `openai` client. `send` is
 * the `fetch` that carries the request, the global one unless another is given.
 */
export function dpopFetch(accessToken: string, key: DpopKey, send: typeof fetch = fetch): typeof fetch {
  return async (input, init = {}) => {
    const url = typeof input === 'string' || input instanceof URL ? new URL(input) : new URL(input.url);
    const method = init.method ?? (input instanceof Request ? input.method : 'GET');
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    headers.set('Authorization', `DPoP ${accessToken}`);
    headers.set('DPoP', await dpopProof(key, method, url, accessToken));
    return send(input, { ...init, method, headers });
  };
}
