import { ConditionError, checkCondition } from '../lambdas/federation/condition';

/**
 * The slowest conditions found that the save-time bound still admits, each with the claims of a
 * subject token (at most 16 KB, docs/reference.md#limits) that make it slowest: what one exchange can be made to
 * spend on a condition. Built from what costs most per work unit (bench/condition.bench.ts,
 * "Calibration"): substring searches, errors quoting a long source, case changes of characters
 * that change length, many cheap steps in a loop, and list and map literals built and compared
 * in a loop ({@link literalConditions}, each grown to the largest the bound admits; the bench
 * ranks them). condition.bench.ts times their evaluation and token-exchange.bench.ts whole
 * exchanges with them, beside a plain one.
 */

export interface SlowCondition {
  name: string;
  /** The family a literal condition was grown from (`n` its size). */
  family?: string;
  condition: string;
  /** Claims of the subject token beside iss, exp and iat: `aud` includes the policy's audience. */
  claims: { sub: string; aud: string[]; token_type?: string; scopes?: string[] };
}

const list = (length: number, from = 0) => `[${Array.from({ length }, (_, i) => i + from).join(', ')}]`;
/** An error's message quotes the source up to the failing node: the longest source puts it last. */
const afterLongSource = (source: string) => `"${'x'.repeat(2000 - source.length - 13)}" != "" && ${source}`;

/** Each condition ends true, so the exchange issues a token: all of it is measured. */
const thenTrue = (source: string) => `${source} || subject != ""`;

export function slowestConditions(audience: string): SlowCondition[] {
  return [
    {
      // Three saved before lastIndexOf was charged its own rate.
      name: 'two lastIndexOf of subject in token_type',
      condition: thenTrue(['', ' + "x"'].map((suffix) => `token_type.lastIndexOf(subject${suffix}) >= 0`).join(' || ')),
      claims: { sub: `${'a'.repeat(511)}b`, aud: [audience], token_type: 'a'.repeat(11_300) },
    },
    {
      name: '190 failed conversions after a 2,000-character source',
      condition: afterLongSource(thenTrue(`${list(95)}.exists(i, int(subject) == i) || ${list(95, 95)}.exists(i, int(subject) == i)`)),
      claims: { sub: 'x', aud: [audience] },
    },
    {
      name: 'fifteen upper cases of ligatures, sized',
      condition: thenTrue(Array.from({ length: 15 }, (_, i) => `token_type.upperAscii().size() == ${i}`).join(' || ')),
      claims: { sub: 'x', aud: [audience], token_type: 'ﬃ'.repeat(3_800) },
    },
    {
      name: 'three comparisons for each of 3,800 aud values',
      condition: thenTrue(`audience.exists(a, ${Array.from({ length: 3 }, (_, i) => `a == "v${i}"`).join(' || ')})`),
      claims: { sub: 'x', aud: [audience, ...Array.from({ length: 3_800 }, () => '')] },
    },
    // The slowest of the literal shapes (condition.bench.ts, "List and map literals").
    ...literalConditions(audience).filter(({ family }) => SLOWEST_LITERALS.includes(family!)),
  ];
}

const SLOWEST_LITERALS = ['a list n deep compared, in a loop over aud values', 'a list n deep compared, in a loop over 95 numbers'];

/** `n` copies of `item`, comma-separated. */
const times = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join(', ');
/** A list literal of `n - 1` copies of `item` and then `last`. */
const butLast = (n: number, item: (i: number) => string, last: string) => `[${[...Array.from({ length: n - 1 }, (_, i) => item(i)), last].join(', ')}]`;

/**
 * Shapes of list and map literals over a string `x`, `n` the size of the literal: built, nested
 * and compared so that the comparison reads as far as it can and is false, and a loop goes on
 * (the attack's `[[a, a], [a, a], [a, a]] == [['x']]` is the first).
 */
const LITERAL_SHAPES: Record<string, (x: string, n: number) => string> = {
  'n pairs in a list against one': (x, n) => `[${times(n, () => `[${x}, ${x}]`)}] == [["x"]]`,
  'n pairs compared equal but the last': (x, n) => `[${times(n, () => `[${x}, ${x}]`)}] == ${butLast(n, () => `[${x}, ${x}]`, `[${x}, "y"]`)}`,
  'a list n deep compared': (x, n) => `${'['.repeat(n)}${x}${']'.repeat(n)} == ${'['.repeat(n)}"y"${']'.repeat(n)}`,
  'a pair in n pairs': (x, n) => `[${x}, "y"] in [${times(n, () => `[${x}, "z"]`)}]`,
  'n maps in a list compared': (x, n) => `[${times(n, () => `{${x}: ${x}}`)}] == ${butLast(n, () => `{${x}: ${x}}`, `{${x}: "y"}`)}`,
  'a map of n lists compared': (x, n) => `{${times(n, (i) => `"k${i}": [${x}]`)}} == {${butLast(n, (i) => `"k${i}": [${x}]`, `"k${n - 1}": ["y"]`).slice(1, -1)}}`,
};

/** Where a shape is evaluated: in a loop over the most `aud` values a 16 KB token carries, in a loop over 95 numbers, or once. */
const LITERAL_LOOPS: Record<string, { wrap: (shape: (x: string) => string) => string; claims: (audience: string) => SlowCondition['claims'] }> = {
  'in a loop over aud values': { wrap: (shape) => `audience.exists(a, ${shape('a')})`, claims: (audience) => ({ sub: 'x', aud: [audience, ...Array.from({ length: 3_800 }, () => '')] }) },
  'in a loop over 95 numbers': { wrap: (shape) => `${list(95)}.exists(i, ${shape('subject')})`, claims: (audience) => ({ sub: 'x', aud: [audience] }) },
  once: { wrap: (shape) => shape('subject'), claims: (audience) => ({ sub: 'x', aud: [audience] }) },
};

/** The largest n up to `max` whose condition the bound admits (a larger literal costs more), or undefined for none. */
function largestSavable(build: (n: number) => string, max = 100): { n: number; condition: string } | undefined {
  let found: { n: number; condition: string } | undefined;
  for (let n = 1; n <= max; n++) {
    const condition = thenTrue(build(n));
    try {
      checkCondition(condition);
    } catch (error) {
      if (error instanceof ConditionError) break;
      throw error;
    }
    found = { n, condition };
  }
  return found;
}

/** Every literal shape in every loop at the largest size the bound admits, with the claims that make it slowest. */
export function literalConditions(audience: string): SlowCondition[] {
  return Object.entries(LITERAL_SHAPES).flatMap(([shapeName, shape]) =>
    Object.entries(LITERAL_LOOPS).flatMap(([loopName, loop]) => {
      const family = `${shapeName}, ${loopName}`;
      const largest = largestSavable((n) => loop.wrap((x) => shape(x, n)));
      return largest ? [{ name: family.replace(/\bn\b/, String(largest.n)), family, condition: largest.condition, claims: loop.claims(audience) }] : [];
    }),
  );
}
