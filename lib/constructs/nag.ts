import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * The string cdk-nag names a value by in a finding's id (`AwsSolutions-IAM5[Resource::…]`), for
 * the environment `scope`'s stack is built in: resolved, then flattened as cdk-nag does (`Ref` as
 * `<Name>`, `Fn::GetAtt` as `<Resource.Attribute>`, `Fn::Join` joined). An id written as a literal
 * (`arn:<AWS::Partition>:kms:…`) matches only the environment-agnostic stack: the CLI builds for
 * an account and region, where partition and region are literals. One derived from the statement's
 * own value matches in every environment (docs/deploying.md#cdk-nag).
 * @example
 * const arn = stack.formatArn({ service: 'kms', resource: 'key', resourceName: '*' });
 * Validations.of(policy).acknowledge({ id: `AwsSolutions-IAM5[Resource::${nagName(policy, arn)}]`, reason });
 */
export function nagName(scope: IConstruct, value: string): string {
  return flatten(Stack.of(scope).resolve(value));
}

function flatten(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const fn = node as Record<string, unknown>;
    if (Array.isArray(fn['Fn::Join'])) {
      const [delimiter, items] = fn['Fn::Join'] as [string, unknown[]];
      return items.map(flatten).join(delimiter);
    }
    if ('Fn::Sub' in fn) return flatten(fn['Fn::Sub']);
    if (Array.isArray(fn['Fn::GetAtt'])) {
      const [resource, attribute] = fn['Fn::GetAtt'] as [unknown, unknown];
      return `<${flatten(resource)}.${flatten(attribute)}>`;
    }
    if ('Fn::ImportValue' in fn) return flatten(fn['Fn::ImportValue']);
    if ('Ref' in fn) return `<${flatten(fn.Ref)}>`;
  }
  return JSON.stringify(node);
}
