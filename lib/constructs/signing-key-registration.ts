import { type CfnElement, CustomResource, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { instanceName } from './instance';
import { nagName } from './nag';
import { instanceLogGroupName } from './service-function';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../lambdas/signing/registration-properties';
import type { SigningKey } from './signing-key';

/** The key {@link SigningKeyRegistration} records, and the function that records it. */
export interface SigningKeyRegistrationProps {
  /** The key whose public half is recorded. */
  readonly signingKey: SigningKey;
  /**
   * The function that reads the public key and writes the signing-key record
   * (lambdas/functions/signing-key-registrar/entry.ts). It is granted `grantPublicKeyRead`
   * here; its table access is the caller's to bind.
   */
  readonly registrar: lambda.IFunction;
}

/**
 * Records the signing key's public key in the keys table on every deployment that
 * creates or changes the key, so JWKS and the token verifiers never call KMS.
 */
export class SigningKeyRegistration extends Construct {
  readonly resource: CustomResource;
  /** The custom resource framework's function that invokes the registrar. */
  readonly frameworkFunction: lambda.IFunction;

  constructor(scope: Construct, id: string, props: SigningKeyRegistrationProps) {
    super(scope, id);
    props.signingKey.grantPublicKeyRead(props.registrar);

    const provider = new cr.Provider(this, 'Provider', {
      onEventHandler: props.registrar,
      logGroup: new logs.LogGroup(this, 'ProviderLogs', {
        logGroupName: instanceLogGroupName(this, 'SigningKeyRegistrationProvider'),
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });

    this.frameworkFunction = provider.node.findChild('framework-onEvent') as lambda.IFunction;
    // CDK describes the framework by its construct path; the instance's own name says where it belongs wherever the construct sits.
    (this.frameworkFunction.node.defaultChild as lambda.CfnFunction).description =
      `AWS CDK resource provider framework - onEvent (${instanceName(this)}/${id}/Provider)`;
    Validations.of(provider).acknowledge(
      {
        id: `AwsSolutions-IAM4[Policy::${nagName(this, iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole').managedPolicyArn)}]`,
        reason: "The custom resource framework of aws-cdk-lib builds this role; it only writes its own logs and invokes the registrar",
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${registrarLogicalId(props.registrar)}.Arn>:*]`,
        reason: 'The framework may invoke any version of the registrar function; the wildcard covers versions of that one function',
      },
    );

    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::SigningKeyRegistration',
      // A new key ARN changes the properties, so CloudFormation sends an Update and the
      // new key is registered.
      properties: { [SIGNING_KEY_REGISTRATION_PROPERTIES.signingKeyArn]: props.signingKey.keyArn },
    });
    // The registrar's grants are separate IAM policy resources; they must exist before
    // CloudFormation invokes it.
    this.resource.node.addDependency(props.registrar);
  }
}

/** The registrar's logical id, as cdk-nag names it in the framework's invoke permission. */
function registrarLogicalId(registrar: lambda.IFunction): string {
  const stack = Stack.of(registrar);
  return stack.resolve(stack.getLogicalId(registrar.node.defaultChild as CfnElement)) as string;
}
