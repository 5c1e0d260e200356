import {
  CONDITION_CACHE_SIZE,
  ConditionError,
  ConditionEvaluationError,
  MAX_CONDITION_LENGTH,
  checkCondition,
  evaluateCondition,
} from '../../../lambdas/federation/condition';
import type { ConditionVariables } from '../../../lambdas/federation/types';

const github: ConditionVariables = {
  subject: 'repo:acme/api:ref:refs/heads/main',
  audience: ['https://modelgate.example', 'sts'],
  scopes: ['deploy', 'read'],
  token_type: 'id_token',
};

function refusal(source: string): string {
  try {
    checkCondition(source);
  } catch (error) {
    expect(error).toBeInstanceOf(ConditionError);
    expect(error).toMatchObject({ kind: 'invalid_input', metadata: { parameter: 'condition' } });
    return (error as Error).message;
  }
  throw new Error(`accepted: ${source}`);
}

describe('checkCondition accepts', () => {
  it.each([
    ['an exact subject', 'subject == "repo:acme/api:ref:refs/heads/main"'],
    ['a subject prefix', 'subject.startsWith("repo:acme/")'],
    ['a subject suffix', 'subject.endsWith(":ref:refs/heads/main")'],
    ['a substring', 'subject.contains(":environment:production")'],
    ['membership in the audience', '"sts" in audience'],
    ['membership in a literal list', 'subject in ["system:serviceaccount:ci:runner", "system:serviceaccount:ci:deployer"]'],
    ['a scope with exists', 'scopes.exists(s, s == "deploy")'],
    ['every audience with all', 'audience.all(a, a.startsWith("https://"))'],
    ['exactly one scope with exists_one', 'scopes.exists_one(s, s.startsWith("admin:"))'],
    ['size of a filtered list', 'size(scopes.filter(s, s != "")) > 0'],
    ['a chain of comprehensions on the receiver', 'scopes.filter(s, s.startsWith("a")).exists(s, s == "admin")'],
    ['map then membership', '"DEPLOY" in scopes.map(s, s.upperAscii())'],
    ['the token type', 'token_type == "id_token" || token_type == ""'],
    ['a ternary yielding bool', 'size(scopes) > 0 ? "deploy" in scopes : subject.startsWith("repo:acme/")'],
    ['negation and grouping', '!(subject.startsWith("repo:evil/")) && (size(audience) == 1 || "sts" in audience)'],
    ['split and index', 'subject.split(":")[0] == "repo"'],
    ['a case-insensitive comparison', 'token_type.lowerAscii() == "id_token"'],
    ['single-quoted strings', "subject == 'repo:acme/api:ref:refs/heads/main'"],
    ['a condition of exactly the maximum length', `subject == "${'x'.repeat(MAX_CONDITION_LENGTH - 13)}"`],
  ])('%s', (_name, source) => {
    expect(checkCondition(source).source).toBe(source);
  });

  it('reports the variables a condition reads, not comprehension variables that shadow them', () => {
    expect(checkCondition('"sts" in audience && subject.startsWith("repo:")').variables).toEqual(['audience', 'subject']);
    expect(checkCondition('audience.exists(subject, subject == "sts")').variables).toEqual(['audience']);
    expect(checkCondition('token_type == "" && size(scopes) == 0').variables).toEqual(['token_type', 'scopes']);
  });
});

describe('checkCondition refuses', () => {
  it.each([
    ['an unknown variable', 'claims.sub == "x"', 'unknown variable claims'],
    ['an unknown variable inside has()', 'has(claims.sub)', 'unknown variable claims'],
    ['an unknown variable beside known ones', 'subject == "a" && repository == "acme/api"', 'unknown variable repository'],
    ['matches() as a method', 'subject.matches("^repo:acme/.*$")', 'matches() is not available'],
    ['matches() as a function', 'matches(subject, "^repo:")', 'matches() is not available'],
    ['matches() deep inside', 'scopes.exists(s, s.matches("a+"))', 'matches() is not available'],
    ['a string result', 'subject', 'the condition must yield a bool, not string'],
    ['a list result', 'audience', 'the condition must yield a bool, not list<string>'],
    ['an int result', 'size(scopes)', 'the condition must yield a bool, not int'],
    ['a dyn result', 'dyn(subject)', 'the condition must yield a bool, not dyn'],
    ['a map result', 'scopes.map(s, s + "x")', 'the condition must yield a bool, not list<string>'],
    ['exists inside all', 'audience.all(a, scopes.exists(s, s == a))', 'nested comprehension'],
    ['filter inside exists', 'scopes.exists(s, size(audience.filter(a, a == s)) > 0)', 'nested comprehension'],
    ['map inside map', 'size(scopes.map(s, audience.map(a, a + s))) > 0', 'nested comprehension'],
    ['exists_one inside exists_one', 'scopes.exists_one(s, audience.exists_one(a, a == s))', 'nested comprehension'],
    ['comparing a string with an int', 'subject == 1', 'type error: no such overload: string == int'],
    ['adding an int to a string', 'subject + 1 == "a"', 'type error: no such overload: string + int'],
    ['comparing with null', 'null == subject', 'type error: no such overload: null == string'],
    ['an assignment instead of a comparison', 'subject = "a"', 'syntax error at position 9: unexpected character: ='],
    ['a dangling operator', 'subject == "a" &&', 'syntax error at position 18: unexpected token: EOF'],
    ['an invalid escape', 'subject == "\\q"', 'syntax error at position 13: invalid escape sequence: \\q'],
    ['cel.bind', 'cel.bind(s, subject + subject, s.size() > 2)', 'cel.bind() is not available'],
    ['an empty condition', '   ', 'the condition is empty'],
    ['a condition over the maximum length', `subject == "${'x'.repeat(MAX_CONDITION_LENGTH - 12)}"`, 'the condition is longer than 2000 characters'],
    ['deep nesting', `${'('.repeat(40)}subject${')'.repeat(40)} == "a"`, 'the condition is too complex: exceeded maxDepth (32)'],
    ['too many nodes', `size(scopes) == ${Array(300).fill('1').join('+')}`, 'the condition is too complex: exceeded maxAstNodes (500)'],
    ['a huge list literal', `subject in [${Array.from({ length: 101 }, (_, i) => `"${i}"`).join(',')}]`, 'the condition is too complex: exceeded maxListElements (100)'],
  ])('%s', (_name, source, message) => {
    expect(refusal(source)).toBe(message);
  });
});

