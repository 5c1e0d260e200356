import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ServiceFunction } from '../../../lib/constructs/service-function';
import { SigningKey } from '../../../lib/constructs/signing-key';
import { functionActions } from '../template-helpers';

const ENTRY = path.join(__dirname, '..', 'fixtures', 'handler.ts');

function arrange(): { stack: Stack; key: SigningKey; fn: ServiceFunction } {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test');
  const key = new SigningKey(stack, 'SigningKey');
  const fn = new ServiceFunction(stack, 'Subject', { entry: ENTRY, description: 'test', stageName: 'v1' });
  return { stack, key, fn };
}

const kmsActions = (stack: Stack): string[] =>
  functionActions(Template.fromStack(stack), 'Subject').filter((a) => a.startsWith('kms:'));

describe('SigningKey', () => {
  it('is an ES256 (P-256) signing key with an alias under the stack name', () => {
    const template = Template.fromStack(arrange().stack);
    template.hasResource('AWS::KMS::Key', {
      Properties: { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY', EnableKeyRotation: false },
      DeletionPolicy: 'Retain',
    });
    template.hasResourceProperties('AWS::KMS::Alias', { AliasName: 'alias/Test/access-token-signing' });
  });

  it('grantSign grants kms:Sign and nothing else', () => {
    const { stack, key, fn } = arrange();
    key.grantSign(fn);
    expect(kmsActions(stack)).toEqual(['kms:Sign']);
  });

  it('grantPublicKeyRead grants kms:GetPublicKey and nothing else', () => {
    const { stack, key, fn } = arrange();
    key.grantPublicKeyRead(fn);
    expect(kmsActions(stack)).toEqual(['kms:GetPublicKey']);
  });
});
