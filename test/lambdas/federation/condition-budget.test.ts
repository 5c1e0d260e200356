import { Environment } from '@marcbachmann/cel-js';
import { ConditionError, ConditionEvaluationError, checkCondition, evaluateCondition, evaluateConditionMetered } from '../../../lambdas/federation/condition';
import { ConditionBudgetExceeded, meterEnvironment, metered, type MeterOptions } from '../../../lambdas/federation/condition-meter';
import { CODE_POINT_WORK, COMPARE_WORK, CONTAINER_WEIGHT, MAP_ENTRY_WEIGHT, reverseSearchCost } from '../../../lambdas/federation/condition-functions';
import { CONDITION_BUDGET, CONDITION_ERROR_WORK, CONDITION_INPUT_BOUNDS, CONDITION_STEP_WORK, CONDITION_TIME_LIMIT_MS, CONDITION_VARIABLE_TYPES } from '../../../lambdas/federation/limits';
import type { ConditionVariables } from '../../../lambdas/federation/types';

/**
 * The condition budget: a static bound refuses expensive conditions when a policy is saved,
 * and a meter stops any evaluation at the budget, so no condition however written can take
 * more than a few milliseconds or a few megabytes.
 */

/** The condition from the attack run: 319 characters, 2^19 copies of a 512-character subject. */
const DOUBLING = 'audience.map(a, subject)' + '.map(x, x + x)'.repeat(18) + '.exists(y, y.contains("zzz"))';

const longest = (length: number, fill = 'a') => fill.repeat(length);

/** Tokens at the limits an exchange admits, in the shapes that stress different bounds. */
const WORST_INPUTS: Record<string, ConditionVariables> = {
  'few long values': {
    subject: longest(CONDITION_INPUT_BOUNDS.subjectLength),
    audience: Array.from({ length: CONDITION_INPUT_BOUNDS.claimCharacters / CONDITION_INPUT_BOUNDS.audienceLength }, (_, i) => longest(CONDITION_INPUT_BOUNDS.audienceLength, String.fromCharCode(97 + (i % 26)))),
    scopes: Array.from({ length: CONDITION_INPUT_BOUNDS.scopesCount }, () => longest(CONDITION_INPUT_BOUNDS.scopeLength, '/')),
    token_type: longest(CONDITION_INPUT_BOUNDS.claimCharacters),
  },
  'many short values': {
    subject: 'a/b/'.repeat(CONDITION_INPUT_BOUNDS.subjectLength / 4),
    audience: Array.from({ length: CONDITION_INPUT_BOUNDS.audienceCount }, (_, i) => (i % 3 === 0 ? 'ab' : '')),
    scopes: Array.from({ length: CONDITION_INPUT_BOUNDS.scopesCount }, () => 'x/'.repeat(CONDITION_INPUT_BOUNDS.scopeLength / 2)),
    token_type: '',
  },
  'both at once': {
    subject: '/'.repeat(CONDITION_INPUT_BOUNDS.subjectLength),
    audience: [
      ...Array.from({ length: 20 }, () => longest(CONDITION_INPUT_BOUNDS.audienceLength, '/')),
      ...Array.from({ length: CONDITION_INPUT_BOUNDS.audienceCount - 20 }, () => ''),
    ],
    scopes: [],
    token_type: 'x',
  },
};

/** Conditions a person writes, and some that sit near the limits; each must be accepted. */
const ACCEPTED = [
  'subject == "repo:acme/api:ref:refs/heads/main"',
  'subject.startsWith("repo:acme/") && "ci" in scopes',
  'audience.exists(a, a.contains("prod"))',
  'audience.exists(a, a.lowerAscii().contains("prod"))',
  'audience.map(a, a + "/").exists(y, y == "https://x/")',
  'audience.filter(a, a.startsWith("x")).size() > 0',
  'audience.all(a, a.startsWith("api://") || a.endsWith(".example") || a == "z")',
  'scopes.map(s, s.split("/")).exists(p, p.size() > 2)',
  'subject.split("/").size() == 3 && subject.split("/")[1] == "x"',
  'scopes.map(s, s.upperAscii()).filter(s, s.size() > 3).exists_one(s, s.endsWith("Z"))',
  'audience.map(a, a.trim()).join(",").size() > 0',
  'token_type.contains("jwt") && [subject, token_type].exists(v, v.size() > 600)',
  'scopes.map(s, s + s + s + s).map(x, x + x).map(x, x + x).exists_one(y, y.endsWith("q"))',
  '["acme", "beta"].exists(o, subject.startsWith(o + ":")) && {"ci": 1, "cd": 2}.exists(k, k in scopes)',
  'subject.lastIndexOf(":") > 0 && subject.substring(subject.lastIndexOf(":") + 1) == "main"',
  // Each of these can fail on the inputs below, and `|| true` absorbs it: an error is charged either way.
  'scopes.exists(s, int(s.split("/")[1]) > 3) || double(subject) > 1.5 || uint(subject) == 2u || bool(subject) || true',
  'token_type.lowerAscii().contains("jwt") && token_type.indexOf("j", 1) >= 0 && subject.split(":").join("/").size() > 2',
  // List and map literals, built, nested and compared; map keys the engine used to drop.
  '[["a", subject], [token_type]] != [[subject]] && {"k": [subject], "__proto__": [token_type]}.size() == 2',
  'scopes.exists(s, [{s: [s]}, {s: [s]}] == [{s: [s]}, {s: ["y"]}]) || true',
  '[subject, "y"] in [[subject, "z"], [token_type, "y"]] || [[[subject]], [[token_type]]].exists(l, l == [[subject]])',
  '{1: subject, 2: token_type}[1] == subject && {true: [subject]} != {false: [token_type]}',
  'scopes.exists(s, [s, "x"] == [s, "y"]) || scopes.map(s, [s, s]).exists(p, p in [[subject, token_type]])',
  'audience.exists(a, [a] == ["y"]) || true',
  'audience.exists(a, {a: 1} != {"y": 2}) || true',
];

