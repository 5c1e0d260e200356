import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDevCertificateAuthority, loadDevCertificateAuthority, type DevCertificateAuthority } from './dev-certificates';
import { writeFileAtomically } from './files';

/** The development CA's certificate (PEM), in the local runtime's data folder. */
export const DEV_CA_CERT_FILE = 'dev-ca.pem';
/** The development CA's private key (PKCS #8 PEM) beside it, readable by the owner only. */
export const DEV_CA_KEY_FILE = 'dev-ca-key.pem';

/**
 * The development CA the local runtime trusts for identity providers on this machine (the
 * demo's, a developer's own): created on first start and kept in the data folder, so an
 * identity provider started later (`npm run demo`) issues its server certificate from it and
 * the running service accepts it. Nothing outside this process trusts it; its key is
 * readable by the owner only.
 */
export function ensureDevCertificateAuthority(dataDir: string): DevCertificateAuthority {
  const certFile = join(dataDir, DEV_CA_CERT_FILE);
  const keyFile = join(dataDir, DEV_CA_KEY_FILE);
  if (existsSync(certFile) && existsSync(keyFile)) {
    return loadDevCertificateAuthority(readFileSync(certFile, 'utf8'), readFileSync(keyFile, 'utf8'));
  }
  const ca = createDevCertificateAuthority({ commonName: 'modelgate local development CA' });
  writeFileAtomically(keyFile, ca.keyPem, 0o600);
  writeFileAtomically(certFile, ca.certPem);
  return ca;
}

/** The development CA of a running local runtime, for a tool that serves HTTPS to it. */
export function readDevCertificateAuthority(dataDir: string): DevCertificateAuthority {
  return loadDevCertificateAuthority(readFileSync(join(dataDir, DEV_CA_CERT_FILE), 'utf8'), readFileSync(join(dataDir, DEV_CA_KEY_FILE), 'utf8'));
}
