import { createHash, createPublicKey } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import { derToJose, type Signer } from './signer';

/** ES256 through KMS: `Sign` over the SHA-256 digest, DER signature converted to r||s. */
export class KmsSigner implements Signer {
  constructor(
    private readonly client: KMSClient,
    private readonly keyArn: string,
    readonly kid: string,
  ) {}

  async sign(signingInput: Uint8Array): Promise<Uint8Array> {
    const digest = createHash('sha256').update(signingInput).digest();
    const result = await this.client.send(
      new SignCommand({ KeyId: this.keyArn, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }),
    );
    if (!result.Signature) throw new Error('KMS returned no signature');
    return derToJose(result.Signature);
  }
}

/** The public JWK of a KMS key and its RFC 7638 thumbprint, used as `kid`. */
export async function kmsPublicJwk(client: KMSClient, keyArn: string): Promise<{ kid: string; publicJwk: JWK }> {
  const result = await client.send(new GetPublicKeyCommand({ KeyId: keyArn }));
  if (!result.PublicKey) throw new Error('KMS returned no public key');
  const jwk = await exportJWK(createPublicKey({ key: Buffer.from(result.PublicKey), format: 'der', type: 'spki' }));
  const kid = await calculateJwkThumbprint(jwk, 'sha256');
  return { kid, publicJwk: { ...jwk, kid, alg: 'ES256', use: 'sig' } };
}
