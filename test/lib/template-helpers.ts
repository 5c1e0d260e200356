import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Stack, Validations, type Environment } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildModelgateApp } from '../../lib/app';
import { Modelgate, type ModelgateProps } from '../../lib/modelgate';
import type { ModelgateStack } from '../../lib/modelgate-stack';

const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** The context of cdk.json: `new App()` outside the CLI does not read it. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

/**
 * Synthesizes the stack as `bin/app.ts` builds it (lib/app.ts), with real bundling and the
 * cdk-nag AwsSolutions pack registered: an unacknowledged finding fails the synth.
 * Environment-agnostic unless `env` is given; the CLI gives one (see deploy-environments.test.ts).
 */
export function synthModelgate(
  extraContext: Record<string, unknown> = {},
  env?: Environment,
): { app: App; stack: ModelgateStack; template: Template } {
  const { app, stack } = buildModelgateApp({ context: { ...cdkJsonContext(), ...extraContext }, env });
  app.synth();
  return { app, stack, template: Template.fromStack(stack) };
}

/**
 * Runs `synth` with CDK's built-in CloudFormation validation on, as `cdk synth` runs it (the
 * jest run turns it off elsewhere, jest.config.js): a template the validation faults fails the
 * synth with its findings.
 */
export function validated<T>(synth: () => T): T {
  const before = process.env.CDK_VALIDATION;
  process.env.CDK_VALIDATION = 'true';
  try {
    return synth();
  } finally {
    if (before === undefined) delete process.env.CDK_VALIDATION;
    else process.env.CDK_VALIDATION = before;
  }
}

/** A CDK app of one's own carries its own feature flags: cdk.json's, less modelgate's settings. */
export const FEATURE_FLAGS: Readonly<Record<string, unknown>> = Object.fromEntries(
  Object.entries(cdkJsonContext()).filter(([key]) => !key.startsWith('modelgate:')),
);

export interface UserApp {
  app: App;
  stack: Stack;
  gateways: Modelgate[];
  template: Template;
}

/**
 * A user's own app: a stack of theirs (`Platform`) with cdk-nag's AwsSolutions pack registered as
 * `lib/app.ts` registers it (a finding neither fixed nor acknowledged fails the synth), what
 * `before` adds of the user's own, then one instance per props given (`Gateway`, `Gateway2`, ...).
 * Bundling is skipped.
 */
export function synthUserApp(
  instances: readonly ModelgateProps[],
  options: { context?: Record<string, unknown>; env?: Environment; before?: (stack: Stack) => void } = {},
): UserApp {
  const app = new App({ context: { ...(options.context ?? FEATURE_FLAGS), 'aws:cdk:bundling-stacks': [] } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stack = new Stack(app, 'Platform', { env: options.env });
  options.before?.(stack);
  const gateways = instances.map((props, index) => new Modelgate(stack, index === 0 ? 'Gateway' : `Gateway${index + 1}`, props));
  app.synth();
  return { app, stack, gateways, template: Template.fromStack(stack) };
}

/**
 * The template as JSON with every 64-hex digest (asset hashes, S3 keys) replaced by
 * `HASH`: bundles change with every handler edit and embed paths of the checkout.
 */
export function normalizedTemplate(template: Template): unknown {
  return JSON.parse(JSON.stringify(template.toJSON()).replace(/[0-9a-f]{64}/g, 'HASH'));
}

type Resources = Record<string, { Type: string; Properties?: Record<string, any>; DependsOn?: string[] }>;

export function resourcesOfType(template: Template, type: string): Resources {
  return template.findResources(type) as Resources;
}

/** The logical id of the one resource of `type` whose id is `prefix` plus the 8-hex suffix. */
export function logicalIdOf(template: Template, type: string, prefix: string): string {
  const matches = Object.keys(resourcesOfType(template, type)).filter((id) =>
    new RegExp(`^${prefix}[0-9A-F]{8}$`).test(id),
  );
  if (matches.length !== 1) throw new Error(`expected one ${type} named ${prefix}*, found ${matches.join(', ') || 'none'}`);
  return matches[0]!;
}

export function functionLogicalId(template: Template, prefix: string): string {
  return logicalIdOf(template, 'AWS::Lambda::Function', prefix);
}

export interface PolicyStatement {
  readonly Effect: string;
  readonly Action: string[];
  readonly Resource: unknown[];
  readonly Condition?: Record<string, unknown>;
}

/** The logical id of the execution role of the function named `prefix`. */
export function roleLogicalIdOf(template: Template, functionPrefix: string): string {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, functionPrefix)]!;
  const role = fn.Properties?.Role as { 'Fn::GetAtt'?: [string, string] };
  if (!role['Fn::GetAtt']) throw new Error(`${functionPrefix} has no role in this stack`);
  return role['Fn::GetAtt'][0];
}

/**
 * Every statement of every IAM policy attached to the role, inline or separate, with
 * `Action` and `Resource` as arrays.
 */
export function roleStatements(template: Template, roleLogicalId: string): PolicyStatement[] {
  const documents: { Statement: any[] }[] = [];
  const role = resourcesOfType(template, 'AWS::IAM::Role')[roleLogicalId];
  if (!role) throw new Error(`no role ${roleLogicalId}`);
  for (const inline of (role.Properties?.Policies ?? []) as { PolicyDocument: { Statement: any[] } }[]) {
    documents.push(inline.PolicyDocument);
  }
  for (const policy of Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))) {
    const roles = (policy.Properties?.Roles ?? []) as { Ref?: string }[];
    if (roles.some((r) => r.Ref === roleLogicalId)) documents.push(policy.Properties!.PolicyDocument);
  }
  return documents.flatMap((doc) =>
    doc.Statement.map((s) => ({
      Effect: s.Effect,
      Action: ([] as string[]).concat(s.Action),
      Resource: ([] as unknown[]).concat(s.Resource),
      ...(s.Condition ? { Condition: s.Condition } : {}),
    })),
  );
}

/** The statements of the execution role of the function named `functionPrefix`. */
export function functionStatements(template: Template, functionPrefix: string): PolicyStatement[] {
  return roleStatements(template, roleLogicalIdOf(template, functionPrefix));
}

/** The allowed actions of the function's role, flattened. */
export function functionActions(template: Template, functionPrefix: string): string[] {
  return functionStatements(template, functionPrefix)
    .filter((s) => s.Effect === 'Allow')
    .flatMap((s) => s.Action);
}

/** The logical ids of the roles allowed `action` by an IAM policy anywhere in the template. */
export function rolesAllowed(template: Template, action: string): string[] {
  return Object.keys(resourcesOfType(template, 'AWS::IAM::Role'))
    .filter((roleId) =>
      roleStatements(template, roleId).some((s) => s.Effect === 'Allow' && s.Action.some((a) => actionMatches(a, action))),
    )
    .sort();
}

/** IAM wildcard match: `kms:*` and `*` cover `kms:Sign`. */
export function actionMatches(pattern: string, action: string): boolean {
  const regex = new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`, 'i');
  return regex.test(action);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The newest `nodejsNN.x` runtime aws-cdk-lib knows. */
export function newestNodeRuntime(): string {
  const versions = lambda.Runtime.ALL.map((r) => /^nodejs(\d+)\.x$/.exec(r.name)?.[1]).filter((v): v is string => v !== undefined);
  return `nodejs${Math.max(...versions.map(Number))}.x`;
}
