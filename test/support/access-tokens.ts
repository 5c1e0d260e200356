import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSigner } from '../../lambdas/signing/local-signer';
import type { Signer, SigningKeyRecord } from '../../lambdas/signing/signer';

/** A new local ES256 signer with its key in a fresh temporary folder. */
export async function newLocalSigner(): Promise<LocalSigner> {
  return LocalSigner.fromFile(join(mkdtempSync(join(tmpdir(), 'modelgate-signer-')), 'key.pem'));
}

/** The signing-key record the registrar would write for a local signer. */
export function signingKeyRecord(signer: LocalSigner, overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  return { kid: signer.kid, keyRef: 'local:test', publicJwk: signer.publicJwk, status: 'active', createdAt: '2026-11-21T00:00:00.000Z', retiredAt: null, ...overrides };
}

/**
 * Signs a JWT through the Signer port, as the token exchange mints access tokens; header
 * and claims are the test's to choose, so malformed tokens can be made too.
 */
export async function signJwt(signer: Signer, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const fullHeader = { alg: 'ES256', typ: 'at+jwt', kid: signer.kid, ...header };
  const input = `${b64(JSON.stringify(fullHeader))}.${b64(JSON.stringify(claims))}`;
  const signature = await signer.sign(Buffer.from(input, 'ascii'));
  return `${input}.${Buffer.from(signature).toString('base64url')}`;
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
