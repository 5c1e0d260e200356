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
    key.grantSign(fn.role!);
    expect(kmsActions(stack)).toEqual(['kms:Sign']);
  });

  it('grantSign denies kms:Sign in the key policy to every principal but that role; the root keeps administration', () => {
    const { stack, key, fn } = arrange();
    key.grantSign(fn.role!);
    const [policyKey] = Object.values(Template.fromStack(stack).findResources('AWS::KMS::Key'));
    const statements = policyKey!.Properties.KeyPolicy.Statement as Record<string, unknown>[];
    const roleArn = { 'Fn::GetAtt': [expect.stringMatching(/^SubjectRole/), 'Arn'] };
    expect(statements).toEqual([
      expect.objectContaining({ Effect: 'Allow', Action: 'kms:*', Principal: { AWS: expect.anything() }, Resource: '*' }),
      {
        Sid: 'OnlyTheTokenExchangeSigns',
        Effect: 'Deny',
        Action: 'kms:Sign',
        Principal: { AWS: '*' },
        Resource: '*',
        Condition: { ArnNotEquals: { 'aws:PrincipalArn': roleArn } },
      },
    ]);
  });

  it('lets only one role sign', () => {
    const { stack, key, fn } = arrange();
    key.grantSign(fn.role!);
    const other = new ServiceFunction(stack, 'Other', { entry: ENTRY, description: 'test', stageName: 'v1' });
    expect(() => key.grantSign(other.role!)).toThrow('Only one role may sign access tokens');
  });

  it('grantPublicKeyRead grants kms:GetPublicKey and nothing else', () => {
    const { stack, key, fn } = arrange();
    key.grantPublicKeyRead(fn);
    expect(kmsActions(stack)).toEqual(['kms:GetPublicKey']);
  });
});
