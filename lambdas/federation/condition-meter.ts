import type { ASTNode, Environment } from '@marcbachmann/cel-js';
import { CALL_CHARGES, COMPARE_WORK, CONTAINER_WEIGHT, MAP_ENTRY_WEIGHT, type ValueSize } from './condition-functions';
import { buildWithEveryKey } from './condition-maps';
import { CONDITION_BUDGET, CONDITION_ERROR_WORK, CONDITION_STEP_WORK, CONDITION_TIME_LIMIT_MS } from './limits';

/**
 * The run-time half of the condition budget (docs/workload-identity.md, "Conditions"): each node
 * the CEL engine evaluates is charged {@link CONDITION_STEP_WORK} and what the save-time bound
 * counts for its value (condition-cost.ts), a call its charge (condition-functions.ts) from its
 * values before it runs, an error {@link CONDITION_ERROR_WORK}. Past either limit of
 * {@link CONDITION_BUDGET} or {@link CONDITION_TIME_LIMIT_MS} of wall-clock time (checked between
 * nodes: the backstop for what the model misses) every further node throws, so not even a
 * construct that catches errors (`||`, `exists`) goes on. The engine (`@marcbachmann/cel-js`,
 * pinned) runs each operand through `evaluator.run` (`tryEval` calls it too): the meter replaces
 * `run` on the environment's one evaluator, and {@link meterCalls} wraps the `handle` a checked
 * call or comparison node calls its function through. A test proves it sees every node and call.
 */

/** An evaluation stopped by the budget: what it had used, and which limit it passed. */
export class ConditionBudgetExceeded extends Error {
  constructor(
    readonly usage: ConditionUsage,
    readonly limit: 'work' | 'time',
  ) {
    super(
      limit === 'time'
        ? `the condition took longer than its evaluation time limit (${CONDITION_TIME_LIMIT_MS} ms)`
        : `the condition exceeded its evaluation budget (${CONDITION_BUDGET.maxWork.toLocaleString('en-US')} work units, ${CONDITION_BUDGET.maxBytes.toLocaleString('en-US')} bytes)`,
    );
    this.name = 'ConditionBudgetExceeded';
  }
}

/** What an evaluation used: work units and bytes built. */
export interface ConditionUsage {
  work: number;
  bytes: number;
}

/** The meter's clock and time limit, which tests replace. */
export interface MeterOptions {
  /** Milliseconds from some fixed point (`performance.now`); injected by tests. */
  now?: () => number;
  /** @default CONDITION_TIME_LIMIT_MS */
  timeLimitMs?: number;
}

const MAX_WORK = CONDITION_BUDGET.maxWork;
const MAX_BYTES = CONDITION_BUDGET.maxBytes;
/** Work between two looks at the clock: a few tens of microseconds at the model's rate. */
const CLOCK_CHECK_WORK = 16_384;

/**
 * The meter of the evaluation under way. Module state, not an object, because it is charged
 * for every node evaluated: this is the engine's innermost loop.
 */
let active = false;
let exceeded: 'work' | 'time' | null = null;
let work = 0;
let bytes = 0;
let nextClockCheck = CLOCK_CHECK_WORK;
let startedAt = 0;
let clock: () => number = () => performance.now();
let timeLimitMs = CONDITION_TIME_LIMIT_MS;
/** Errors already charged: one error passes through the `run` of every node above it. */
let charged = new WeakSet<object>();

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
  settle();
}

/** Marks the evaluation as over a limit once it is, looking at the clock every so much work. */
function settle(): void {
  if (work > MAX_WORK || bytes > MAX_BYTES) exceeded ??= 'work';
  if (work >= nextClockCheck) {
    nextClockCheck = work + CLOCK_CHECK_WORK;
    if (clock() - startedAt > timeLimitMs) exceeded ??= 'time';
  }
}

/** An error raised under the meter, charged once however many nodes it passes. */
function chargeError(error: unknown): void {
  if (exceeded !== null || typeof error !== 'object' || error === null || charged.has(error)) return;
  charged.add(error);
  work += CONDITION_ERROR_WORK;
  // An error is the slowest thing an evaluation does: the clock is read after each.
  nextClockCheck = work;
  settle();
}

