import { createHash, createPublicKey } from 'node:crypto';
import { CreateKeyCommand, GetKeyPolicyCommand, GetPublicKeyCommand, ListResourceTagsCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import { derToJose, type Signer } from '../signing/signer';

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

/**
 * Creates a KMS signing key made like `likeKeyArn` (the active one): ECC_NIST_P256 for
 * SIGN_VERIFY, the same key policy and the same tags. The stack grants `kms:Sign` on keys
 * carrying its signing tag, so the token exchange can sign with the new key without a
 * redeploy, and the copied key policy keeps whatever it says about who may use the key.
 */
export async function createKmsSigningKeyLike(
  client: KMSClient,
  likeKeyArn: string,
  description: string,
): Promise<{ keyArn: string; kid: string; publicJwk: JWK }> {
  const [{ Policy }, { Tags }] = await Promise.all([
    client.send(new GetKeyPolicyCommand({ KeyId: likeKeyArn, PolicyName: 'default' })),
    client.send(new ListResourceTagsCommand({ KeyId: likeKeyArn })),
  ]);
  const created = await client.send(
    new CreateKeyCommand({
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      Description: description,
      Policy,
      Tags: Tags?.map(({ TagKey, TagValue }) => ({ TagKey, TagValue })),
    }),
  );
  const keyArn = created.KeyMetadata?.Arn;
  if (!keyArn) throw new Error('KMS created no key');
  return { keyArn, ...(await kmsPublicJwk(client, keyArn)) };
}
