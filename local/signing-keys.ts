import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LocalSigner } from '../lambdas/signing/local-signer';
import { LOCAL_KEY_REF_PREFIX } from '../lambdas/wiring/signer-for-record';
import type { SigningKeyRegistration } from '../lambdas/signing/signing-key-registry';

/** The first local signing key's file, created by the first `npm start`. */
export const LOCAL_SIGNING_KEY_FILE = 'signing-key.pem';

/**
 * A new local ES256 key for a rotation: a new PEM file in the data folder (owner-readable
 * only), named by its creation time. The local service signs with whichever key the active
 * signing-key record names, so the file is used once the rotation registers it.
 */
export async function createLocalSigningKey(dataDir: string, now: Date): Promise<SigningKeyRegistration> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const file = `signing-key-${stamp}-${randomBytes(3).toString('hex')}.pem`;
  const signer = await LocalSigner.fromFile(join(dataDir, file));
  return { kid: signer.kid, keyRef: `${LOCAL_KEY_REF_PREFIX}${file}`, publicJwk: signer.publicJwk };
}
