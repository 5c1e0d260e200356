import type { Environment } from '@marcbachmann/cel-js';
import { CONDITION_BUDGET, CONDITION_STEP_WORK } from './limits';

/**
 * The run-time half of the condition budget: every node the CEL engine evaluates passes through
 * its evaluator's `run`, which this module meters. Each node costs {@link CONDITION_STEP_WORK}
 * plus the characters and elements of the value it yields (whatever consumes the value may read
 * all of it); strings and lists a node builds count their bytes. Past either limit of
 * {@link CONDITION_BUDGET} every further node throws, so even an engine construct that catches
 * errors (`||`, `exists`) cannot go on, and the evaluation is refused however it ends.
 *
 * The engine (`@marcbachmann/cel-js`, pinned) evaluates a parsed expression as
 * `ast.evaluate(evaluator, ast, context)` and each node evaluates its operands with
 * `evaluator.run(node, context)` or `evaluator.tryEval`, which calls `run`: the meter replaces
 * `run` on the one evaluator of the environment. A test proves that it still sees every node.
 */

export class ConditionBudgetExceeded extends Error {
  constructor(readonly usage: ConditionUsage) {
    super(`the condition exceeded its evaluation budget (${CONDITION_BUDGET.maxWork.toLocaleString('en-US')} work units, ${CONDITION_BUDGET.maxBytes.toLocaleString('en-US')} bytes)`);
    this.name = 'ConditionBudgetExceeded';
  }
}

export interface ConditionUsage {
  work: number;
  bytes: number;
}

const MAX_WORK = CONDITION_BUDGET.maxWork;
const MAX_BYTES = CONDITION_BUDGET.maxBytes;

/**
 * The meter of the evaluation under way. Module state, not an object, because it is charged
 * for every node evaluated: this is the engine's innermost loop.
 */
let active = false;
let exceeded = false;
let work = 0;
let bytes = 0;

/** Operators that build what they yield (the others hand on a value that exists already). */
function builds(op: string): boolean {
  return op === 'rcall' || op === 'call' || op === '+' || op === 'list' || op === 'map';
}

/**
 * Operators that hand on an operand's list (a loop's accumulator, `?:` in a loop's step): the
 * list a loop builds grows one slot at a time, and its whole weight is charged once, when the
 * loop yields it.
 */
function handsOnAccumulator(op: string): boolean {
  return op === 'accuPush' || op === 'accuValue' || op === '?:' || op === '&&' || op === '||';
}

/** One node evaluated: its step, what it yields, what it built. */
function charge(op: string, value: unknown): void {
  if (typeof value === 'string') {
    work += CONDITION_STEP_WORK + 1 + value.length;
    if (builds(op)) bytes += 2 * value.length;
  } else if (typeof value === 'object' && value !== null) {
    if (handsOnAccumulator(op)) {
      work += CONDITION_STEP_WORK + 1;
      if (op === 'accuPush') bytes += 8;
    } else {
      work += CONDITION_STEP_WORK + weightOf(value);
      if (builds(op)) bytes += bytesOf(value);
    }
  } else {
    work += CONDITION_STEP_WORK + 1;
  }
  if (work > MAX_WORK || bytes > MAX_BYTES) exceeded = true;
}

const weights = new WeakMap<object, { length: number; weight: number }>();

/** Characters and elements of a value: what reading all of it costs. */
function weightOf(value: unknown): number {
  if (typeof value === 'string') return 1 + value.length;
  if (Array.isArray(value)) {
    const known = weights.get(value);
    if (known && known.length === value.length) return known.weight;
    let weight = 1;
    for (const item of value) weight += weightOf(item);
    weights.set(value, { length: value.length, weight });
    return weight;
  }
  if (isMap(value)) {
    let weight = 1;
    for (const [key, item] of Object.entries(value)) weight += weightOf(key) + weightOf(item);
    return weight;
  }
  return 1;
}

/** The engine builds CEL maps as plain objects. */
function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

function bytesOf(value: unknown): number {
  if (Array.isArray(value)) return 8 * value.length;
  if (isMap(value)) return 16 * Object.keys(value).length;
  return 0;
}

const usage = (): ConditionUsage => ({ work, bytes });

interface EngineNode {
  op: string;
  evaluate(evaluator: EngineEvaluator, node: EngineNode, context: unknown): unknown;
}
interface EngineEvaluator {
  run(node: EngineNode, context: unknown): unknown;
}

/**
 * Installs the meter on the environment's evaluator. The evaluator is private to the
 * environment; it is handed to the root node of every evaluation, so one evaluation of a
 * throwaway expression whose root is wrapped captures it.
 */
export function meterEnvironment(environment: Environment): void {
  const probe = environment.parse('true');
  const root = probe.ast as unknown as EngineNode;
  let captured: EngineEvaluator | undefined;
  const original = root.evaluate;
  root.evaluate = function capture(evaluator, node, context) {
    captured = evaluator;
    return original.call(this, evaluator, node, context);
  };
  probe({});
  if (!captured || typeof captured.run !== 'function') throw new Error('the CEL engine did not hand its evaluator to the root node: the condition meter cannot be installed');
  const evaluator = captured;
  evaluator.run = function meteredRun(node, context) {
    if (!active) return node.evaluate(this, node, context);
    if (exceeded) throw new ConditionBudgetExceeded(usage());
    const value = node.evaluate(this, node, context);
    charge(node.op, value);
    if (exceeded) throw new ConditionBudgetExceeded(usage());
    return value;
  };
}

/**
 * Runs one evaluation under the budget. Throws {@link ConditionBudgetExceeded} when the budget
 * ran out, whatever the evaluation returned or threw; otherwise returns its result and usage.
 */
export function metered<T>(evaluate: () => T): { result: T; usage: ConditionUsage } {
  if (active) throw new Error('condition evaluations do not nest');
  active = true;
  exceeded = false;
  work = 0;
  bytes = 0;
  let result: T;
  try {
    result = evaluate();
  } catch (error) {
    if (exceeded) throw new ConditionBudgetExceeded(usage());
    throw error;
  } finally {
    active = false;
  }
  if (exceeded) throw new ConditionBudgetExceeded(usage());
  return { result, usage: usage() };
}
