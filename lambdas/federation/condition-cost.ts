import type { ASTNode } from '@marcbachmann/cel-js';
import { CALL_CHARGES, callMayFail } from './condition-functions';
import { CONDITION_BUDGET, CONDITION_ERROR_WORK, CONDITION_STEP_WORK } from './limits';
import {
  ConditionCostError,
  NUMBER_TEXT_LENGTH,
  SCALAR,
  built,
  comparisonWork,
  join,
  joinAll,
  literalShape,
  sizeOf,
  unsupported,
  variableShapes,
  weight,
  type Shape,
} from './condition-shapes';

export { ConditionCostError, type Shape };

/**
 * The save-time half of the condition budget (docs/reference.md#conditions; docs/workload-identity.md,
 * "Conditions"): an upper bound on one evaluation's cost, from the syntax tree and the largest
 * variables an exchange admits (`CONDITION_INPUT_BOUNDS`); past {@link CONDITION_BUDGET}, saving fails.
 *
 * The bound counts in the run-time meter's units (`condition-meter.ts`): a step per node; each
 * value's characters and elements, and more per list or map in it, since its consumer may read
 * all of it; each pair of lists or maps a comparison can meet; each call's charge
 * (condition-functions.ts) at the largest values it can meet; an error per node that can fail (a
 * conversion, an index, `substring`, integer arithmetic); the bytes built. It is sound only if
 * never below the meter on any input: a test holds the two against each other.
 */

/** What an evaluation costs, in the budget's two measures. */
export interface Cost {
  /** Steps and characters read, in the meter's work units. */
  work: number;
  /** Bytes of strings and lists built. */
  bytes: number;
}

/** A condition's worst-case cost, and the shape of what it yields. */
export interface ConditionCost extends Cost {
  /** What the expression yields in the worst case (always a scalar for a valid condition). */
  shape: Shape;
}

/**
 * How much longer a case change can make a string: the engine changes the case of every
 * character, not of ASCII letters only, and `ﬃ` is `FFI` in upper case, `İ` two characters in
 * lower case.
 */
const CASE_GROWTH = { upperAscii: 3, lowerAscii: 2 } as const;
/** Steps a comprehension adds per element over its body (the loop, its accumulator, the test). */
const ITERATION_STEPS = 4;

/**
 * The worst-case cost of one evaluation. Throws a {@link ConditionCostError} for a construct
 * the estimator does not know (so cannot bound) and when the bound exceeds the budget.
 */
export function estimateConditionCost(root: ASTNode): ConditionCost {
  const estimate = estimate_(root, variableShapes());
  const { maxWork, maxBytes } = CONDITION_BUDGET;
  // Written so that NaN, were an estimate ever to produce it, is over the budget too.
  if (!(estimate.work <= maxWork && estimate.bytes <= maxBytes)) {
    const over = !(estimate.work <= maxWork) ? `${describe(estimate.work)} work units (the limit is ${describe(maxWork)})` : `${describe(estimate.bytes)} bytes (the limit is ${describe(maxBytes)})`;
    throw new ConditionCostError(
      `the condition is too expensive: for the largest token an exchange admits it could take ${over}; ` +
        'avoid chained map() stages, building long strings, and searching, converting or indexing (which can fail) inside a comprehension',
    );
  }
  return estimate;
}

function describe(value: number): string {
  return Number.isFinite(value) && value < 1e15 ? Math.ceil(value).toLocaleString('en-US') : 'more than 10^15';
}

type Scope = Record<string, Shape>;

interface Estimate extends Cost {
  shape: Shape;
}

const add = (...costs: Cost[]): Cost => ({ work: costs.reduce((sum, c) => sum + c.work, 0), bytes: costs.reduce((sum, c) => sum + c.bytes, 0) });

/** One evaluated node yielding `shape`, after its children's costs: the meter's step and weight. */
function yielded(shape: Shape, children: Cost[], extra: Partial<Cost> = {}): Estimate {
  const total = add(...children, { work: CONDITION_STEP_WORK + weight(shape) + (extra.work ?? 0), bytes: extra.bytes ?? 0 });
  return { ...total, shape };
}

