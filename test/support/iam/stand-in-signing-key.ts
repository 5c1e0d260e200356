import { CreateKeyCommand, type Tag } from '@aws-sdk/client-kms';
import type { KmsStandIn } from '../kms-stand-in';
import type { IamGate } from './iam-gate';

/**
 * Creates the stack's signing key in the KMS stand-in as CloudFormation would, with the
 * template's key policy and tags (test set-up's credentials, not gated), and binds it to the
 * template's key: the functions' grants on the key, and its policy and tags, apply to it.
 * Returns its ARN.
 */
export async function createStackSigningKey(kms: KmsStandIn, gate: IamGate): Promise<string> {
  // The tables' encryption keys are DynamoDB's to use, server side; the signing key is the functions'.
  const keys = gate.resources.filter((resource) => resource.type === 'AWS::KMS::Key' && resource.keyUsage === 'SIGN_VERIFY');
  if (keys.length !== 1) throw new Error(`the stack has ${keys.length} signing keys, expected one`);
  const [key] = keys as [(typeof keys)[number]];
  const { KeyMetadata } = await kms.client().send(
    new CreateKeyCommand({
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      Policy: JSON.stringify(key.policy),
      Tags: Object.entries(key.tags).map(([TagKey, TagValue]): Tag => ({ TagKey, TagValue })),
    }),
  );
  gate.bind(key.logicalId, { ref: KeyMetadata!.KeyId!, arn: KeyMetadata!.Arn! });
  return KeyMetadata!.Arn!;
}

/**
 * Creates a key the way signing-key rotation does (`npm run ops -- signing-key rotate`): the
 * active key's policy, and the given tags. Not a key of the template.
 */
export async function createRotatedSigningKey(kms: KmsStandIn, policy: unknown, tags: Record<string, string>): Promise<string> {
  const { KeyMetadata } = await kms.client().send(
    new CreateKeyCommand({
      KeySpec: 'ECC_NIST_P256',
      KeyUsage: 'SIGN_VERIFY',
      Policy: JSON.stringify(policy),
      Tags: Object.entries(tags).map(([TagKey, TagValue]): Tag => ({ TagKey, TagValue })),
    }),
  );
  return KeyMetadata!.Arn!;
}
