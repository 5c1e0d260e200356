import { basename, join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { KmsSigner } from '../aws/kms-signer';
import { LocalSigner } from '../signing/local-signer';
import type { Signer, SigningKeyRecord } from '../signing/signer';

/** `keyRef` of a local key: `local:<file name>` in the local key folder. */
export const LOCAL_KEY_REF_PREFIX = 'local:';

/** What signers are built from: KMS in AWS, the local key folder in the local runtime. */
export interface SignerSources {
  /** Signs with KMS keys (`keyRef` a key ARN). */
  kms?: KMSClient;
  /** The folder that holds local key files (the local runtime only). */
  localKeyDir?: string;
}

/**
 * Builds the signer a signing-key record names: a KMS key by ARN in AWS, a key file in the
 * local key folder locally. The signer's key must be the recorded one (same `kid`), so a
 * missing or replaced key file cannot sign under the recorded `kid`.
 */
export function signerForRecord(sources: SignerSources): (record: SigningKeyRecord) => Promise<Signer> {
  return async (record) => {
    if (record.keyRef.startsWith(LOCAL_KEY_REF_PREFIX)) {
      const file = record.keyRef.slice(LOCAL_KEY_REF_PREFIX.length);
      if (!sources.localKeyDir) throw new Error(`Signing key ${record.kid} is a local key, and no local key folder is configured`);
      if (file !== basename(file)) throw new Error(`Signing key ${record.kid} names a file outside the key folder`);
      const signer = await LocalSigner.fromFile(join(sources.localKeyDir, file), { create: false });
      if (signer.kid !== record.kid) throw new Error(`The key file of signing key ${record.kid} holds another key (${signer.kid})`);
      return signer;
    }
    if (!sources.kms) throw new Error(`Signing key ${record.kid} is a KMS key, and no KMS client is configured`);
    return new KmsSigner(sources.kms, record.keyRef, record.kid);
  };
}
