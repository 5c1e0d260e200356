import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import { InvalidInputError } from '../errors';
import type { ConditionVariables } from './types';
import { CONDITION_VARIABLE_TYPES, MAX_CONDITION_LENGTH } from './limits';
import { ConditionCostError, estimateConditionCost, type ConditionCost } from './condition-cost';
import { pinsSubject } from './subject-pinning';
import { ConditionBudgetExceeded, meterCalls, meterEnvironment, metered, type ConditionUsage, type MeterOptions } from './condition-meter';

/**
 * Policy conditions (docs/reference.md#conditions): CEL expressions over exactly four variables, checked in full
 * when a policy is saved ({@link checkCondition}) and evaluated at exchange time
 * ({@link evaluateCondition}) from a per-container cache of compiled expressions.
 */

export { CONDITION_VARIABLE_TYPES, MAX_CONDITION_LENGTH };

/**
 * Parser limits. A 2,000-character condition a person writes stays far below them; they bound
 * the work of parsing and, with the nesting rule, of evaluating hostile input.
 */
export const CONDITION_LIMITS = Object.freeze({
  maxAstNodes: 500,
  maxDepth: 32,
  maxListElements: 100,
  maxMapEntries: 50,
  maxCallArguments: 8,
});

/** docs/reference.md#conditions rule 3: the macros that loop over a list or map. */
const COMPREHENSION_MACROS: ReadonlySet<string> = new Set(['all', 'exists', 'exists_one', 'filter', 'map']);

/**
 * A condition refused when a policy is saved. The message says only what is wrong
 * ("unknown variable claims"); a boundary adds which field it was about.
 */
export class ConditionError extends InvalidInputError {
  constructor(message: string) {
    super(message, { parameter: 'condition' });
  }
}

/**
 * A condition that could not be evaluated to a boolean at exchange time (docs/reference.md#conditions rule 4:
 * the exchange is refused). The message is for the exchange record, never for the workload.
 */
export class ConditionEvaluationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConditionEvaluationError';
  }
}

/** A condition that passed the save-time checks, with what the policy rules need to know of it. */
export interface CheckedCondition {
  /** The source as given: stored verbatim. */
  source: string;
  /** Its worst-case cost for the largest token an exchange admits (within the budget). */
  cost: ConditionCost;
  /** Whether a clause of its top-level conjunction pins `subject` (the shared-issuer rule). */
  pinsSubject: boolean;
  /** The variables the expression reads, in order of first use (the shared-issuer rule asks for `subject`). */
  variables: string[];
}

function createEnvironment(): Environment {
  const environment = new Environment({ unlistedVariablesAreDyn: false, limits: { ...CONDITION_LIMITS } });
  for (const [name, type] of Object.entries(CONDITION_VARIABLE_TYPES)) environment.registerVariable(name, type);
  return environment;
}

const environment = createEnvironment();
meterEnvironment(environment);

/**
 * docs/reference.md#conditions rules 1-3, at save time: length, syntax, parser limits, no `matches()`, no nested
 * comprehension, only the four variables, well-typed, and a `bool` result. Throws a
 * {@link ConditionError} naming the first problem found.
 */
export function checkCondition(source: string): CheckedCondition {
  return checkAndParse(source).checked;
}

/** {@link checkCondition}, also handing back the checked parse, which evaluates as it is. */
function checkAndParse(source: string): { checked: CheckedCondition; evaluator: Evaluator } {
  if (typeof source !== 'string' || source.trim() === '') throw new ConditionError('the condition is empty');
  // docs/reference.md#limits: the length is capped before parsing, so no oversized input reaches the parser.
  if (source.length > MAX_CONDITION_LENGTH) {
    throw new ConditionError(`the condition is longer than ${MAX_CONDITION_LENGTH} characters`);
  }
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = environment.parse(source);
  } catch (error) {
    throw parseFailure(error);
  }
  const variables = inspect(parsed.ast);
  const result = parsed.check();
  if (!result.valid) throw typeFailure(result.error);
  // docs/reference.md#conditions rule 1: the condition decides, so it must be a boolean and nothing else.
  if (result.type !== 'bool') throw new ConditionError(`the condition must yield a bool, not ${result.type}`);
  // The budget: what the condition can cost for the largest token an exchange admits.
  let cost: ConditionCost;
  try {
    cost = estimateConditionCost(parsed.ast);
  } catch (error) {
    if (error instanceof ConditionCostError) throw new ConditionError(error.message);
    throw error;
  }
  // Checked, each call and comparison node holds the function it calls: charged from now on when
  // evaluated; map literals keep every key ('__proto__' too).
  meterCalls(parsed.ast);
  return { checked: { source, variables, cost, pinsSubject: pinsSubject(parsed.ast) }, evaluator: parsed as Evaluator };
}

function parseFailure(error: unknown): ConditionError {
  const { code, summary, range } = error as { code?: string; summary?: string; range?: { start: number } };
  if (code === 'limit_exceeded') return new ConditionError(`the condition is too complex: ${lowerFirst(summary ?? 'limit exceeded')}`);
  const at = typeof range?.start === 'number' ? ` at position ${range.start + 1}` : '';
  return new ConditionError(`syntax error${at}: ${lowerFirst(summary ?? 'not a CEL expression')}`);
}

function typeFailure(error: unknown): ConditionError {
  const { code, summary, message } = (error ?? {}) as { code?: string; summary?: string; message?: string };
  const text = summary ?? message?.split('\n')[0] ?? 'type error';
  if (code === 'unknown_variable') {
    const name = /Unknown variable: (.+)$/.exec(text)?.[1] ?? text;
    return new ConditionError(`unknown variable ${name}`);
  }
  return new ConditionError(`type error: ${lowerFirst(text)}`);
}