/** A weighed value's weight and how many lists and maps it holds, itself included. */
interface Weighed {
  length: number;
  weight: number;
  containers: number;
}
const weights = new WeakMap<object, Weighed>();
/**
 * Lists this long have their weight remembered (a variable read in every turn of a loop); a
 * shorter one is weighed afresh: a WeakMap entry for each list a literal builds costs more than
 * the list.
 */
const CACHED_LENGTH = 64;
/** Lists and maps met by {@link weightOf} so far: one walk counts them as it weighs. */
let containersSeen = 0;

/** Characters and elements of a value, and {@link CONTAINER_WEIGHT} for each list or map: what reading all of it costs. */
function weightOf(value: unknown): number {
  if (typeof value === 'string') return 1 + value.length;
  if (Array.isArray(value)) {
    const cached = value.length >= CACHED_LENGTH;
    const known = cached ? weights.get(value) : undefined;
    if (known && known.length === value.length) {
      containersSeen += known.containers;
      return known.weight;
    }
    const before = containersSeen++;
    let weight = CONTAINER_WEIGHT;
    for (let i = 0; i < value.length; i++) weight += weightOf(value[i]);
    if (cached) weights.set(value, { length: value.length, weight, containers: containersSeen - before });
    return weight;
  }
  if (value instanceof Map) {
    containersSeen++;
    let weight = CONTAINER_WEIGHT;
    for (const [key, item] of value) weight += MAP_ENTRY_WEIGHT + weightOf(key) + weightOf(item);
    return weight;
  }
  if (isObjectMap(value)) {
    containersSeen++;
    let weight = CONTAINER_WEIGHT;
    for (const key in value) weight += MAP_ENTRY_WEIGHT + 1 + key.length + weightOf(value[key]);
    return weight;
  }
  return 1;
}

/** The lists and maps a value holds, itself included. */
function containersOf(value: unknown): number {
  if (!isObject(value)) return 0;
  // The type checker holds a list's elements (a map's values) to one type: when the first is no
  // list or map, none is, and the walk is spared.
  if (Array.isArray(value) && !isObject(value[0])) return 1;
  if (value instanceof Map && !isObject(value.values().next().value)) return 1;
  const before = containersSeen;
  weightOf(value);
  return containersSeen - before;
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** A map the engine built as a plain object (condition-maps.ts builds those with string keys as a `Map`). */
function isObjectMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Entries of a map; undefined for anything else. */
function entriesOf(value: unknown): number | undefined {
  if (value instanceof Map) return value.size;
  return isObjectMap(value) ? Object.keys(value).length : undefined;
}

function bytesOf(value: unknown): number {
  if (Array.isArray(value)) return 8 * value.length;
  return 16 * (entriesOf(value) ?? 0);
}

/** What a call's charge reads of a value it is made with, written into `size` (no allocation per call). */
function measure(size: ValueSize, value: unknown): ValueSize {
  if (typeof value === 'string') {
    size.kind = 'string';
    size.characters = value.length;
    size.count = 1;
  } else if (Array.isArray(value)) {
    // A list's characters: its weight less its own and one per element.
    size.kind = 'list';
    size.characters = weightOf(value) - CONTAINER_WEIGHT - value.length;
    size.count = value.length;
  } else {
    const entries = entriesOf(value);
    size.kind = entries === undefined ? 'other' : 'map';
    size.characters = 0;
    size.count = entries ?? 1;
  }
  return size;
}

const receiverSize: ValueSize = { kind: 'other', characters: 0, count: 1 };
const argumentSizes: ValueSize[] = [0, 1, 2].map(() => ({ kind: 'other', characters: 0, count: 1 }));
/** The sizes of the arguments of a call, by how many there are: no function takes more than three. */
const argumentLists: ValueSize[][] = [[], argumentSizes.slice(0, 1), argumentSizes.slice(0, 2), argumentSizes];

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
  // The engine's own node type: its evaluate hook is not in the library's declared AST type.
  const ast: object = probe.ast;
  const root = ast as EngineNode;
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
    if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
    let value: unknown;
    try {
      value = node.evaluate(this, node, context);
    } catch (error) {
      chargeError(error);
      throw error;
    }
    charge(node.op, value);
    if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
    return value;
  };
}

type CallHandle = (...parameters: unknown[]) => unknown;