function estimate_(node: ASTNode, scope: Scope): Estimate {
  switch (node.op) {
    case 'value':
      return yielded(literalShape(node.args), []);
    case 'id': {
      const shape = scope[node.args as string];
      if (!shape) throw new ConditionCostError(`unknown variable ${String(node.args)}`);
      return yielded(shape, []);
    }
    case 'list': {
      const items = (node.args as ASTNode[]).map((item) => estimate_(item, scope));
      const shape: Shape = { kind: 'list', count: items.length, element: joinAll(items.map((i) => i.shape)) };
      return yielded(shape, items, { bytes: built(shape) });
    }
    case 'map':
      return mapLiteral(node, scope);
    case '.': {
      const [object] = node.args as [ASTNode, string];
      const target = estimate_(object, scope);
      if (target.shape.kind !== 'map') throw new ConditionCostError('field access is only available on maps');
      // No such key: an error.
      return yielded(target.shape.value, [target], { work: CONDITION_ERROR_WORK });
    }
    case '[]': {
      const [object, index] = node.args as [ASTNode, ASTNode];
      const target = estimate_(object, scope);
      const key = estimate_(index, scope);
      const shape = target.shape.kind === 'list' ? target.shape.element : target.shape.kind === 'map' ? target.shape.value : unsupported('indexing');
      // An index out of range or no such key: an error.
      return yielded(shape, [target, key], { work: CONDITION_ERROR_WORK });
    }
    case '?:': {
      const [test, then, otherwise] = (node.args as ASTNode[]).map((n) => estimate_(n, scope));
      const worse = { work: Math.max(then!.work, otherwise!.work), bytes: Math.max(then!.bytes, otherwise!.bytes) };
      return yielded(join(then!.shape, otherwise!.shape), [test!, worse]);
    }
    case '&&':
    case '||':
      return yielded(SCALAR, (node.args as ASTNode[]).map((n) => estimate_(n, scope)));
    case '!_':
      return yielded(SCALAR, [estimate_(node.args as ASTNode, scope)]);
    case '-_':
      // Integer overflow: an error.
      return yielded(SCALAR, [estimate_(node.args as ASTNode, scope)], { work: CONDITION_ERROR_WORK });
    case '+':
      return concatenation(node, scope);
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
    case 'in':
    case '-':
    case '*':
    case '/':
    case '%': {
      const operands = (node.args as ASTNode[]).map((n) => estimate_(n, scope));
      // Comparing reads both operands, at most once per element pair for `in`.
      const reads = node.op === 'in' ? membershipReads(operands[0]!.shape, operands[1]!.shape) : 0;
      const compares = node.op === '==' || node.op === '!=' || node.op === 'in' ? comparisonWork(node.op, operands[0]!.shape, operands[1]!.shape) : 0;
      // Arithmetic can overflow or divide by zero: an error.
      const fails = ARITHMETIC.has(node.op) ? CONDITION_ERROR_WORK : 0;
      return yielded(SCALAR, operands, { work: reads + compares + fails });
    }
    case 'call':
      return globalCall(node, scope);
    case 'rcall':
      return methodCall(node, scope);
    default:
      return unsupported(`the ${JSON.stringify(node.op)} operator`);
  }
}

const ARITHMETIC: ReadonlySet<string> = new Set(['-', '*', '/', '%']);

function mapLiteral(node: ASTNode, scope: Scope): Estimate {
  const entries = (node.args as [ASTNode, ASTNode][]).map(([k, v]) => [estimate_(k, scope), estimate_(v, scope)] as const);
  // The engine would name a list key by its text, read at every use.
  if (entries.some(([k]) => k.shape.kind === 'list' || k.shape.kind === 'map')) return unsupported('a list or map as a map key');
  const shape: Shape = {
    kind: 'map',
    count: entries.length,
    key: joinAll(entries.map(([k]) => k.shape)),
    value: joinAll(entries.map(([, v]) => v.shape)),
  };
  return yielded(shape, entries.flat(), { bytes: built(shape) });
}

function concatenation(node: ASTNode, scope: Scope): Estimate {
  const [left, right] = (node.args as ASTNode[]).map((n) => estimate_(n, scope)) as [Estimate, Estimate];
  const [a, b] = [left.shape, right.shape];
  if (a.kind === 'string' && b.kind === 'string') {
    const shape: Shape = { kind: 'string', length: a.length + b.length };
    return yielded(shape, [left, right], { bytes: built(shape) });
  }
  if (a.kind === 'list' && b.kind === 'list') {
    const shape: Shape = { kind: 'list', count: a.count + b.count, element: join(a.element, b.element) };
    if (a.characters !== undefined && b.characters !== undefined) shape.characters = a.characters + b.characters;
    return yielded(shape, [left, right], { bytes: built(shape) });
  }
  // Numbers: integer overflow is an error.
  return yielded(SCALAR, [left, right], { work: CONDITION_ERROR_WORK });
}

/** `x in list` compares x with every element; `x in map` hashes x. */
function membershipReads(item: Shape, collection: Shape): number {
  if (collection.kind === 'list') return collection.count * (weight(item) + weight(collection.element));
  return weight(item);
}

const CONVERSIONS: ReadonlySet<string> = new Set(['int', 'uint', 'double', 'bool', 'string']);

/** A call's charge for the largest values it can meet, and an error when it can fail. */
function callWork(name: string, self: Shape, args: readonly Shape[]): number {
  const chargeOf = Object.hasOwn(CALL_CHARGES, name) ? CALL_CHARGES[name]! : unsupported(`${name}()`);
  return chargeOf(sizeOf(self), args.map(sizeOf)) + (callMayFail(name, args.length) ? CONDITION_ERROR_WORK : 0);
}

