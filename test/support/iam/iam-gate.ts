import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDenialReasons, runSimulation, type RunSimulationResults } from '@cloud-copilot/iam-simulate';
import type { Authorization } from './dynamodb-authorizations';
import { resolveStackPolicies, type BoundResource, type FunctionPrincipal, type PolicyDocument, type StackPolicies, type StackResource } from './stack-policies';
import type { SynthesizedStack } from './stack-template';

/** Where the suites of one jest run leave what their gates saw (jest.config.js, `globalSetup`). */
export const SEEN_DIR_ENV = 'MODELGATE_IAM_SEEN_DIR';

/** A request IAM refused, and why, in the words AWS uses. */
export interface Denial {
  /** The function's construct id (its access key id). */
  readonly fn: string;
  readonly action: string;
  readonly resource: string;
  readonly message: string;
}

/** What the functions were seen to do: construct id → action → resources (allowed and denied). */
export type SeenActions = Record<string, Record<string, { allowed: number; denied: number; resources: string[] }>>;

/**
 * A request as a stand-in hands it to its `authorize` hook (test/support/kms-stand-in.ts,
 * test/support/secrets-manager-stand-in.ts): the action, the SigV4 access key id, the ARN of
 * the resource it names, and the resource's own policy (a KMS key policy) and tags when the
 * stand-in keeps them.
 */
export interface StandInAuthorizationRequest {
  readonly action: string;
  readonly accessKeyId: string;
  readonly resource: string | undefined;
  readonly resourcePolicy?: string;
  readonly resourceTags?: Readonly<Record<string, string>>;
}

/** `true` to serve the request, or the AccessDeniedException message to answer it with. */
export type StandInAuthorizer = (request: StandInAuthorizationRequest) => Promise<true | string>;

interface Evaluated {
  readonly allowed: boolean;
  readonly message: string;
  /** The evaluator could not run: a gate or policy problem, never an answer AWS would give. */
  readonly error?: boolean;
}

/**
 * The IAM decision for every AWS request a function of the stack makes in the test suites:
 * each request is evaluated as IAM would, with `@cloud-copilot/iam-simulate`, against the
 * policies of the function's role and the resource's policy, from the synthesized template
 * (stack-policies.ts). The function is known by the access key id its clients present
 * (local/function-principals.ts); any other access key id (the operator's, test set-up's) is
 * not a function of the stack and is not gated.
 *
 * Decisions are cached by principal, action, resource, resource policy and the values of the
 * condition keys a statement that could apply names, so a repeated request costs a lookup.
 * Every decision is recorded: which actions each function used, and every denial.
 */
export class IamGate {
  private policies: StackPolicies;
  private readonly bound: BoundResource[] = [];
  private readonly decisions = new Map<string, Promise<Evaluated>>();
  private readonly relevantKeys = new Map<string, Set<string> | null>();
  private readonly seen: SeenActions = {};
  readonly denials: Denial[] = [];
  /** Requests the evaluator could not evaluate (a policy it refuses, a context key it ignores). */
  readonly errors: string[] = [];

  constructor(private readonly stack: SynthesizedStack) {
    this.policies = resolveStackPolicies(stack);
  }

  get account(): string {
    return this.policies.account;
  }

  get region(): string {
    return this.policies.region;
  }

  /** The function whose clients present this access key id, or undefined: not gated. */
  principal(accessKeyId: string): FunctionPrincipal | undefined {
    return Object.hasOwn(this.policies.functions, accessKeyId) ? this.policies.functions[accessKeyId] : undefined;
  }

  /** The stack's KMS keys and secrets, with their resolved policies and tags. */
  get resources(): readonly StackResource[] {
    return this.policies.resources;
  }

  /**
   * Makes a stand-in resource the template's resource `logicalId` (the KMS stand-in's key for
   * the stack's signing key): the template's references to it resolve to the stand-in's ARN,
   * in the stack's account and region, and requests on it are evaluated with the template's
   * policy and tags for it.
   */
  bind(logicalId: string, standIn: { ref: string; arn: string }): void {
    this.bound.push({ logicalId, ref: standIn.ref, arn: this.inStackAccount(standIn.arn) });
    this.policies = resolveStackPolicies(this.stack, this.bound);
    this.decisions.clear();
    this.relevantKeys.clear();
  }

