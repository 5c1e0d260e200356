import type { ASTNode } from '@marcbachmann/cel-js';

/**
 * Map literals with every key. The engine builds a map literal as a plain object and skips the
 * keys `__proto__`, `constructor` and `prototype` (so that none can reach `Object.prototype`):
 * `{'__proto__': 1}.size()` is 0. An object without a prototype would hold them, but the engine
 * tells a value's type by its `constructor` property, which such a key then overrides. A `Map`
 * holds any key apart from its properties, and the engine reads it as one of its own maps
 * (size, `in`, index, field, equality, comprehensions), so a map with string keys is built as
 * one. A key of another type is named by its text in an object, as the engine does: no such
 * text is one it skips, and `{1: 'a'}[1]` finds `'1'` as before.
 */

interface EngineEvaluator {
  run(node: ASTNode, context: unknown): unknown;
}

/** The entries evaluated in order, key then value, as the engine does. No function of a condition is async. */
function evaluateMapLiteral(evaluator: EngineEvaluator, node: ASTNode, context: unknown): Map<string, unknown> | Record<string, unknown> {
  const entries = node.args as [ASTNode, ASTNode][];
  let map: Map<string, unknown> | undefined;
  let object: Record<string, unknown> | undefined;
  for (const [keyNode, valueNode] of entries) {
    const key = evaluator.run(keyNode, context);
    const value = evaluator.run(valueNode, context);
    // The type checker holds a literal's keys to one type.
    if (typeof key === 'string') (map ??= new Map()).set(key, value);
    else (object ??= {})[key as string] = value;
  }
  return map ?? object ?? {};
}

/** Makes a checked, not yet evaluated, non-empty map literal node build its map with every key. */
export function buildWithEveryKey(node: ASTNode): void {
  const engineNode = node as ASTNode & { setMeta?: (key: string, value: unknown) => unknown };
  if (node.op !== 'map' || (node.args as unknown[]).length === 0) return;
  if (typeof engineNode.setMeta !== 'function') throw new Error('the CEL engine changed how a node evaluates: map literals cannot be built with every key');
  engineNode.setMeta('evaluate', evaluateMapLiteral);
}
