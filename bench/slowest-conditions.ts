/**
 * The slowest conditions found that the save-time bound still admits, each with the claims of a
 * subject token (at most 16 KB, SPEC 8) that make it slowest: what one exchange can be made to
 * spend on a condition. Built from what costs most per work unit (bench/condition.bench.ts,
 * "Calibration"): substring searches, errors quoting a long source, case changes of characters
 * that change length, and many cheap steps in a loop. condition.bench.ts times their evaluation
 * and token-exchange.bench.ts whole exchanges with them, beside a plain one.
 */

export interface SlowCondition {
  name: string;
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
      name: 'three lastIndexOf of subject in token_type',
      condition: thenTrue(['', ' + "x"', ' + "y"'].map((suffix) => `token_type.lastIndexOf(subject${suffix}) >= 0`).join(' || ')),
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
  ];
}