  /**
   * Evaluates every authorization of one request from `accessKeyId`; the first denial is the
   * request's (a batch is refused whole). Undefined when the request may proceed.
   */
  async authorize(
    accessKeyId: string,
    authorizations: readonly Authorization[],
    resource: { policy?: PolicyDocument; tags?: Readonly<Record<string, string>> } = {},
  ): Promise<string | undefined> {
    const principal = this.principal(accessKeyId);
    if (!principal) return undefined;
    for (const authorization of authorizations) {
      const context: Record<string, string | string[]> = {
        ...authorization.context,
        'aws:PrincipalArn': principal.roleArn,
        ...Object.fromEntries(Object.entries(resource.tags ?? {}).map(([key, value]) => [`aws:ResourceTag/${key}`, value])),
      };
      const evaluated = await this.decide(principal, authorization.action, authorization.resource, context, resource.policy);
      this.record(principal, authorization, evaluated);
      if (!evaluated.allowed) return evaluated.message;
    }
    return undefined;
  }

  /**
   * The hook a stand-in calls before it serves a request. The resource is taken in the stack's
   * account and region whatever the stand-in's; a resource of the template (bound with
   * {@link bind}) is evaluated with the template's policy and tags, any other with its own.
   */
  standInAuthorizer(): StandInAuthorizer {
    return async (request) => {
      const resource = request.resource === undefined ? '*' : this.inStackAccount(request.resource);
      const ofStack = this.policies.resources.find((candidate) => candidate.arn === resource);
      const policy = ofStack
        ? ofStack.policy
        : request.resourcePolicy === undefined
          ? undefined
          : (JSON.parse(this.inStackAccount(request.resourcePolicy, request.resource)) as PolicyDocument);
      const denied = await this.authorize(request.accessKeyId, [{ action: request.action, resource, context: {} }], {
        policy,
        tags: ofStack ? ofStack.tags : request.resourceTags,
      });
      return denied ?? true;
    };
  }

  /** What each function was seen to do, so far. */
  seenActions(): SeenActions {
    return structuredClone(this.seen);
  }

  /** Leaves what this gate saw for the run's summary (test/support/iam/jest-global-teardown.ts). */
  writeSeen(suite: string | undefined): void {
    const dir = process.env[SEEN_DIR_ENV];
    if (!dir || Object.keys(this.seen).length === 0) return;
    writeFileSync(join(dir, `${process.pid}-${randomUUID()}.json`), JSON.stringify({ suite, seen: this.seen, denials: this.denials }));
  }

  /**
   * An ARN (or a policy naming ARNs) of a stand-in, in the stack's account and region: the
   * KMS stand-in keeps keys in an account and region of its own.
   */
  private inStackAccount(text: string, arn: string = text): string {
    const [, , , region, account] = arn.split(':');
    if (!account || !/^\d{12}$/.test(account)) return text;
    let result = text.split(`:${account}:`).join(`:${this.policies.account}:`);
    if (region && arn === text) result = result.replace(`:${region}:`, `:${this.policies.region}:`);
    return result;
  }

  private decide(
    principal: FunctionPrincipal,
    action: string,
    resource: string,
    context: Record<string, string | string[]>,
    resourcePolicy: PolicyDocument | undefined,
  ): Promise<Evaluated> {
    const policyKey = resourcePolicy ? JSON.stringify(resourcePolicy) : '';
    const base = `${principal.accessKeyId}\n${action}\n${resource}\n${policyKey}`;
    let relevant = this.relevantKeys.get(base);
    if (relevant === undefined) {
      relevant = conditionKeysThatCouldApply([...principal.policies.map((policy) => policy.document), ...(resourcePolicy ? [resourcePolicy] : [])], action, resource);
      this.relevantKeys.set(base, relevant);
    }
    const decisive = Object.entries(context)
      .filter(([key]) => relevant === null || relevant.has(key.toLowerCase()))
      .sort(([a], [b]) => a.localeCompare(b));
    const key = `${base}\n${JSON.stringify(decisive)}`;
    let decision = this.decisions.get(key);
    if (!decision) {
      decision = this.simulate(principal, action, resource, context, resourcePolicy);
      this.decisions.set(key, decision);
    }
    return decision;
  }

