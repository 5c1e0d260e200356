import { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** Where a construct that names an instance keeps its name, found by the constructs below it. */
const INSTANCE_NAME = Symbol.for('modelgate.instanceName');

/**
 * Names an instance of the service for every construct below `scope`: the prefix of each
 * physical name they set (KMS alias, signing tag, log groups, alarms, web ACL metric, API name),
 * so two instances in one account and region never collide.
 */
export function nameInstance(scope: IConstruct, name: string): void {
  Object.defineProperty(scope, INSTANCE_NAME, { value: name, enumerable: false });
}

/**
 * The instance a construct belongs to: the name its nearest enclosing `Modelgate` set, or the
 * stack's name for a construct built outside one (the constructs' own tests).
 */
export function instanceName(scope: IConstruct): string {
  for (const enclosing of [...scope.node.scopes].reverse()) {
    const name = (enclosing as unknown as Record<symbol, unknown>)[INSTANCE_NAME];
    if (typeof name === 'string') return name;
  }
  return Stack.of(scope).stackName;
}
