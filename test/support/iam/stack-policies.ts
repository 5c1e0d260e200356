import { ALL_TABLES } from '../../../lambdas/aws/table-schemas';
import { FUNCTION_CONSTRUCT_IDS, type StackFunctionId } from '../../../local/function-principals';
import { SYNTH_ENV, TemplateResolver, constructPathOf, onlyInstancePath } from '../cloud-assembly';
import { tableArn } from './dynamodb-authorizations';
import type { SynthesizedStack } from './stack-template';

/** An IAM policy document, as the template holds it once resolved. */
export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: readonly PolicyStatement[];
}

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: 'Allow' | 'Deny';
  readonly Principal?: unknown;
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** A function of the stack as IAM sees its requests: the role session it runs as and the role's policies. */
export interface FunctionPrincipal {
  readonly fn: StackFunctionId;
  /** The access key id its clients present (local/function-principals.ts). */
  readonly accessKeyId: string;
  readonly roleArn: string;
  /** `arn:aws:sts::<account>:assumed-role/<role>/<function>`: Lambda names the session after the function. */
  readonly sessionArn: string;
  /** Every policy attached to the role: `AWS::IAM::Policy` resources naming it, and its inline policies. */
  readonly policies: readonly { readonly name: string; readonly document: PolicyDocument }[];
}

/** A resource of the stack with a resource policy or tags IAM evaluates: a KMS key, a secret. */
export interface StackResource {
  readonly logicalId: string;
  readonly type: string;
  readonly arn: string;
  readonly policy?: PolicyDocument;
  readonly tags: Readonly<Record<string, string>>;
  /** A KMS key's `KeyUsage`: `SIGN_VERIFY` for the signing key, `ENCRYPT_DECRYPT` (the default) for a table's. */
  readonly keyUsage?: string;
}

/** The stack's IAM, resolved: what the gate evaluates each request against. */
export interface StackPolicies {
  readonly account: string;
  readonly region: string;
  readonly stackName: string;
  /** By access key id. */
  readonly functions: Readonly<Record<string, FunctionPrincipal>>;
  readonly resources: readonly StackResource[];
}

/**
 * A stand-in resource created for a resource of the template (the KMS stand-in's key for the
 * stack's signing key): the template's references to it resolve to it.
 */
export interface BoundResource {
  readonly logicalId: string;
  readonly ref: string;
  readonly arn: string;
}

const ROLE_SESSION = (account: string, roleArn: string, session: string) =>
  `arn:aws:sts::${account}:assumed-role/${roleArn.slice(roleArn.indexOf(':role/') + ':role/'.length)}/${session}`;

/**
 * Resolves the functions' policies and the resources' policies and tags from the synthesized
 * template, in the suites' account and region. Tables resolve to their local names
 * (`arn:aws:dynamodb:<region>:<account>:table/modelgate-keys`), found by construct path
 * `<instance>/Tables/<Id>Table/Resource`; KMS keys to `arn:aws:kms:<region>:<account>:key/<logical id>`
 * and secrets to `arn:aws:secretsmanager:<region>:<account>:secret:<logical id>-xxxxxx`
 * unless a stand-in resource is bound to them; roles, log groups and pseudo parameters as
 * test/support/cloud-assembly.ts resolves them. Functions are found by construct path
 * `<instance>/<construct id>/Resource` ({@link instancePathOf}); their role by the function's `Role`.
 */