function globalCall(node: ASTNode, scope: Scope): Estimate {
  const [name, argNodes] = node.args as [string, ASTNode[]];
  const args = argNodes.map((n) => estimate_(n, scope));
  if (args.length !== 1 || !(name === 'size' || CONVERSIONS.has(name))) return unsupported(`${name}()`);
  const from = args[0]!.shape;
  const work = callWork(name, from, []);
  if (name !== 'string') return yielded(SCALAR, args, { work });
  const shape: Shape = from.kind === 'string' ? from : { kind: 'string', length: NUMBER_TEXT_LENGTH };
  return yielded(shape, args, { work, bytes: built(shape) });
}

const COMPREHENSIONS: ReadonlySet<string> = new Set(['all', 'exists', 'exists_one', 'filter', 'map']);

function methodCall(node: ASTNode, scope: Scope): Estimate {
  const [name, receiverNode, argNodes] = node.args as [string, ASTNode, ASTNode[]];
  if (COMPREHENSIONS.has(name) && argNodes[0]?.op === 'id') return comprehension(name, receiverNode, argNodes, scope);
  const receiver = estimate_(receiverNode, scope);
  const args = argNodes.map((n) => estimate_(n, scope));
  const self = receiver.shape;
  const children = [receiver, ...args];
  const work = callWork(name, self, args.map((a) => a.shape));
  if (name === 'size' && args.length === 0) return yielded(SCALAR, children, { work });
  if (self.kind === 'string') {
    switch (name) {
      case 'contains':
      case 'startsWith':
      case 'endsWith':
      case 'indexOf':
      case 'lastIndexOf':
        return yielded(SCALAR, children, { work });
      case 'lowerAscii':
      case 'upperAscii': {
        const shape: Shape = { kind: 'string', length: self.length * CASE_GROWTH[name] };
        return yielded(shape, children, { work, bytes: built(shape) });
      }
      case 'trim':
      case 'substring':
        return yielded(self, children, { work, bytes: built(self) });
      case 'split': {
        // At most one piece per character and one more, whatever the separator; each a string built.
        const pieces = self.length + 1;
        const shape: Shape = { kind: 'list', count: pieces, element: self, characters: self.length };
        return yielded(shape, children, { work, bytes: built(shape) + 2 * self.length + 16 * pieces });
      }
    }
  }
  if (self.kind === 'list' && name === 'join' && self.element.kind === 'string') {
    const separator = args[0]?.shape.kind === 'string' ? args[0].shape.length : 0;
    const characters = Math.min(self.characters ?? Infinity, self.count * self.element.length);
    const shape: Shape = { kind: 'string', length: characters + Math.max(self.count - 1, 0) * separator };
    return yielded(shape, children, { work, bytes: built(shape) });
  }
  return unsupported(`${name}()`);
}

/**
 * A loop costs its body once per element. Over a list of strings whose total length is capped
 * (`audience`: 4,096 values of up to 512 characters, but 12,288 characters in all), the body is
 * estimated for an empty and for a longest element: a body's cost grows with the element's
 * length as sums, products and maxima do (never as a minimum: no comprehension nests), so the
 * worst case puts as many longest elements as the cap allows and leaves the rest empty.
 */
function comprehension(name: string, receiverNode: ASTNode, argNodes: ASTNode[], scope: Scope): Estimate {
  const receiver = estimate_(receiverNode, scope);
  const source = receiver.shape;
  if (source.kind !== 'list' && source.kind !== 'map') return unsupported(`${name}() over a ${source.kind}`);
  const element = source.kind === 'list' ? source.element : source.key;
  const variable = argNodes[0]!.args as string;
  const bodyFor = (shape: Shape) => {
    const body = argNodes.slice(1).map((n) => estimate_(n, { ...scope, [variable]: shape }));
    const cost = add(...body, { work: ITERATION_STEPS * CONDITION_STEP_WORK + weight(shape), bytes: 8 });
    return { cost, yields: body[body.length - 1]!.shape };
  };
  const longest = bodyFor(element);
  const count = source.count;
  // How many elements can be longest, and what the others cost at their least.
  let longCount = count;
  let shortest = longest;
  if (source.kind === 'list' && source.characters !== undefined && element.kind === 'string' && element.length > 0) {
    longCount = Math.min(count, Math.ceil(source.characters / element.length));
    shortest = bodyFor({ kind: 'string', length: 0 });
  }
  const over = (pick: (c: Cost) => number) => count * pick(shortest.cost) + longCount * (pick(longest.cost) - pick(shortest.cost));
  const loops: Cost = { work: over((c) => c.work), bytes: over((c) => c.bytes) };
  let shape: Shape = SCALAR;
  if (name === 'filter') shape = source.kind === 'list' ? source : { kind: 'list', count, element };
  if (name === 'map') {
    const yields = longest.yields;
    shape = { kind: 'list', count, element: yields };
    if (yields.kind === 'string' && shortest.yields.kind === 'string') {
      shape.characters = count * shortest.yields.length + longCount * (yields.length - shortest.yields.length);
    }
  }
  return yielded(shape, [receiver, loops], { bytes: shape === SCALAR ? 0 : built(shape) });
}
