import { RemovalPolicy, SecretValue, Validations } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * The secret that holds the API keys of the inference providers: a JSON object of
 * provider tag, provider or `*` to key, e.g. `{"*": "sk-..."}`. The stack creates it empty;
 * operators put the keys in after deployment (docs/deploying.md), so they never pass through the
 * template or the CDK context.
 */
export class ProviderCredentials extends Construct {
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'Secret', {
      description: 'modelgate inference provider API keys: JSON object of provider to key',
      // An empty object is no secret; the keys are added out of band.
      secretStringValue: SecretValue.unsafePlainText('{}'),
      // Keys put in by operators must survive a stack replacement.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: "The keys are issued by third-party providers, which Secrets Manager cannot rotate; operators replace them when a provider rotates a key",
    });
  }

  /**
   * Lets the function read the keys: `secretsmanager:GetSecretValue` (and DescribeSecret)
   * on this secret only, with its ARN in `PROVIDER_CREDENTIALS_SECRET_ARN`.
   */
  bindReader(fn: lambda.Function): void {
    fn.addEnvironment('PROVIDER_CREDENTIALS_SECRET_ARN', this.secret.secretArn);
    this.secret.grantRead(fn);
  }
}
