import { randomUUID } from 'node:crypto';
import { SignJWT, type generateKeyPair } from 'jose';
import { accessTokenHash } from '../../lambdas/credentials/dpop-proof';
import { newDpopKey, type DpopKey } from '../../local/dpop-fetch';

/** A client's DPoP key pair, its public JWK and RFC 7638 thumbprint. */
export type ProofKey = DpopKey;

/** The demo's DPoP key, of any algorithm, its private key extractable (a test puts it in a proof's jwk). */
export function proofKey(alg = 'ES256', options: Parameters<typeof generateKeyPair>[1] = {}): Promise<ProofKey> {
  return newDpopKey(alg, { extractable: true, ...options });
}

export interface ProofOptions {
  htm?: string;
  htu?: string;
  /** Seconds; defaults to now. */
  iat?: unknown;
  jti?: unknown;
  /** The access token the proof is for: sets `ath`. */
  accessToken?: string;
  /** Claims to add or (as undefined) remove. */
  claims?: Record<string, unknown>;
  /** Header members to add or (as undefined) replace, e.g. another `jwk` or `typ`. */
  header?: Record<string, unknown>;
}

/**
 * A DPoP proof (RFC 9449 §4.2) signed by `key`, as a conforming client makes it, with every
 * member overridable so a test can break one check at a time.
 */
export async function signProof(key: ProofKey, options: ProofOptions = {}): Promise<string> {
  const payload: Record<string, unknown> = {
    jti: options.jti ?? randomUUID(),
    htm: options.htm ?? 'POST',
    htu: options.htu ?? 'https://api.modelgate.example/api/v1/oauth/token',
    iat: options.iat ?? Math.floor(Date.now() / 1000),
    ...(options.accessToken === undefined ? {} : { ath: accessTokenHash(options.accessToken) }),
    ...options.claims,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  const header: Record<string, unknown> = { alg: key.alg, typ: 'dpop+jwt', jwk: key.publicJwk, ...options.header };
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
  return new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(key.privateKey);
}