  private async simulate(
    principal: FunctionPrincipal,
    action: string,
    resource: string,
    context: Record<string, string | string[]>,
    resourcePolicy: PolicyDocument | undefined,
  ): Promise<Evaluated> {
    const results: RunSimulationResults = await runSimulation(
      {
        request: {
          principal: principal.sessionArn,
          action,
          // An ARN without an account (a Bedrock foundation model) is AWS's own: decided by the identity's policies alone.
          resource: { resource, accountId: resource === '*' ? this.policies.account : resource.split(':')[4] || this.policies.account },
          contextVariables: context,
        },
        identityPolicies: principal.policies.map(({ name, document }) => ({ name, policy: document })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
      },
      {},
    );
    const who = `User: ${principal.sessionArn} is not authorized to perform: ${action} on resource: ${resource}`;
    if (results.resultType === 'error') {
      return { allowed: false, error: true, message: `${who}: the IAM gate could not evaluate the request: ${results.errors.message} ${JSON.stringify(results.errors)}` };
    }
    const single = results.resultType === 'single' ? results.result : results.results[0];
    // A context key the evaluator drops would make a condition on it vacuous: never let it pass silently.
    const ignored = single?.ignoredContextKeys ?? [];
    if (ignored.length > 0) {
      return { allowed: false, error: true, message: `${who}: the IAM evaluator ignores the context keys ${ignored.join(', ')} for this action` };
    }
    if (results.overallResult === 'Allowed') return { allowed: true, message: '' };
    const reasons = single ? getDenialReasons(single.analysis) : [];
    const explicit = reasons.find((reason) => reason.denialType === 'Explicit');
    const policyKind = (type: string | undefined) => (type === 'resource' ? 'a resource-based policy' : 'an identity-based policy');
    if (explicit) return { allowed: false, message: `${who} with an explicit deny in ${policyKind(explicit.policyType)}` };
    const implicit = reasons[0];
    return { allowed: false, message: `${who} because no ${implicit?.policyType === 'resource' ? 'resource-based' : 'identity-based'} policy allows the ${action} action` };
  }

  private record(principal: FunctionPrincipal, authorization: Authorization, evaluated: Evaluated): void {
    const actions = (this.seen[principal.accessKeyId] ??= {});
    const entry = (actions[authorization.action] ??= { allowed: 0, denied: 0, resources: [] });
    if (evaluated.allowed) entry.allowed += 1;
    else entry.denied += 1;
    if (!entry.resources.includes(authorization.resource)) entry.resources.push(authorization.resource);
    if (evaluated.error) this.errors.push(evaluated.message);
    else if (!evaluated.allowed) this.denials.push({ fn: principal.accessKeyId, action: authorization.action, resource: authorization.resource, message: evaluated.message });
  }
}

/**
 * The condition keys (lower case) named by the statements that could apply to `action` on
 * `resource`: only their values can change the decision, so only they key the cache. Null when
 * a condition value holds a policy variable, which can bring in any key.
 */
function conditionKeysThatCouldApply(documents: readonly PolicyDocument[], action: string, resource: string): Set<string> | null {
  const keys = new Set<string>();
  for (const statement of documents.flatMap((document) => document.Statement)) {
    const actionMatches = statement.NotAction !== undefined || list(statement.Action).some((pattern) => wildcardMatch(pattern, action, true));
    const resourceMatches = statement.NotResource !== undefined || statement.Resource === undefined || resource === '*' || list(statement.Resource).some((pattern) => wildcardMatch(pattern, resource, false));
    if (!actionMatches || !resourceMatches) continue;
    for (const [operator, conditions] of Object.entries(statement.Condition ?? {})) {
      for (const [key, value] of Object.entries(conditions)) {
        if (JSON.stringify(value).includes('${') || operator.includes('${')) return null;
        keys.add(key.toLowerCase());
      }
    }
  }
  return keys;
}

function list(value: string | readonly string[] | undefined): readonly string[] {
  return value === undefined ? [] : typeof value === 'string' ? [value] : value;
}

/** IAM's `*` and `?` wildcards; actions compare case-insensitively, resources exactly. */
function wildcardMatch(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
}
