import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * The shared-issuer rule: a policy on an issuer that signs tokens for every customer of a
 * provider (GitHub Actions, GitLab, ...) must pin the subject, or every workflow in the world
 * matches it. Reading `subject` is not pinning it (`subject.size() >= 0`, `subject == subject`,
 * `true || subject == "x"` all read it); a condition pins the subject when one clause of its
 * top-level conjunction (`a && b && ...`) is one of:
 *
 * - `subject == "repo:acme/app:ref:refs/heads/main"` (either side): one subject;
 * - `subject in ["repo:acme/app:...", "repo:acme/web:..."]`: a list of literal subjects;
 * - `subject.startsWith("repo:acme/")`: a prefix that names an owner, that is, a literal with a
 *   non-empty segment after its first `:` that ends at a `/` or `:` (`repo:acme/`,
 *   `project_path:acme/`, `organization:acme:`), so `repo:` or `repo:acme` (which `acme-evil`
 *   also starts with) do not pin.
 *
 * The caller also evaluates the condition for a random subject: a pinning condition is never
 * true for it.
 */

/** An accepted form, shown in the refusal. */
export const SUBJECT_PINNING_EXAMPLE = 'subject.startsWith("repo:acme/") or subject == "repo:acme/app:ref:refs/heads/main"';

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
