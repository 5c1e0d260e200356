import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * The shared-issuer rule (docs/workload-identity.md, "The admin API", shared issuers): a policy
 * on an issuer that signs tokens for every customer of a provider (GitHub Actions, GitLab, ...)
 * must pin the subject, or every workflow in the world matches it. Reading `subject` is not
 * pinning it (`subject.size() >= 0`, `true || subject == "x"`); one clause of the condition's
 * top-level conjunction (`a && b && ...`) must be `subject == "<literal>"` (either side),
 * `subject in [<literals>]`, or `subject.startsWith("<literal>")` where the literal names an
 * owner: a non-empty segment after its first `:`, ending at a `/` or `:` (`repo:acme/`,
 * `organization:acme:`), so `repo:` or `repo:acme` (which `acme-evil` also starts with) do not
 * pin. The caller also evaluates the condition for a random subject: a pinning condition is
 * never true for it.
 */

/** An accepted form, shown in the refusal. */
export const SUBJECT_PINNING_EXAMPLE = 'subject.startsWith("repo:acme/") or subject == "repo:acme/app:ref:refs/heads/main"';

/** Whether one clause of the condition's top-level conjunction pins `subject` (the forms above). */
export function pinsSubject(root: ASTNode): boolean {
  return conjuncts(root).some(isPinningClause);
}

function conjuncts(node: ASTNode): ASTNode[] {
  if (node.op !== '&&') return [node];
  return (node.args as ASTNode[]).flatMap(conjuncts);
}

function isPinningClause(node: ASTNode): boolean {
  switch (node.op) {
    case '==': {
      const [left, right] = node.args as [ASTNode, ASTNode];
      return (isSubject(left) && stringLiteral(right) !== undefined) || (isSubject(right) && stringLiteral(left) !== undefined);
    }
    case 'in': {
      const [item, list] = node.args as [ASTNode, ASTNode];
      if (!isSubject(item) || list.op !== 'list') return false;
      const items = list.args as ASTNode[];
      return items.length > 0 && items.every((entry) => stringLiteral(entry) !== undefined);
    }
    case 'rcall': {
      const [name, receiver, args] = node.args as [string, ASTNode, ASTNode[]];
      if (name !== 'startsWith' || !isSubject(receiver) || args.length !== 1) return false;
      const prefix = stringLiteral(args[0]!);
      return prefix !== undefined && namesAnOwner(prefix);
    }
    default:
      return false;
  }
}

/** `repo:acme/`, `organization:acme:`: a non-empty segment after the first colon, closed by `/` or `:`. */
export function namesAnOwner(prefix: string): boolean {
  return /^[^:]*:[^:/]+(?:[:/].*)?[:/]$/su.test(prefix);
}

function isSubject(node: ASTNode): boolean {
  return node.op === 'id' && node.args === 'subject';
}

function stringLiteral(node: ASTNode): string | undefined {
  return node.op === 'value' && typeof node.args === 'string' ? node.args : undefined;
}
