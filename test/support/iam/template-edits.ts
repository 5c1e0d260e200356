import { policiesOfRole, roleOfFunction, type PolicyStatement } from './stack-policies';
import type { SynthesizedStack } from './stack-template';

/**
 * The stack with every statement `remove` selects taken out of the policies of a function's
 * role, as if the stack had never granted it: what the suites show the gate refuses then.
 * Throws when no statement was selected, so a renamed grant cannot make a test vacuous.
 */
export function withoutRoleStatements(stack: SynthesizedStack, constructId: string, remove: (statement: PolicyStatement) => boolean): SynthesizedStack {
  const edited = structuredClone(stack);
  let removed = 0;
  for (const document of roleDocuments(edited, constructId)) {
    const kept = document.Statement.filter((statement) => !remove(statement));
    removed += document.Statement.length - kept.length;
    document.Statement = kept;
  }
  if (removed === 0) throw new Error(`no statement of ${constructId}'s role policies was selected`);
  return edited;
}

/** The stack with `statement` added to the first policy of a function's role. */
export function withRoleStatement(stack: SynthesizedStack, constructId: string, statement: PolicyStatement): SynthesizedStack {
  const edited = structuredClone(stack);
  const [document] = roleDocuments(edited, constructId);
  if (!document) throw new Error(`${constructId}'s role has no policy`);
  document.Statement.push(statement);
  return edited;
}

/** The policy documents of a function's role, as they sit in the template: its own inline policies, then the policies naming it. */
function roleDocuments(stack: SynthesizedStack, constructId: string): { Statement: PolicyStatement[] }[] {
  const roleId = roleOfFunction(stack, constructId);
  const inline = ((stack.template.Resources[roleId]!.Properties?.Policies ?? []) as { PolicyDocument: { Statement: PolicyStatement[] } }[]).map((policy) => policy.PolicyDocument);
  const attached = policiesOfRole(stack, roleId).map((policyId) => stack.template.Resources[policyId]!.Properties!.PolicyDocument as { Statement: PolicyStatement[] });
  return [...inline, ...attached];
}

/** The actions of a statement, as a list. */
export function actionsOf(statement: PolicyStatement): readonly string[] {
  return statement.Action === undefined ? [] : typeof statement.Action === 'string' ? [statement.Action] : statement.Action;
}