export function resolveStackPolicies(stack: SynthesizedStack, bound: readonly BoundResource[] = []): StackPolicies {
  const { account, region } = SYNTH_ENV;
  const { template, stackName } = stack;
  const resources = Object.entries(template.Resources);

  const resolver = new TemplateResolver(template, stackName, SYNTH_ENV);
  for (const table of ALL_TABLES) {
    resolver.created(logicalIdAt(stack, `Tables/${table.id[0]!.toUpperCase()}${table.id.slice(1)}Table`), {
      ref: table.localName,
      attributes: { Arn: tableArn(SYNTH_ENV, table.localName) },
    });
  }
  const boundById = new Map(bound.map((resource) => [resource.logicalId, resource]));
  for (const [logicalId, resource] of resources) {
    const standIn = boundById.get(logicalId);
    if (resource.Type === 'AWS::KMS::Key') {
      const arn = standIn?.arn ?? `arn:aws:kms:${region}:${account}:key/${logicalId}`;
      resolver.created(logicalId, { ref: standIn?.ref ?? logicalId, attributes: { Arn: arn, KeyId: standIn?.ref ?? logicalId } });
    } else if (resource.Type === 'AWS::SecretsManager::Secret') {
      // A secret's Ref is its ARN, which ends in six random characters.
      resolver.created(logicalId, { ref: standIn?.arn ?? `arn:aws:secretsmanager:${region}:${account}:secret:${logicalId}-xxxxxx` });
    } else if (standIn) {
      throw new Error(`${logicalId} is a ${resource.Type}: only KMS keys and secrets are bound to stand-ins`);
    }
  }

  const functions: Record<string, FunctionPrincipal> = {};
  for (const fn of Object.keys(FUNCTION_CONSTRUCT_IDS) as StackFunctionId[]) {
    const constructId = FUNCTION_CONSTRUCT_IDS[fn];
    const roleId = roleOfFunction(stack, constructId);
    const role = template.Resources[roleId]!;
    // AWS managed policies are not in the template: a function role holding one could not be evaluated.
    if (role.Properties?.ManagedPolicyArns?.length) throw new Error(`${constructId}: its role has managed policies, which the gate cannot evaluate`);
    const roleArn = resolver.resolve({ 'Fn::GetAtt': [roleId, 'Arn'] }) as string;
    const inline = ((role.Properties?.Policies ?? []) as { PolicyName: unknown; PolicyDocument: unknown }[]).map((policy) => ({
      name: String(resolver.resolve(policy.PolicyName)),
      document: resolver.resolve(policy.PolicyDocument) as PolicyDocument,
    }));
    const attached = policiesOfRole(stack, roleId).map((logicalId) => ({
      name: logicalId,
      document: resolver.resolve(template.Resources[logicalId]!.Properties!.PolicyDocument) as PolicyDocument,
    }));
    functions[constructId] = {
      fn,
      accessKeyId: constructId,
      roleArn,
      sessionArn: ROLE_SESSION(account, roleArn, constructId),
      policies: [...inline, ...attached],
    };
  }

  const secretPolicies = new Map(
    resources
      .filter(([, resource]) => resource.Type === 'AWS::SecretsManager::ResourcePolicy')
      .map(([, resource]) => [(resource.Properties!.SecretId as { Ref?: string }).Ref, resource.Properties!.ResourcePolicy]),
  );
  const stackResources: StackResource[] = resources
    .filter(([, resource]) => resource.Type === 'AWS::KMS::Key' || resource.Type === 'AWS::SecretsManager::Secret')
    .map(([logicalId, resource]) => {
      const isKey = resource.Type === 'AWS::KMS::Key';
      const policy = isKey ? resource.Properties?.KeyPolicy : secretPolicies.get(logicalId);
      const tags = (resolver.resolve(resource.Properties?.Tags ?? []) as { Key: string; Value: string }[]).map(({ Key, Value }) => [Key, Value]);
      return {
        logicalId,
        type: resource.Type,
        arn: resolver.resolve(isKey ? { 'Fn::GetAtt': [logicalId, 'Arn'] } : { Ref: logicalId }) as string,
        ...(policy ? { policy: resolver.resolve(policy) as PolicyDocument } : {}),
        ...(isKey ? { keyUsage: (resource.Properties?.KeyUsage as string | undefined) ?? 'ENCRYPT_DECRYPT' } : {}),
        tags: Object.fromEntries(tags),
      };
    });

  return { account, region, stackName, functions, resources: stackResources };
}

/** The logical id of the resource at construct path `<instance>/<path>/Resource`. */
export function logicalIdAt(stack: SynthesizedStack, path: string): string {
  const wanted = `${instancePathOf(stack)}/${path}/Resource`;
  const found = Object.entries(stack.template.Resources).find(([, resource]) => constructPathOf(resource) === wanted);
  if (!found) throw new Error(`the template has no resource at ${wanted}`);
  return found[0];
}

/** The construct path of the instance the gate evaluates: the given one, else the template's only one. */
export function instancePathOf(stack: SynthesizedStack): string {
  return stack.instancePath ?? onlyInstancePath(stack.template);
}

/** The logical id of the execution role of the function with this construct id: its `Role`. */
export function roleOfFunction(stack: SynthesizedStack, constructId: string): string {
  const properties = stack.template.Resources[logicalIdAt(stack, constructId)]!.Properties ?? {};
  const roleId = (properties.Role as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0];
  if (!roleId || stack.template.Resources[roleId]?.Type !== 'AWS::IAM::Role') throw new Error(`${constructId}: its Role is not a role of the stack`);
  return roleId;
}

/** The logical ids of the `AWS::IAM::Policy` resources whose `Roles` name the role. */
export function policiesOfRole(stack: SynthesizedStack, roleId: string): string[] {
  return Object.entries(stack.template.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::IAM::Policy' && ((resource.Properties?.Roles ?? []) as { Ref?: string }[]).some((role) => role.Ref === roleId))
    .map(([logicalId]) => logicalId);
}