describe('saving a policy: the static bound', () => {
  it('refuses the doubling condition with a 400 naming the limit', () => {
    expect(DOUBLING.length).toBeLessThan(400);
    expect(() => checkCondition(DOUBLING)).toThrow(ConditionError);
    expect(() => checkCondition(DOUBLING)).toThrow(/too expensive.*the limit is 5,000,000/);
  });

  it.each([
    ['one map stage of subject copies', 'audience.map(a, subject + subject + subject).exists(y, y.contains("zzz"))'],
    ['filter after a growing map', 'audience.map(a, subject + a).filter(x, x.size() > 1).size() > 0'],
    ['exists_one over string growth', 'audience.map(a, subject + subject).map(x, x + x).exists_one(y, y.endsWith("q"))'],
    ['all over list growth', 'audience.map(a, audience).all(l, l.size() > 0)'],
    ['list concatenation inside a loop', 'audience.map(a, audience + audience).exists(l, l.size() == 2)'],
    ['join of split characters', 'audience.map(a, subject.split("").join(subject)).exists(y, y == "")'],
    ['a chain of cheap stages', 'audience' + '.filter(a, a != "x")'.repeat(6) + '.size() > 0'],
  ])('refuses %s', (_name, source) => {
    expect(() => checkCondition(source)).toThrow(/too expensive/);
  });

  const ninetyFive = `[${Array.from({ length: 95 }, (_, i) => i).join(', ')}]`;
  it.each([
    // The attack run's conditions: each saved under the old linear charge and took 135-470 ms.
    ['two 95-item loops over lastIndexOf', `${ninetyFive}.exists(i, token_type.lastIndexOf(subject) == i) || ${ninetyFive}.exists(i, token_type.lastIndexOf(subject) == i + 1)`],
    ['a needle built with substring', `${ninetyFive}.exists(i, token_type.lastIndexOf(token_type.substring(i)) == 0)`],
    ['a chain of 54 || clauses', Array.from({ length: 54 }, (_, i) => `token_type.lastIndexOf(subject)>${i}`).join('||')],
    // V8 searches as slowly with contains, indexOf and split.
    ['contains of one variable in another', 'token_type.contains(subject) || token_type.contains(subject + "x") || token_type.contains(subject + "y") || token_type.contains(subject + "z")'],
    ['a loop of indexOf', `${ninetyFive}.exists(i, token_type.indexOf(subject) == i)`],
    ['a loop of split', `${ninetyFive}.exists(i, token_type.split(subject).size() == i)`],
    // An error costs the engine about a hundred nodes' time.
    ['a conversion that can fail in a loop over audience', 'audience.exists(a, int(a) == 1)'],
    ['an index that can fail in a loop over audience', 'audience.exists(a, a.split("/")[2] == "x")'],
    ['case changes in a loop', `${ninetyFive}.exists(i, token_type.upperAscii().size() == i)`],
    // Lists built and compared in a loop: each list weighs more than its elements, and each pair
    // of lists compared inside the operands costs the engine a lookup. The first saved at 4.08M
    // units under the old charges and took 6 ns a unit.
    ['pairs of a list against one in a loop over audience', "audience.exists(a, [[a, a], [a, a], [a, a]] == [['x']]) || true"],
    ['a list 3 deep in a loop over audience', "audience.exists(a, [[[a]]] == [[['x']]]) || true"],
    ['a map of lists in a loop over audience', 'audience.exists(a, {a: [a, a]} == {a: [a]}) || true'],
    ['a list of maps in a loop over audience', "audience.exists(a, [{a: a}, {a: a}] == [{a: 'x'}]) || true"],
    ['a pair in pairs in a loop over audience', 'audience.exists(a, [a, "y"] in [[a, "z"], [a, "z"], [a, "z"]]) || true'],
  ])('refuses %s, which the measured charges price', (_name, source) => {
    expect(source.length).toBeLessThanOrEqual(2000);
    expect(() => checkCondition(source)).toThrow(/too expensive/);
  });

  it.each([
    ['bytes', 'b"abc" == b"abc"'],
    ['dyn()', 'dyn(subject) == "x"'],
    ['type()', 'type(subject) == string'],
  ])('refuses %s, which the bound does not model', (_name, source) => {
    expect(() => checkCondition(source)).toThrow(/not available in conditions/);
  });

  it.each(ACCEPTED)('accepts %s', (source) => {
    expect(() => checkCondition(source)).not.toThrow();
  });
});