/**
 * Walks the syntax tree once: refuses `matches()` (docs/reference.md#conditions rule 2), a comprehension inside
 * another's loop body (rule 3) and `cel.bind` (binding lets a string double in size at each
 * level: exponential work from a short condition), and collects the variables read.
 */
function inspect(root: ASTNode): string[] {
  const variables: string[] = [];
  const visit = (node: ASTNode, inLoop: boolean, bound: ReadonlySet<string>): void => {
    switch (node.op) {
      case 'value':
        return;
      case 'id': {
        const name = node.args as string;
        if (!bound.has(name) && Object.hasOwn(CONDITION_VARIABLE_TYPES, name) && !variables.includes(name)) variables.push(name);
        return;
      }
      case 'call': {
        const [name, args] = node.args as [string, ASTNode[]];
        if (name === 'matches') throw new ConditionError('matches() is not available');
        for (const arg of args) visit(arg, inLoop, bound);
        return;
      }
      case 'rcall': {
        const [name, receiver, args] = node.args as [string, ASTNode, ASTNode[]];
        if (name === 'matches') throw new ConditionError('matches() is not available');
        if (name === 'bind' && receiver.op === 'id' && receiver.args === 'cel') throw new ConditionError('cel.bind() is not available');
        const isComprehension = COMPREHENSION_MACROS.has(name) && args.length >= 2 && args[0]!.op === 'id';
        if (!isComprehension) {
          visit(receiver, inLoop, bound);
          for (const arg of args) visit(arg, inLoop, bound);
          return;
        }
        if (inLoop) throw new ConditionError('nested comprehension');
        // The receiver is evaluated once, before the loop: a chain such as
        // `scopes.filter(...).exists(...)` stays linear and is allowed.
        visit(receiver, false, bound);
        const inner = new Set(bound).add(args[0]!.args as string);
        for (const arg of args.slice(1)) visit(arg, true, inner);
        return;
      }
      default:
        for (const child of operands(node)) visit(child, inLoop, bound);
    }
  };
  visit(root, false, new Set());
  return variables;
}

function operands(node: ASTNode): ASTNode[] {
  const args = node.args as unknown;
  if (isNode(args)) return [args];
  if (!Array.isArray(args)) return [];
  // Map literals hold [key, value] pairs; member access holds [object, fieldName].
  return args.flat().filter(isNode);
}

function isNode(value: unknown): value is ASTNode {
  return typeof value === 'object' && value !== null && typeof (value as { op?: unknown }).op === 'string';
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

type Evaluator = (variables: ConditionVariables) => unknown;

/** Compiled conditions by source text; policies that share a condition share one entry. */
const compiled = new Map<string, Evaluator>();

/** Enough for every condition one container serves in practice; the oldest entry goes first. */
export const CONDITION_CACHE_SIZE = 512;

function compile(source: string): Evaluator {
  const cached = compiled.get(source);
  if (cached) {
    // Refresh recency: Map iteration order is insertion order.
    compiled.delete(source);
    compiled.set(source, cached);
    return cached;
  }
  let evaluator: Evaluator;
  try {
    evaluator = checkAndParse(source).evaluator;
  } catch (error) {
    throw new ConditionEvaluationError(`the stored condition does not compile: ${(error as Error).message}`, { cause: error });
  }
  if (compiled.size >= CONDITION_CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  compiled.set(source, evaluator);
  return evaluator;
}

/**
 * docs/reference.md#conditions at exchange time: true or false, or a {@link ConditionEvaluationError} when the
 * expression fails (out-of-range index, failed conversion) or yields anything but a boolean.
 * Rule 4 treats an error like false; the caller records which of the two happened.
 */
export function evaluateCondition(source: string, variables: ConditionVariables): boolean {
  return evaluateConditionMetered(source, variables).result;
}

/** {@link evaluateCondition}, also saying what the evaluation cost in the budget's units. */
export function evaluateConditionMetered(source: string, variables: ConditionVariables, options?: MeterOptions): { result: boolean; usage: ConditionUsage } {
  const evaluator = compile(source);
  assertVariableTypes(variables);
  let outcome: { result: unknown; usage: ConditionUsage };
  try {
    // Only the four variables reach the expression, whatever else the caller's object holds;
    // the meter stops it at the budget however it was written.
    outcome = metered(() =>
      evaluator({
        subject: variables.subject,
        audience: variables.audience,
        scopes: variables.scopes,
        token_type: variables.token_type,
      }),
      options,
    );
  } catch (error) {
    if (error instanceof ConditionBudgetExceeded) throw new ConditionEvaluationError(error.message, { cause: error });
    const summary = (error as { summary?: string; message?: string }).summary ?? (error as Error).message;
    throw new ConditionEvaluationError(`the condition failed: ${summary}`, { cause: error });
  }
  const { result, usage } = outcome;
  if (typeof result !== 'boolean') throw new ConditionEvaluationError(`the condition yielded ${describe(result)}, not a bool`);
  return { result, usage };
}

/** docs/reference.md#conditions rule 4: a claim of the wrong type refuses the exchange, never reaches the expression. */
function assertVariableTypes(variables: ConditionVariables): void {
  const isStringList = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');
  const wrong = [
    typeof variables.subject !== 'string' && 'subject',
    !isStringList(variables.audience) && 'audience',
    !isStringList(variables.scopes) && 'scopes',
    typeof variables.token_type !== 'string' && 'token_type',
  ].filter((name): name is string => name !== false);
  if (wrong.length > 0) throw new ConditionEvaluationError(`wrongly typed variable: ${wrong.join(', ')}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value}`;
}