/**
 * Prepares a checked expression for metered evaluation: charges every function call before the
 * function runs, and every comparison of lists or maps by the pairs of them it can compare; map
 * literals build maps with every key (condition-maps.ts). A checked call node keeps the function
 * it calls in `handle`: `handle(values, evaluator, node)` for a method (`values` is the receiver,
 * then the arguments) and `handle(arguments, node, evaluator)` for a global function; an operator
 * node `handle(left, right, node, evaluator)`. Comprehension macros are not calls of a function
 * and keep theirs.
 */
export function meterCalls(root: ASTNode): void {
  const visit = (node: ASTNode): void => {
    const engineNode = node as ASTNode & { handle?: CallHandle };
    const original = engineNode.handle;
    if ((node.op === 'rcall' || node.op === 'call') && typeof original === 'function') {
      const args: unknown = node.args;
      const name = Array.isArray(args) && typeof args[0] === 'string' ? args[0] : undefined;
      const chargeOf = name !== undefined && Object.hasOwn(CALL_CHARGES, name) ? CALL_CHARGES[name]! : undefined;
      if (chargeOf) {
        engineNode.handle = function meteredCall(values: unknown, ...rest: unknown[]) {
          if (active) chargeCall(chargeOf, values as unknown[]);
          return original.call(this, values, ...rest);
        };
      }
    }
    if ((node.op === '==' || node.op === '!=' || node.op === 'in') && typeof original === 'function') {
      const membership = node.op === 'in';
      engineNode.handle = function meteredComparison(left: unknown, right: unknown, ...rest: unknown[]) {
        if (active && typeof left === 'object' && typeof right === 'object') chargeComparison(membership, left, right);
        return original.call(this, left, right, ...rest);
      };
    }
    if (node.op === 'map') buildWithEveryKey(node);
    for (const child of children(node)) visit(child);
  };
  visit(root);
}

/**
 * The engine compares two lists or maps element by element, and looks up how to compare each
 * pair of lists or maps inside them: the pairs are at most the lists and maps of the smaller
 * side but the outermost, and for `in` at most those of the item for each element, or those in
 * the list.
 */
function chargeComparison(membership: boolean, left: unknown, right: unknown): void {
  if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
  let pairs: number;
  if (!membership) pairs = Math.max(0, Math.min(containersOf(left), containersOf(right)) - 1);
  else if (Array.isArray(right)) pairs = Math.min(containersOf(left) * right.length, containersOf(right) - 1);
  else pairs = 0;
  work += COMPARE_WORK * pairs;
  settle();
  if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
}

function chargeCall(chargeOf: (self: ValueSize, args: readonly ValueSize[]) => number, values: readonly unknown[]): void {
  if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
  const args = argumentLists[values.length - 1]!;
  for (let i = 0; i < args.length; i++) measure(args[i]!, values[i + 1]);
  work += chargeOf(measure(receiverSize, values[0]), args);
  settle();
  if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
}

function children(node: ASTNode): ASTNode[] {
  const found: ASTNode[] = [];
  const collect = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) collect(item);
    else if (typeof value === 'object' && value !== null && typeof (value as { op?: unknown }).op === 'string') found.push(value as ASTNode);
  };
  collect(node.args);
  return found;
}

/**
 * Runs one evaluation under the budget. Throws {@link ConditionBudgetExceeded} when the budget
 * or the time ran out, whatever the evaluation returned or threw; otherwise returns its result
 * and usage. Errors raised meanwhile carry no stack trace: capturing one costs more than the
 * rest of raising the error, and a condition's error is reported by its message.
 */
export function metered<T>(evaluate: () => T, options: MeterOptions = {}): { result: T; usage: ConditionUsage } {
  if (active) throw new Error('condition evaluations do not nest');
  clock = options.now ?? (() => performance.now());
  timeLimitMs = options.timeLimitMs ?? CONDITION_TIME_LIMIT_MS;
  startedAt = clock();
  active = true;
  exceeded = null;
  work = 0;
  bytes = 0;
  nextClockCheck = CLOCK_CHECK_WORK;
  charged = new WeakSet();
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let result: T;
  try {
    result = evaluate();
  } catch (error) {
    chargeError(error);
    if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
    throw error;
  } finally {
    active = false;
    Error.stackTraceLimit = stackTraceLimit;
  }
  if (exceeded !== null) throw new ConditionBudgetExceeded(usage(), exceeded);
  return { result, usage: usage() };
}