describe('the static bound is never below what evaluation costs', () => {
  it.each(ACCEPTED)('%s', (source) => {
    const { cost } = checkCondition(source);
    for (const variables of Object.values(WORST_INPUTS)) {
      // Work, not time: the wall-clock limit would fail a busy test runner, whose sandbox is slower than Node.
      const { usage } = evaluateConditionMetered(source, variables, { timeLimitMs: Infinity });
      expect(usage.work).toBeLessThanOrEqual(cost.work);
      expect(usage.bytes).toBeLessThanOrEqual(cost.bytes);
    }
  });
});

/** What `run` throws; undefined when it returns. */
function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** An environment with the meter but without the save-time bound, as a stored condition saved before it would meet. */
function unchecked(options: MeterOptions = {}): (source: string, variables: ConditionVariables) => unknown {
  const environment = new Environment({ unlistedVariablesAreDyn: false });
  for (const [name, type] of Object.entries(CONDITION_VARIABLE_TYPES)) environment.registerVariable(name, type);
  meterEnvironment(environment);
  return (source, variables) => metered(() => environment.parse(source)({ ...variables }), options).result;
}

describe('evaluating: the meter', () => {
  const evaluate = unchecked();
  const attack: ConditionVariables = { subject: longest(512), audience: Array.from({ length: 64 }, (_, i) => `aud-${i}`), scopes: [], token_type: '' };

  it('stops the doubling condition before it builds more than a few megabytes', () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const thrown = thrownBy(() => evaluate(DOUBLING, attack));
    expect(thrown).toBeInstanceOf(ConditionBudgetExceeded);
    const { usage } = thrown as ConditionBudgetExceeded;
    // Stopped at the first node past the budget: at most one doubling beyond it.
    expect(usage.bytes).toBeLessThanOrEqual(2 * CONDITION_BUDGET.maxBytes + 2 * 1024 * 1024);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it.each([
    ['string growth in map', 'audience.map(a, subject + subject + subject + subject).map(x, x + x + x + x).exists(y, y == "")'],
    ['list growth', 'audience.map(a, audience + audience).map(l, l + l + l).exists(l, l.size() == 0)'],
    ['split and join', 'audience.map(a, subject.split("").join(subject)).exists(y, y.contains("zzz"))'],
    ['many cheap steps', 'audience' + '.filter(a, a != "x")'.repeat(80) + '.size() < 0'],
  ])('stops %s for its work, however long the time limit', (_name, source) => {
    const wide = { ...attack, audience: Array.from({ length: 2048 }, (_, i) => `a${i}`) };
    // The time limit out of the way: what stops it is the work it charged, within the budget's bounds.
    const untimed = unchecked({ timeLimitMs: 10 * 60 * 1000 });
    const thrown = thrownBy(() => untimed(source, wide));
    expect(thrown).toBeInstanceOf(ConditionBudgetExceeded);
    expect((thrown as ConditionBudgetExceeded).limit).toBe('work');
    // Stopped at the first node past the budget: within one node's charge of it.
    const { work, bytes } = (thrown as ConditionBudgetExceeded).usage;
    expect(work).toBeLessThanOrEqual(2 * CONDITION_BUDGET.maxWork);
    expect(bytes).toBeLessThanOrEqual(2 * CONDITION_BUDGET.maxBytes + 2 * 1024 * 1024);
  });

  it('is not swallowed by the operators that absorb errors (|| and exists)', () => {
    const expensive = 'audience.map(a, subject)' + '.map(x, x + x)'.repeat(10) + '.exists(y, y == "")';
    expect(() => evaluate(`${expensive} || true`, attack)).toThrow(ConditionBudgetExceeded);
    expect(() => evaluate(`true || ${expensive}`, attack)).not.toThrow();
    expect(() => evaluate(`["x", "y"].exists(v, v == "y" || ${expensive})`, attack)).toThrow(ConditionBudgetExceeded);
  });

  it('charges a call by its measured cost, from the values it is called with, before it runs', () => {
    const variables = { subject: 'ab', audience: [], scopes: [], token_type: 'x'.repeat(1000) };
    const plain = evaluateConditionMetered('token_type.size() > 0 && subject.size() > 0', variables).usage.work;
    const searched = evaluateConditionMetered('token_type.size() > 0 && token_type.lastIndexOf(subject) < 0', variables).usage.work;
    // The same nodes but the argument's, and other calls: the difference is the search's charge less
    // size's, what the receivers and the argument weigh, and the argument's step.
    const readsOf = (lengths: number[]) => lengths.reduce((sum, length) => sum + 1 + length, 0);
    expect(searched - plain).toBe(reverseSearchCost(1000, 2) - CODE_POINT_WORK * 2 + readsOf([1000, 2]) - readsOf([2]) + CONDITION_STEP_WORK);
  });

  it('weighs each list, map and map entry a node yields, and each pair of them a comparison can meet inside its operands', () => {
    const variables = { subject: 'ab', audience: [], scopes: [], token_type: 'cd' };
    const work = (source: string) => evaluateConditionMetered(source, variables).usage.work;
    // The root is evaluated directly; a variable read weighs its characters; a list or map node its elements and itself.
    const read = CONDITION_STEP_WORK + 1 + 2;
    const list = (elements: number) => CONDITION_STEP_WORK + CONTAINER_WEIGHT + elements;
    const flat = read + list(read - CONDITION_STEP_WORK);
    expect(work('[subject] == [token_type]')).toBe(2 * flat);
    const nested = flat + list(CONTAINER_WEIGHT + 3);
    expect(work('[[subject]] == [[token_type]]')).toBe(2 * nested + COMPARE_WORK);
    // `in` compares the item with each element: a lookup for each.
    expect(work('[subject] in [[subject], [token_type]]')).toBe(3 * flat + list(2 * (CONTAINER_WEIGHT + 3)) + 2 * COMPARE_WORK);
    expect(work('{subject: token_type} != {}')).toBe(2 * read + list(MAP_ENTRY_WEIGHT + 3 + 3) + list(0));
  });

  it('charges each error once, however many nodes it passes', () => {
    const variables = { subject: 'x', audience: [], scopes: [], token_type: '' };
    const { usage } = evaluateConditionMetered('int(subject) == 1 || true', variables);
    expect(usage.work).toBeGreaterThanOrEqual(CONDITION_ERROR_WORK);
    expect(usage.work).toBeLessThan(2 * CONDITION_ERROR_WORK);
  });

  it('stops an evaluation at the wall-clock limit, checked between nodes, whatever the work model says', () => {
    let now = 0;
    // A clock that moves 10 ms each time the meter looks: the model misses nothing here, the clock does.
    const clock = () => (now += 10);
    const variables = { subject: 'x', audience: Array.from({ length: 2048 }, (_, i) => `a${i}`), scopes: [], token_type: '' };
    let thrown: unknown;
    try {
      evaluateConditionMetered('audience.exists(a, a == "never")', variables, { now: clock });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConditionEvaluationError);
    expect((thrown as Error).message).toBe(`the condition took longer than its evaluation time limit (${CONDITION_TIME_LIMIT_MS} ms)`);
    const stoppedAt = ((thrown as { cause: ConditionBudgetExceeded }).cause).usage.work;
    expect(stoppedAt).toBeLessThan(CONDITION_BUDGET.maxWork);
    // With time to spare, the same evaluation completes.
    expect(evaluateConditionMetered('audience.exists(a, a == "never")', variables, { now: () => 0 }).result).toBe(false);
  });

  it('sees every node the engine evaluates', () => {
    const subject = longest(40);
    const { usage } = evaluateConditionMetered('subject == "abc"', { subject, audience: [], scopes: [], token_type: '' });
    // The root is evaluated directly; its operands through the metered evaluator: the variable
    // read weighs its characters, the literal its own.
    expect(usage.work).toBe(CONDITION_STEP_WORK + 1 + subject.length + CONDITION_STEP_WORK + 1 + 3);
  });

  it('refuses a stored condition over the budget at exchange time as an evaluation error', () => {
    expect(() => evaluateCondition(DOUBLING, attack)).toThrow(ConditionEvaluationError);
  });
});
