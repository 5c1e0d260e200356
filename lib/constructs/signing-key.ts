import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
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

  private signer: iam.IRole | undefined;

  /**
   * Makes `role` the one principal that may sign with this key: it is granted `kms:Sign`
   * (and nothing else), and the key policy denies `kms:Sign` to every other principal, so a
   * broad IAM permission elsewhere (`kms:*` on `*`, an administrator) cannot mint access
   * tokens. The account root keeps every other action: administration stays possible.
   */
  grantSign(role: iam.IRole): iam.Grant {
    if (this.signer) throw new Error('Only one role may sign access tokens; grantSign was already called');
    this.signer = role;
    this.key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'OnlyTheTokenExchangeSigns',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['kms:Sign'],
        resources: ['*'],
        conditions: { ArnNotEquals: { 'aws:PrincipalArn': role.roleArn } },
      }),
    );
    return this.key.grant(role, 'kms:Sign');
  }

  /** Lets the grantee read the public key: `kms:GetPublicKey` and nothing else. */
  grantPublicKeyRead(grantee: iam.IGrantable): iam.Grant {
    return this.key.grant(grantee, 'kms:GetPublicKey');
  }
}
