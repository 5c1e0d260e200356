import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import { derToJose, type Signer } from './signer';

/**
 * ES256 signer over a P-256 key kept in a PEM file (created on first use), for the local
 * runtime. It takes the same DER path as KMS: node signs in DER, {@link derToJose} converts.
 */
export class LocalSigner implements Signer {
  private constructor(
    readonly kid: string,
    private readonly privateKey: KeyObject,
    readonly publicJwk: JWK,
  ) {}

  /** Reads the key file; creates it first when absent, unless `create` is false. */
  static async fromFile(path: string, { create = true }: { create?: boolean } = {}): Promise<LocalSigner> {
    if (!existsSync(path)) {
      if (!create) throw new Error(`Signing key file ${path} does not exist`);
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    }
    const privateKey = createPrivateKey(readFileSync(path, 'utf8'));
    const publicJwk = await exportJWK(createPublicKey(privateKey));
    const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
    return new LocalSigner(kid, privateKey, { ...publicJwk, kid, alg: 'ES256', use: 'sig' });
  }

  async sign(signingInput: Uint8Array): Promise<Uint8Array> {
    return derToJose(sign('sha256', signingInput, { key: this.privateKey, dsaEncoding: 'der' }));
  }
}
