import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { UpstreamTarget } from '../../lambdas/providers/targets';
import { nagName } from './nag';

/** The prefixes of Bedrock's cross-region inference profile ids (`us.anthropic.claude-...`). */
const PROFILE_PREFIX = /^(us|eu|apac|us-gov|jp|au|ca|global)\./;
const BEDROCK_ARN = /^arn:aws[a-z-]*:bedrock:([a-z0-9-]*):(\d{12})?:([a-z-]+)\/(.+)$/;

/**
 * The resources a Bedrock model id of the configuration is invoked through: a foundation model in
 * the target's region; an inference profile of the stack's account and the foundation model in
 * every region the profile may route to; an ARN as given, and for an inference-profile ARN
 * that foundation model too (an application inference profile names no model: the ARN alone).
 */
export function bedrockResources(modelId: string, region: string, account: string, partition: string): string[] {
  const arn = BEDROCK_ARN.exec(modelId);
  if (arn) {
    const [, , , type, id] = arn;
    return type === 'inference-profile' ? [modelId, foundationModel(partition, '*', id!.replace(PROFILE_PREFIX, ''))] : [modelId];
  }
  if (PROFILE_PREFIX.test(modelId)) {
    return [`arn:${partition}:bedrock:${region}:${account}:inference-profile/${modelId}`, foundationModel(partition, '*', modelId.replace(PROFILE_PREFIX, ''))];
  }
  return [foundationModel(partition, region, modelId)];
}

const foundationModel = (partition: string, region: string, id: string) => `arn:${partition}:bedrock:${region}::foundation-model/${id}`;

/**
 * Lets the inference function call Bedrock's Converse and ConverseStream (`bedrock:InvokeModel`,
 * `bedrock:InvokeModelWithResponseStream`) on exactly the models its `inferenceUpstreams`
 * configure for the bedrock API, and nothing when none are configured.
 */
export function grantBedrockModels(fn: lambda.Function, upstreams: Readonly<Record<string, UpstreamTarget>>): void {
  const stack = Stack.of(fn);
  const resources = new Set<string>();
  for (const target of Object.values(upstreams)) {
    if (typeof target !== 'object' || target.api !== 'bedrock') continue;
    for (const modelId of Object.values(target.models)) {
      for (const resource of bedrockResources(modelId, target.region ?? stack.region, stack.account, stack.partition)) resources.add(resource);
    }
  }
  if (resources.size === 0) return;
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'], resources: [...resources].sort() }));
  // The grants land in the role's own inline policy (lib/constructs/service-function.ts): the finding is the role's.
  const role = fn.role!;
  for (const resource of [...resources].filter((arn) => arn.includes('*'))) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagName(role, resource)}]`,
      reason: 'A cross-region inference profile routes to its foundation model in any region it serves: the model is named, the region is not',
    });
  }
}
