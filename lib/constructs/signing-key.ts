import { RemovalPolicy, Stack, Tags, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { instanceName } from './instance';
import { nagName } from './nag';

/**
 * The tag that marks an instance's signing keys: its own key, and every key the rotate
 * command (`npm run ops -- signing-key rotate`) creates. Its value is the instance name.
 */
export const SIGNING_KEY_TAG = 'modelgate:access-token-signing';

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
      // The instance name keeps aliases of two instances in one account apart.
      alias: `alias/${instanceName(this)}/access-token-signing`,
    });
    Tags.of(this.key).add(SIGNING_KEY_TAG, instanceName(this));
  }

  /** `alias/<instance>/access-token-signing`: the name operators and other stacks find the key by. */
  get alias(): kms.IAlias {
    return this.key.node.findChild('Alias') as kms.Alias;
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

  /**
   * Lets the grantee sign with any key of this instance's rotation: keys in this account and
   * region tagged {@link SIGNING_KEY_TAG} with the instance name. A rotated key is used without
   * a redeploy; which key signs is decided by the active signing-key record.
   */
  grantSignRotated(role: iam.IRole): void {
    const stack = Stack.of(this);
    const rotatedKeys = stack.formatArn({ service: 'kms', resource: 'key', resourceName: '*' });
    // In the role's own signing policy beside kms:Sign on this key: one policy, not two, per instance.
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['kms:Sign'],
        resources: [rotatedKeys],
        conditions: { StringEquals: { [`aws:ResourceTag/${SIGNING_KEY_TAG}`]: instanceName(this) } },
      }),
    );
    const policy = role.node.tryFindChild('DefaultPolicy');
    if (!policy) throw new Error('grantSignRotated: the signing role has no policy of its own; grant kms:Sign on the key first (grantSign)');
    Validations.of(policy).acknowledge({
      // Named from the statement's own ARN, so it matches in every environment (lib/constructs/nag.ts).
      id: `AwsSolutions-IAM5[Resource::${nagName(policy, rotatedKeys)}]`,
      reason:
        "Keys created by signing-key rotation are not known at deploy time; kms:Sign is limited to keys tagged with this stack's signing tag, and each rotated key carries the active key's policy, which denies Sign to every other principal",
    });
  }

  /** Lets the grantee read the public key: `kms:GetPublicKey` and nothing else. */
  grantPublicKeyRead(grantee: iam.IGrantable): iam.Grant {
    return this.key.grant(grantee, 'kms:GetPublicKey');
  }
}