describe('evaluateCondition', () => {
  it('evaluates against the four variables', () => {
    expect(evaluateCondition('subject.startsWith("repo:acme/") && "sts" in audience', github)).toBe(true);
    expect(evaluateCondition('subject.startsWith("repo:evil/")', github)).toBe(false);
    expect(evaluateCondition('scopes.exists(s, s == "deploy") && token_type == "id_token"', github)).toBe(true);
    expect(evaluateCondition('size(scopes) == 2', github)).toBe(true);
    expect(evaluateCondition('token_type == ""', { ...github, token_type: '' })).toBe(true);
  });

  it('matches case-sensitively (docs/reference.md#federation-policies rule 4)', () => {
    expect(evaluateCondition('subject == "REPO:acme/api:ref:refs/heads/main"', github)).toBe(false);
  });

  it('throws ConditionEvaluationError on a runtime error', () => {
    expect(() => evaluateCondition('scopes[5] == "deploy"', github)).toThrow(ConditionEvaluationError);
    expect(() => evaluateCondition('int(subject) > 0', github)).toThrow('the condition failed: int() type error: cannot convert to int');
  });

  it('throws ConditionEvaluationError when the result is not a bool', () => {
    expect(() => evaluateCondition('dyn(subject)', github)).toThrow(ConditionEvaluationError);
  });

  it('throws ConditionEvaluationError for a source the checker refuses', () => {
    expect(() => evaluateCondition('subject.matches(".*")', github)).toThrow(
      'the stored condition does not compile: matches() is not available',
    );
  });

  it('refuses wrongly typed variables before evaluating (docs/reference.md#conditions rule 4)', () => {
    const bad = { ...github, scopes: ['deploy', 7] } as unknown as ConditionVariables;
    expect(() => evaluateCondition('true', bad)).toThrow('wrongly typed variable: scopes');
    const worse = { ...github, token_type: 1, audience: 'sts' } as unknown as ConditionVariables;
    expect(() => evaluateCondition('true', worse)).toThrow('wrongly typed variable: audience, token_type');
  });

  it('sees only the four variables, whatever else the caller passes', () => {
    const extra = { ...github, claims: { sub: 'x' } } as unknown as ConditionVariables;
    expect(() => evaluateCondition('claims.sub == "x"', extra)).toThrow(ConditionEvaluationError);
  });

  // The engine skipped these keys when it built a map literal: `{'__proto__': 1}.size()` was 0.
  it.each(['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', 'size'])('keeps the map key %s: size, in, index, field and equality', (key) => {
    const holds = [
      `{'${key}': 1}.size() == 1`,
      `{'${key}': 1, 'b': 2}.size() == 2`,
      `'${key}' in {'${key}': 1}`,
      `!('${key}' in {'a': 1})`,
      `{'${key}': 7}['${key}'] == 7`,
      `{'${key}': [7]}['${key}'][0] == 7`,
      `{'${key}': 1} == {'${key}': 1}`,
      `{'${key}': 1} != {'${key}': 2}`,
      `{'${key}': 1} != {'a': 1}`,
      `{'${key}': 1} != {}`,
      `[{'${key}': 1}] == [{'${key}': 1}]`,
      `{'a': {'${key}': 1}} != {'a': {'${key}': 2}}`,
      `{'${key}': 1}.exists(k, k == '${key}')`,
      `{subject: 1, '${key}': 2}.size() == 2`,
      `{subject: 1, '${key}': 2}[subject] == 1`,
    ];
    for (const source of holds) expect([source, evaluateCondition(source, github)]).toEqual([source, true]);
    expect(evaluateCondition(`{'${key}': 1}.${key} == 1`, github)).toBe(true);
    expect(evaluateCondition(`{'${key}': 1}['other'] == 1 || true`, github)).toBe(true);
    expect(() => evaluateCondition(`{'${key}': 1}['other'] == 1`, github)).toThrow('No such key: other');
  });

  it('keeps maps of other keys as they were: ints, bools, duplicates', () => {
    expect(evaluateCondition("{1: 'a', 2: 'b'}[1] == 'a' && 2 in {1: 'a', 2: 'b'}", github)).toBe(true);
    expect(evaluateCondition('{true: 1}.size() == 1', github)).toBe(true);
    expect(evaluateCondition("{'a': 1, 'a': 2}.size() == 1 && {'a': 1, 'a': 2}['a'] == 2", github)).toBe(true);
    expect(evaluateCondition('{}.size() == 0 && {} == {}', github)).toBe(true);
  });

  it('keeps evaluating correctly past the cache bound', () => {
    for (let i = 0; i < CONDITION_CACHE_SIZE + 10; i++) {
      expect(evaluateCondition(`subject.endsWith("main") && ${i} >= 0`, github)).toBe(true);
    }
    expect(evaluateCondition('subject.endsWith("main") && 0 >= 0', github)).toBe(true);
  });
});
