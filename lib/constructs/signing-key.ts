import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * The KMS key that signs issued access tokens (ES256). The private key never leaves
 * KMS; verifiers use the public key as recorded in the keys table by the signing-key
 * registrar, so only the registrar reads it from KMS.
 *
 * KMS cannot rotate asymmetric keys (and CDK throws if asked to): rotation is done by
 * adding a new key and a new signing-key record, which JWKS publishes beside the old one
 * until every token it signed has expired.
 */
export class SigningKey extends Construct {
  readonly key: kms.Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new kms.Key(this, 'Key', {
      description: 'Signs modelgate access tokens (ES256)',
      keySpec: kms.KeySpec.ECC_NIST_P256,
      keyUsage: kms.KeyUsage.SIGN_VERIFY,
      enableKeyRotation: false,
      // Tokens signed by a deleted key stop verifying; a stack deletion must not do that.
      removalPolicy: RemovalPolicy.RETAIN,
      // The stack name keeps aliases of two stacks in one account apart.
      alias: `alias/${Stack.of(this).stackName}/access-token-signing`,
    });
  }

  get keyArn(): string {
    return this.key.keyArn;
  }

  get keyId(): string {
    return this.key.keyId;
  }

  /** Lets the grantee sign token digests: `kms:Sign` and nothing else. */
  grantSign(grantee: iam.IGrantable): iam.Grant {
    return this.key.grant(grantee, 'kms:Sign');
  }

  /** Lets the grantee read the public key: `kms:GetPublicKey` and nothing else. */
  grantPublicKeyRead(grantee: iam.IGrantable): iam.Grant {
    return this.key.grant(grantee, 'kms:GetPublicKey');
  }
}
